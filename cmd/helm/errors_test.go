package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorsEscapeHostileText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("errors")
	r := h.fails(1, "observe", "directory-tree", "no\x1b[2Ksuch")
	assertNoRaw(t, "error", r.Stderr)
	assert.Contains(t, r.Stderr, `no\x1b[2Ksuch`)
}

// TestReportErrorOnInterrupt: a command a signal interrupted is one line.
func TestReportErrorOnInterrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"cancelled", &interruptedError{Err: errors.Join(errors.New("observe Command: sleep 100"), context.Canceled)}, "helm: interrupted\n"},
		{"failed as it was interrupted", &interruptedError{Err: errors.New("push failed: signal: killed")}, "helm: interrupted: push failed: signal: killed\n"},
		{"hints are left out", &interruptedError{Err: &usageError{Err: context.Canceled, Hint: "helm --help"}}, "helm: interrupted\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			assert.Equal(t, 130, ReportError(&buf, tt.err))
			assert.Equal(t, tt.want, buf.String())
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	assert.Equal(t, context.Canceled, interrupted(ctx, context.Canceled), "no signal: not interrupted")
	cancel()
	assert.NoError(t, interrupted(ctx, nil), "a command that ended well despite the signal succeeded")
}

// TestJSONErrorsAreOneObjectOnStderr: under --json, wherever the flag
// stands and whatever failed (bad usage found before the flags are all
// parsed, a voyage not found, an observation that failed, a search with
// no match), stderr is one JSON object with error and exit_status, and
// try when there is something to do: the shape of the MCP server's
// errors. (A warning before it, such as search's about its index, stays a
// "helm: ..." line: the object is the last line.)
func TestJSONErrorsAreOneObjectOnStderr(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("json errors")
	tests := []struct {
		name     string
		args     []string
		code     int
		error    string // a part of it
		try      string
		failures int
	}{
		{name: "unknown flag", args: []string{"log", "--json", "--colour"}, code: 2, error: "unknown flag: --colour", try: "helm log --help"},
		{name: "json flag first", args: []string{"--json", "--voyage", "ffff", "log"}, code: 2, error: "ffff", try: "helm voyage list"},
		{name: "failed observation", args: []string{"observe", "file-contents", "--read", "gone.txt", "--json"}, code: 3, error: "observed, but", failures: 1},
		{name: "search without a match", args: []string{"search", "--json", "kraken"}, code: 1, error: "search: no entry matches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.run(tt.args...)
			require.Equal(t, tt.code, r.Code, "%s", r)
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(last), &obj), "the error is one JSON object on one line: %q", r.Stderr)
			for _, l := range lines[:len(lines)-1] {
				assert.True(t, strings.HasPrefix(l, "helm: ") || strings.HasPrefix(l, "Try: "), "only warnings before it: %q", l)
			}
			assert.Contains(t, obj["error"], tt.error)
			assert.Equal(t, float64(tt.code), obj["exit_status"])
			if tt.try != "" {
				assert.Contains(t, obj["try"], tt.try)
			} else {
				assert.NotContains(t, obj, "try")
			}
			if tt.failures > 0 {
				assert.Len(t, obj["failures"], tt.failures)
			}
		})
	}
}
