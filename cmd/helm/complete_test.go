package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
)

func TestComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    string
		outcome logbook.Outcome
	}{
		{"default", []string{"--summary", "Fixed null check in widget init. PR #45 merged."},
			"Voyage a3b00001 completed\nHead:    <head>\nSummary: Fixed null check in widget init. PR #45 merged.\n", logbook.OutcomeCompleted},
		{"blocked", []string{"--outcome", "blocked", "--summary", "Waiting on upstream."},
			"Voyage a3b00001 is blocked (helm voyage resume continues it)\nHead:    <head>\nSummary: Waiting on upstream.\n", logbook.OutcomeBlocked},
		{"failed", []string{"--outcome", "failed", "--summary", "x"}, "Voyage a3b00001 completed: failed\nHead:    <head>\nSummary: x\n", logbook.OutcomeFailed},
		{"partial", []string{"--outcome", "partial", "--summary", "x"}, "Voyage a3b00001 is partial (helm voyage resume continues it)\nHead:    <head>\nSummary: x\n", logbook.OutcomePartial},
		{"cancelled", []string{"--outcome", "cancelled", "--summary", "x"}, "Voyage a3b00001 completed: cancelled\nHead:    <head>\nSummary: x\n", logbook.OutcomeCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.start("complete")
			h.at(30)
			out := h.ok(append([]string{"complete"}, tt.args...)...)
			assert.Equal(t, strings.ReplaceAll(tt.want, "<head>", headOf(t, h, id).String()), out, "the head after the completion")
			var v helm.VoyageInfo
			require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", string(tt.outcome), "--json")), &[]*helm.VoyageInfo{&v}))
			assert.Equal(t, id, v.ID)
			assert.Equal(t, tt.outcome, v.Outcome)
			assert.Equal(t, logbook.Status(tt.outcome), v.Status)
			assert.Equal(t, "2026-02-26T17:30:00Z", stamp(v.CompletedAt))

			if v.Status.Resumable() {
				// Paused: changes wait for a resume; it may still be ended for good.
				r := h.fails(2, "note", "more")
				assert.Contains(t, r.Stderr, "is "+string(v.Status)+": helm --voyage a3b00001 voyage resume, to go on with it")
				r = h.fails(1, "--voyage", id, "note", "more")
				assert.Contains(t, r.Stderr, "voyage is paused")
				assert.Contains(t, r.Stderr, "resume it first")
				assert.Contains(t, h.ok("complete", "--outcome", "cancelled", "--summary", "dropped"), "completed: cancelled")
			}
			r := h.fails(1, "--voyage", id, "complete", "--summary", "again")
			assert.Contains(t, r.Stderr, "voyage is completed")
		})
	}
}

func TestCompleteUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("complete")
	assert.Contains(t, h.fails(2, "complete", "--outcome", "sunk").Stderr, `outcome "sunk"`)
	assert.Contains(t, h.fails(2, "complete", "unquoted", "summary").Stderr, "quote the summary")
	assert.Contains(t, h.fails(2, "complete", "--summary", " ").Stderr, "--summary is empty")
	r := h.fails(2, "complete", "--outcome", "blocked")
	assert.Contains(t, r.Stderr, "helm: complete: no summary for voyage a3b00001")
	assert.Contains(t, r.Stderr, "standard input is not a terminal")
	assert.Contains(t, r.Stderr, "\nTry: helm complete --outcome blocked --summary \"TEXT\"\n")
	var v struct {
		helm.VoyageInfo
		Head chain.Head `json:"head"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("complete", "--json", "--summary", "done")), &v))
	assert.Equal(t, logbook.StatusCompleted, v.Status)
	assert.Equal(t, "done", v.Summary)
	assert.Equal(t, headOf(t, h, v.ID), v.Head, "the head after the completion")
}

// TestDevNullIsNoTerminal: /dev/null is a character device, but nobody
// types on it: complete run with stdin from /dev/null is refused, not
// prompted. (The prompt on a real terminal is in
// testdata/script/complete_summary.txtar.)
func TestDevNullIsNoTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f))
	assert.False(t, isTerminal(strings.NewReader("a summary\n")))

	h := newHarness(t)
	h.start("stdin from /dev/null")
	var stdout, stderr bytes.Buffer
	err = h.main().Run(context.Background(), []string{"complete"}, f, &stdout, &stderr)
	assert.Equal(t, 2, ExitCode(err))
	assert.ErrorContains(t, err, "standard input is not a terminal")
	assert.Empty(t, stderr.String(), "no prompt")
}
