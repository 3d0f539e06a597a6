package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/transcript"
)

// TestStatsSayWhatAgentsReported: steps an agent host reported (a prompt,
// a call that ran, a denied call, a failed one) are summed in helm stats,
// tokens and dollars included, in text and in --json; a voyage without
// steps prints no agent lines.
func TestStatsSayWhatAgentsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("Tidy the notes")
	plain := h.ok("stats", id)
	assert.NotContains(t, plain, "Agent steps:", "no steps, no agent lines")

	ctx := context.Background()
	home, err := helm.Open(h.Home, h.main().Options)
	require.NoError(t, err)
	v, err := home.Voyage(ctx, id)
	require.NoError(t, err)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "claude-code"}
	usage := &logbook.Usage{Model: "claude-x", InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 800, CacheWriteTokens: 50, CostUSD: 0.0125, Duration: 1500 * time.Millisecond}
	steps := []logbook.Step{
		{Kind: logbook.StepPrompt, Agent: "claude-code", Session: "s1", Text: "tidy the notes"},
		{Kind: logbook.StepTool, Agent: "claude-code", Session: "s1", ID: "t1", Tool: "Bash", Text: "ls", Input: json.RawMessage(`{"command":"ls"}`), Decision: &logbook.StepDecision{Verdict: "allow"}},
		{Kind: logbook.StepTool, Agent: "claude-code", Session: "s1", ID: "t1", Tool: "Bash", Result: &logbook.StepResult{Output: "notes.md"}, Usage: usage},
		{Kind: logbook.StepTool, Agent: "claude-code", Session: "s1", ID: "t2", Tool: "Bash", Text: "rm -r -f victim", Input: json.RawMessage(`{"command":"rm -r -f victim"}`), Decision: &logbook.StepDecision{Verdict: "deny", Rule: `"no-rm-rf" (policy.toml:1)`, Reason: "no"}},
		{Kind: logbook.StepTool, Agent: "claude-code", Session: "s1", ID: "t3", Tool: "Bash", Text: "false", Input: json.RawMessage(`{"command":"false"}`)},
		{Kind: logbook.StepTool, Agent: "claude-code", Session: "s1", ID: "t3", Tool: "Bash", Result: &logbook.StepResult{Failed: true}, Usage: usage},
	}
	for _, s := range steps {
		_, err := v.Step(ctx, s, who)
		require.NoError(t, err, "step %+v", s)
	}
	require.NoError(t, v.Close())

	out := h.ok("stats", id)
	assert.Contains(t, out, "  Agent steps:     1 prompt, 3 tool calls (1 denied, 1 failed)\n")
	assert.Contains(t, out, "  Tokens:          2400 in, 68 out, 1600 cache read, 100 cache written; $0.0250; model time 3s\n")

	var js []transcript.Stats
	require.NoError(t, json.Unmarshal([]byte(h.ok("stats", id, "--json")), &js))
	require.Len(t, js, 1)
	ag := js[0].Agents
	assert.Equal(t, 3, ag.ToolCalls)
	assert.Equal(t, 1, ag.DeniedCalls)
	assert.Equal(t, int64(2400), ag.InputTokens)
	assert.InDelta(t, 0.025, ag.CostUSD, 1e-9)
}
