//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runOnTerminal runs helm with its standard output on a pseudo-terminal
// and returns what the terminal showed, and the exit status.
func runOnTerminal(t *testing.T, h *harness, env map[string]string, args ...string) (string, int) {
	t.Helper()
	controller, terminal := openPTY(t)
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&shown, controller) // ends with EIO once the terminal side is closed
	}()
	m := h.main()
	m.Getenv = func(k string) string { return env[k] }
	var stderr bytes.Buffer
	code := ReportError(&stderr, m.Run(context.Background(), args, nil, terminal, &stderr))
	require.NoError(t, terminal.Close())
	<-done
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	return shown.String(), code
}

// TestLogOnATerminalIsPagedColouredAndRelative: on a terminal, helm log
// goes through the pager, its headings are coloured and its times read
// "2 minutes ago", as git log and gh do; NO_COLOR, --no-pager, PAGER=cat,
// --absolute and --follow each turn off what they name, and nothing else.
func TestLogOnATerminalIsPagedColouredAndRelative(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("Resolve #42: fix widget crash")
	h.at(1)
	h.ok("observe", "context", "the user says it crashes")
	h.ok("bearing", "--reading", "Widget module has a null check missing in init().")
	h.at(3)
	pager := "sed 's/^/paged: /'"

	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		paged    bool
		coloured bool
		relative bool
	}{
		{name: "a terminal", env: map[string]string{"HELM_PAGER": pager}, paged: true, coloured: true, relative: true},
		{name: "PAGER when HELM_PAGER is not set", env: map[string]string{"PAGER": pager}, paged: true, coloured: true, relative: true},
		{name: "HELM_PAGER before PAGER", env: map[string]string{"HELM_PAGER": pager, "PAGER": "false"}, paged: true, coloured: true, relative: true},
		{name: "NO_COLOR", env: map[string]string{"HELM_PAGER": pager, "NO_COLOR": "1"}, paged: true, relative: true},
		{name: "TERM dumb", env: map[string]string{"HELM_PAGER": pager, "TERM": "dumb"}, paged: true, relative: true},
		{name: "no pager", env: map[string]string{"HELM_PAGER": pager}, args: []string{"--no-pager"}, coloured: true, relative: true},
		{name: "PAGER cat", env: map[string]string{"PAGER": "cat"}, coloured: true, relative: true},
		{name: "a pager not installed", env: map[string]string{"HELM_PAGER": "no-such-pager-here -R"}, coloured: true, relative: true},
		{name: "absolute times", env: map[string]string{"HELM_PAGER": pager}, args: []string{"--absolute"}, paged: true, coloured: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := maps.Clone(h.Env)
			maps.Copy(env, tt.env)
			got, _ := runOnTerminal(t, h, env, append([]string{"log"}, tt.args...)...)
			t.Logf("the terminal showed:\n%s", got)
			assert.Contains(t, got, "Reading: Widget module has a null check missing in init().", "the story is told")
			if tt.paged {
				assert.Contains(t, got, "paged: Identity: john-agent")
			} else {
				assert.NotContains(t, got, "paged:")
			}
			if tt.coloured {
				assert.Contains(t, got, "\x1b[33m── Bearing 1 ──\x1b[0m")
			} else {
				assert.NotContains(t, got, "\x1b[")
			}
			if tt.relative {
				assert.Regexp(t, `──(\x1b\[0m)? 2 minutes ago`, got)
				assert.Contains(t, got, "Created: 3 minutes ago")
				assert.NotContains(t, got, "2026-02-26T17:01:00Z")
			} else {
				assert.Regexp(t, `──(\x1b\[0m)? 2026-02-26T17:01:00Z`, got)
			}
		})
	}
}

// TestLogFollowNeverPages: --follow prints entries as they come, which a
// pager would hold back.
func TestLogFollowNeverPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("followed")
	h.ok("complete", "--summary", "Done.")
	env := maps.Clone(h.Env)
	env["HELM_PAGER"] = "sed 's/^/paged: /'"
	got, _ := runOnTerminal(t, h, env, "--voyage", id, "log", "--follow")
	assert.Contains(t, got, "Voyage: followed")
	assert.NotContains(t, got, "paged:")
}

// TestLongObservationShowsProgressOnATerminalOnly: a file-contents look
// says it is under way on stderr when that is a terminal, on a line it
// erases when done; a pipe gets nothing of it.
func TestLongObservationShowsProgressOnATerminalOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("look")
	h.writeFile("big.txt", strings.Repeat("quagga\n", 1<<16))

	controller, terminal := openPTY(t)
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&shown, controller)
	}()
	var stdout bytes.Buffer
	err := h.main().Run(context.Background(), []string{"observe", "file-contents", "--read", "big.txt"}, nil, &stdout, terminal)
	code := ReportError(terminal, err)
	require.NoError(t, terminal.Close())
	<-done
	require.Equal(t, 0, code, "%s", shown.String())
	got := shown.String()
	t.Logf("the terminal showed: %q", got)
	start := strings.Index(got, "\r\x1b[Khelm: observing file-contents ")
	require.GreaterOrEqual(t, start, 0, "the progress line is shown")
	assert.True(t, strings.HasSuffix(got, "\r\x1b[K"), "and erased at the end")
	assert.Contains(t, stdout.String(), "Observed FileContents: big.txt")

	r := h.run("observe", "file-contents", "--read", "big.txt")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Empty(t, r.Stderr, "a pipe gets no progress")
}

// TestSightingShowIsPagedOnATerminal: another long output goes through
// the pager on a terminal, and not with --no-pager.
func TestSightingShowIsPagedOnATerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("look")
	h.ok("observe", "context", "hello")
	env := maps.Clone(h.Env)
	env["HELM_PAGER"] = "sed 's/^/paged: /'"
	got, _ := runOnTerminal(t, h, env, "sighting", "show", "context:hello")
	assert.Contains(t, got, "paged: ")
	assert.Contains(t, got, "hello")
	got, _ = runOnTerminal(t, h, env, "--no-pager", "sighting", "show", "context:hello")
	assert.NotContains(t, got, "paged: ")
	assert.Contains(t, got, "hello")
}
