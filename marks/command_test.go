package marks_test

import (
	"context"
	"errors"
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
	t.Run("the default timeout is recorded", func(t *testing.T) {
		got := runCommand(t, nil, "", "true")
		assert.Equal(t, marks.DefaultCommandTimeout.Milliseconds(), got.TimeoutMS)
	})
	t.Run("killed by a signal", func(t *testing.T) {
		got := runCommand(t, nil, "", "sh", "-c", "kill -KILL $$")
		assert.Nil(t, got.ExitCode)
		assert.False(t, got.TimedOut)
		assert.Equal(t, "killed", got.Signal)
		assert.Equal(t, "signal: killed", got.Error)
	})
	t.Run("a directory that is not there", func(t *testing.T) {
		got := runCommand(t, &marks.Env{Dir: dir}, "no-such-dir", "true")
		assert.Nil(t, got.ExitCode)
		assert.Equal(t, "no-such-dir", got.Dir)
		assert.Equal(t, "no such file or directory", got.DirError)
		assert.Equal(t, "directory no-such-dir: no such file or directory", got.Error)
		got = runCommand(t, &marks.Env{Dir: dir}, "sub/marker.txt", "true")
		assert.Equal(t, "not a directory", got.DirError)
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
		assert.Equal(t, int64(200), got.TimeoutMS, "the timeout is recorded with the sighting")
		assert.Empty(t, got.Signal, "the timeout's kill is the timeout, not a signal")
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

// TestCommandCopiesOutputToProgress: with Env.Progress, both streams are
// copied there as they come, and still captured apart.
func TestCommandCopiesOutputToProgress(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	var progress strings.Builder
	got := runCommand(t, &marks.Env{Progress: &progress}, "", "sh", "-c", "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three")
	assert.Equal(t, "one\nthree\n", got.Stdout)
	assert.Equal(t, "two\n", got.Stderr)
	assert.Equal(t, "one\ntwo\nthree\n", progress.String(), "interleaved in the order written")

	// A progress writer that fails is given up on; the program and its
	// capture carry on.
	got = runCommand(t, &marks.Env{Progress: failingWriter{}}, "", "sh", "-c", "echo one; echo two")
	assert.Equal(t, ptr(0), got.ExitCode)
	assert.Equal(t, "one\ntwo\n", got.Stdout)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

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

// TestCommandLeavesSecretLookingVariablesOut plants credentials in the
// process's environment, as an agent's host or a CI job does, and has the
// program print its whole environment: neither their names nor their
// values reach it, what a build needs does, and a name Env.PassEnv gives
// is passed. Not parallel: it sets the process's environment.
func TestCommandLeavesSecretLookingVariablesOut(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	planted := map[string]string{
		"GH_TOKEN":              "ghp_plantedGHtoken0123456789abcdefghijk",
		"GH_ENTERPRISE_TOKEN":   "planted-enterprise-token-value",
		"AWS_SECRET_ACCESS_KEY": "plantedAWSsecretAccessKey0123456789",
		"MY_API_KEY":            "planted-my-api-key-value",
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	t.Setenv("HELM_TEST_PLAIN", "plain-value")

	tests := []struct {
		name   string
		pass   []string
		passed string // the one planted name the program gets
	}{
		{name: "by default every secret-looking name is left out"},
		{name: "a name PassEnv gives is passed", pass: []string{"MY_API_KEY"}, passed: "MY_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runCommand(t, &marks.Env{PassEnv: tt.pass}, "", "sh", "-c", "env")
			require.Equal(t, ptr(0), got.ExitCode, got.Stderr)
			for k, v := range planted {
				if k == tt.passed {
					assert.Contains(t, got.Stdout, k+"="+v)
					continue
				}
				assert.NotContains(t, got.Stdout, k)
				assert.NotContains(t, got.Stdout, v)
			}
			assert.Contains(t, got.Stdout, "PATH="+os.Getenv("PATH"))
			assert.Contains(t, got.Stdout, "HELM_TEST_PLAIN=plain-value")
		})
	}
}
