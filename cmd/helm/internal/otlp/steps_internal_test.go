package otlp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// session is a Claude Code session as its voyage's entries read: a
// prompt, a Bash call allowed and run (with the model's usage), an rm -rf
// denied by a rule, and a subagent whose own tool call is in its
// sub-voyage. It is built as the entries Voyage.Entries yields, so that
// the builder is checked on entries alone (otlp_test.go records a session
// through Voyage.Step and pins it in testdata/session.otlp.json).
func session() *crew {
	at := func(min, sec int) time.Time { return time.Date(2026, 2, 26, 17, min, sec, 0, time.UTC) }
	agent := logbook.Who{Identity: "john", Role: "coder", Method: "claude-code"}
	const (
		id  = "a3b0fc12-0000-4000-8000-000000000001"
		sub = "a3b0fc12-0000-4000-8000-000000000002"
	)
	step := func(n int, t time.Time, s logbook.Step) logbook.Entry {
		s.Agent, s.Session = "claude-code", "9f6c2d1e-session"
		return logbook.Entry{N: n, Seq: uint64(n + 1), Kind: logbook.EntryStep, At: t, Who: agent, Step: &s}
	}
	usage := &logbook.Usage{Model: "claude-sonnet-4-5", InputTokens: 12, OutputTokens: 85, CacheReadTokens: 14000, CacheWriteTokens: 900, CostUSD: 0.0123, Duration: 2400 * time.Millisecond}
	return &crew{
		info: helm.VoyageInfo{
			ID: id, Intent: "Fix the flaky widget test", Kind: helm.OpenWaters, Identity: "john",
			Created: at(0, 0), Status: logbook.StatusPartial, Outcome: logbook.OutcomePartial,
			Summary: "session ended: logout", CompletedAt: at(5, 0), LastAt: at(5, 0), Seq: 9,
			Lifecycle: []helm.Transition{
				{Status: logbook.StatusActive, At: at(0, 0), Who: agent},
				{Status: logbook.StatusPartial, At: at(5, 0), Who: agent, Reason: "session ended: logout"},
			},
		},
		head: "9:" + "5e" + string(bytes.Repeat([]byte("0"), 62)),
		entries: []logbook.Entry{
			step(1, at(0, 5), logbook.Step{Kind: logbook.StepPrompt, ID: "prompt-1", Text: "Make TestWidget pass reliably."}),
			step(2, at(0, 20), logbook.Step{
				Kind: logbook.StepTool, ID: "toolu_01Bash", Tool: "Bash",
				Input:    json.RawMessage(`{"command":"go test ./widget/..."}`),
				Text:     "go test ./widget/...",
				Decision: &logbook.StepDecision{Verdict: "allow"},
				Result:   &logbook.StepResult{Output: "ok  \twidget\t0.41s", Duration: 3500 * time.Millisecond},
				Usage:    usage,
			}),
			step(3, at(1, 0), logbook.Step{
				Kind: logbook.StepTool, ID: "toolu_02Rm", Tool: "Bash",
				Input:    json.RawMessage(`{"command":"rm -r -f build"}`),
				Text:     "rm -r -f build",
				Decision: &logbook.StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:3)`, Reason: "recursive deletes need a person"},
			}),
			step(4, at(2, 0), logbook.Step{Kind: logbook.StepSubagent, ID: "agent-1", Text: "Explore", Voyage: sub}),
			step(5, at(3, 0), logbook.Step{
				Kind: logbook.StepTool, ID: "toolu_03Edit", Tool: "Edit",
				Text:   "--- a/widget_test.go\n+++ b/widget_test.go\n@@ -1 +1 @@\n-time.Sleep(10)\n+waitFor(ready)\n",
				Result: &logbook.StepResult{Failed: true, Output: "old_string not found", Duration: 40 * time.Millisecond},
			}),
			step(6, at(4, 0), logbook.Step{Kind: logbook.StepMessage, Text: "The test waits for readiness now.", Usage: &logbook.Usage{Model: "claude-sonnet-4-5", InputTokens: 30, OutputTokens: 12}}),
		},
		subs: []*crew{{
			info: helm.VoyageInfo{
				ID: sub, Intent: "Explore: find the flaky wait", Kind: helm.OpenWaters, Identity: "john", Parent: id,
				Created: at(2, 0), Status: logbook.StatusCompleted, Outcome: logbook.OutcomeCompleted,
				Summary: "found it", CompletedAt: at(2, 50), LastAt: at(2, 50), Seq: 4,
				Lifecycle: []helm.Transition{
					{Status: logbook.StatusActive, At: at(2, 0), Who: agent},
					{Status: logbook.StatusCompleted, At: at(2, 50), Who: agent, Reason: "found it"},
				},
			},
			entries: []logbook.Entry{
				step(1, at(2, 10), logbook.Step{
					Kind: logbook.StepTool, ID: "toolu_04Grep", Tool: "Grep", Text: "time.Sleep",
					Decision: &logbook.StepDecision{Verdict: "allow"},
					Result:   &logbook.StepResult{Output: "widget_test.go:1", Duration: 120 * time.Millisecond},
					Usage:    &logbook.Usage{Model: "claude-haiku-4-5", InputTokens: 400, OutputTokens: 20},
				}),
			},
		}},
	}
}

// byName indexes the spans of td by name (names are unique in session).
func byName(t *testing.T, trace *Traces) map[string]ptrace.Span {
	t.Helper()
	td := Pdata(t, trace)
	out := map[string]ptrace.Span{}
	for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
		key := sp.Name()
		if v, ok := sp.Attributes().Get("gen_ai.tool.call.id"); ok {
			key += " " + v.Str()
		}
		require.NotContains(t, out, key)
		out[key] = sp
	}
	return out
}

func attrOf(sp ptrace.Span, k string) any {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return nil
	}
	return v.AsRaw()
}

func TestToolStepsCarryGenAIAttributes(t *testing.T) {
	t.Parallel()
	s := byName(t, build(session(), nil))
	bash := s["execute_tool Bash toolu_01Bash"]
	tests := []struct {
		name string
		span ptrace.Span
		key  string
		want any
	}{
		{name: "operation", span: bash, key: "gen_ai.operation.name", want: "execute_tool"},
		{name: "tool name", span: bash, key: "gen_ai.tool.name", want: "Bash"},
		{name: "call id", span: bash, key: "gen_ai.tool.call.id", want: "toolu_01Bash"},
		{name: "verdict", span: bash, key: "helm.guard.verdict", want: "allow"},
		{name: "model", span: bash, key: "gen_ai.request.model", want: "claude-sonnet-4-5"},
		{name: "response model", span: bash, key: "gen_ai.response.model", want: "claude-sonnet-4-5"},
		{name: "provider of a claude model in claude-code", span: bash, key: "gen_ai.provider.name", want: "anthropic"},
		{name: "input tokens count the cache's", span: bash, key: "gen_ai.usage.input_tokens", want: int64(12 + 14000 + 900)},
		{name: "output tokens", span: bash, key: "gen_ai.usage.output_tokens", want: int64(85)},
		{name: "cache read", span: bash, key: "gen_ai.usage.cache_read.input_tokens", want: int64(14000)},
		{name: "cache write", span: bash, key: "gen_ai.usage.cache_creation.input_tokens", want: int64(900)},
		{name: "cost", span: bash, key: "helm.usage.cost_usd", want: 0.0123},
		{name: "session", span: bash, key: "gen_ai.conversation.id", want: "9f6c2d1e-session"},
		{name: "denied verdict", span: s["execute_tool Bash toolu_02Rm"], key: "helm.guard.verdict", want: "deny"},
		{name: "denying rule", span: s["execute_tool Bash toolu_02Rm"], key: "helm.guard.rule", want: `"no rm -rf" (policy.toml:3)`},
		{name: "denial reason", span: s["execute_tool Bash toolu_02Rm"], key: "helm.guard.reason", want: "recursive deletes need a person"},
		{name: "no usage, no tokens", span: s["execute_tool Bash toolu_02Rm"], key: "gen_ai.usage.input_tokens", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, attrOf(tt.span, tt.key))
		})
	}
}

func TestToolSpansLastAsLongAsTheirResultSays(t *testing.T) {
	t.Parallel()
	s := byName(t, build(session(), nil))
	bash := s["execute_tool Bash toolu_01Bash"]
	assert.Equal(t, 3500*time.Millisecond, bash.EndTimestamp().AsTime().Sub(bash.StartTimestamp().AsTime()))
	denied := s["execute_tool Bash toolu_02Rm"]
	assert.Equal(t, denied.StartTimestamp(), denied.EndTimestamp(), "a denied call never ran")
	assert.Equal(t, ptrace.StatusCodeUnset, denied.Status().Code(), "a denial is the guard's decision, not an error")
	edit := s["execute_tool Edit toolu_03Edit"]
	assert.Equal(t, ptrace.StatusCodeError, edit.Status().Code(), "a failed call is an error")
}

func TestASubVoyageIsAChildOfTheSubagentStepThatOpenedIt(t *testing.T) {
	t.Parallel()
	s := byName(t, build(session(), nil))
	root := s["voyage Fix the flaky widget test"]
	step := s["subagent Explore"]
	sub := s["voyage Explore: find the flaky wait"]
	grep := s["execute_tool Grep toolu_04Grep"]
	assert.Equal(t, root.SpanID(), step.ParentSpanID())
	assert.Equal(t, step.SpanID(), sub.ParentSpanID(), "under the step that opened it")
	assert.Equal(t, sub.SpanID(), grep.ParentSpanID(), "the subagent's calls are in its sub-voyage")
	assert.Equal(t, root.TraceID(), grep.TraceID())
	assert.Equal(t, "claude-haiku-4-5", attrOf(grep, "gen_ai.request.model"))
	assert.Equal(t, ptrace.StatusCodeUnset, root.Status().Code(), "a partial voyage is neither ok nor an error")
}

func TestProviderIsNamedOnlyWhenHostAndModelAgree(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, agent, model, want string }{
		{name: "claude in claude-code", agent: "claude-code", model: "claude-opus-4-1", want: "anthropic"},
		{name: "claude spelt otherwise", agent: "claude-code", model: "Claude-Sonnet", want: "anthropic"},
		{name: "another model in claude-code", agent: "claude-code", model: "qwen3-coder", want: ""},
		{name: "gemini in gemini", agent: "gemini", model: "gemini-2.5-pro", want: "gcp.gemini"},
		{name: "an unknown host", agent: "codex", model: "claude-opus-4", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, provider(tt.agent, tt.model))
		})
	}
}
