package marks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

func runCommand(t *testing.T, env *marks.Env, dir string, argv ...string) *sighting.Command {
	t.Helper()
	m, err := marks.NewCommand(dir, argv...)
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), env)
	require.NoError(t, err)
	return s.(*sighting.Command)
}

func TestCommandRecordsExitOutputAndFailures(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	tree(t, dir, map[string]string{"sub/marker.txt": "in sub"})

	t.Run("success", func(t *testing.T) {
		got := runCommand(t, nil, "", "sh", "-c", "echo out; echo err >&2")
		assert.Equal(t, ptr(0), got.ExitCode)
		assert.Equal(t, "out\n", got.Stdout)
		assert.Equal(t, "err\n", got.Stderr)
		assert.Empty(t, got.Error)
		assert.False(t, got.TimedOut)
	})
	t.Run("non-zero exit is an observation", func(t *testing.T) {
		got := runCommand(t, nil, "", "sh", "-c", "exit 3")
		assert.Equal(t, ptr(3), got.ExitCode)
		assert.Empty(t, got.Error)
	})
	t.Run("dir resolves against Env.Dir", func(t *testing.T) {
		got := runCommand(t, &marks.Env{Dir: dir}, "sub", "cat", "marker.txt")
		assert.Equal(t, "in sub", got.Stdout)
	})
	t.Run("program that cannot start", func(t *testing.T) {
		got := runCommand(t, nil, "", "helm-no-such-program-xyz")
		assert.Nil(t, got.ExitCode)
		assert.Contains(t, got.Error, "executable file not found")
	})
	t.Run("timeout kills the process group", func(t *testing.T) {
		start := time.Now()
		got := runCommand(t, &marks.Env{CommandTimeout: 200 * time.Millisecond}, "", "sh", "-c", "sleep 30; echo never")
		assert.True(t, got.TimedOut)
		assert.Nil(t, got.ExitCode)
		assert.Empty(t, got.Stdout)
		assert.Less(t, time.Since(start), 20*time.Second, "the sleeping child must not hold the observation")
	})
	t.Run("output beyond the cap keeps head and tail", func(t *testing.T) {
		script := filepath.Join(dir, "big.sh")
		// 3 MiB of "x", framed by markers, on stdout.
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho BEGIN\nhead -c 3145728 /dev/zero | tr '\\0' x\necho\necho END\n"), 0o755))
		got := runCommand(t, nil, "", "sh", script)
		assert.True(t, strings.HasPrefix(got.Stdout, "BEGIN\n"))
		assert.True(t, strings.HasSuffix(got.Stdout, "\nEND\n"))
		assert.Contains(t, got.Stdout, "… [truncated ")
		total := int64(len("BEGIN\n") + 3145728 + len("\nEND\n"))
		assert.Equal(t, total-marks.CommandOutputCap, got.StdoutTruncatedBytes)
		assert.Less(t, len(got.Stdout), marks.CommandOutputCap+100)
	})
	t.Run("cancelled context is an error", func(t *testing.T) {
		m, err := marks.NewCommand("", "sleep", "10")
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = m.Observe(ctx, nil)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestNewCommandValidates(t *testing.T) {
	_, err := marks.NewCommand("")
	assert.ErrorIs(t, err, marks.ErrInvalid)
	_, err = marks.NewCommand("", "")
	assert.ErrorIs(t, err, marks.ErrInvalid)
	_, err = marks.NewCommand("", "echo", "a\x00b")
	assert.ErrorIs(t, err, marks.ErrInvalid)
	m, err := marks.NewCommand("./sub/", "go", "test", "./...")
	require.NoError(t, err)
	assert.Equal(t, &marks.Command{Dir: "sub", Program: "go", Args: []string{"test", "./..."}}, m)
}

func TestContextEchoesDescription(t *testing.T) {
	m, err := marks.NewContext("  Decided on a call: ship v2 first.  ")
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, &sighting.Context{Description: "Decided on a call: ship v2 first."}, s)

	_, err = marks.NewContext(" \n ")
	assert.ErrorIs(t, err, marks.ErrInvalid)
}
