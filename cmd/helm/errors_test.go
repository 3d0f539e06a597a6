package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
