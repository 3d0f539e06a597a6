package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

func TestComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    string
		outcome helm.Outcome
	}{
		{"default", nil, "Voyage a3b00001 completed\n", helm.OutcomeCompleted},
		{"summary", []string{"--summary", "Fixed null check in widget init. PR #45 merged."},
			"Voyage a3b00001 completed\nSummary: Fixed null check in widget init. PR #45 merged.\n", helm.OutcomeCompleted},
		{"blocked", []string{"--outcome", "blocked", "--summary", "Waiting on upstream."},
			"Voyage a3b00001 completed: blocked\nSummary: Waiting on upstream.\n", helm.OutcomeBlocked},
		{"failed", []string{"--outcome", "failed"}, "Voyage a3b00001 completed: failed\n", helm.OutcomeFailed},
		{"partial", []string{"--outcome", "partial"}, "Voyage a3b00001 completed: partial\n", helm.OutcomePartial},
		{"cancelled", []string{"--outcome", "cancelled"}, "Voyage a3b00001 completed: cancelled\n", helm.OutcomeCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.start("complete")
			h.at(30)
			assert.Equal(t, tt.want, h.ok(append([]string{"complete"}, tt.args...)...))
			var v helm.VoyageInfo
			require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "completed", "--json")), &[]*helm.VoyageInfo{&v}))
			assert.Equal(t, id, v.ID)
			assert.Equal(t, tt.outcome, v.Outcome)
			assert.Equal(t, "2026-02-26T17:30:00Z", stamp(v.CompletedAt))

			r := h.fails(1, "--voyage", id, "complete")
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
	var v helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok("complete", "--json", "--summary", "done")), &v))
	assert.Equal(t, helm.StatusCompleted, v.Status)
	assert.Equal(t, "done", v.Summary)
}
