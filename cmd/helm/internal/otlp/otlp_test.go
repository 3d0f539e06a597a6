package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/otlp"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
)

// commit stands in for a commit: it leaves abc1234 and touches nothing.
type commit struct {
	Message string `json:"message"`
}

func (*commit) Kind() string { return "commit" }
func (*commit) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

// push stands in for a push the remote refuses.
type push struct {
	Branch string `json:"branch"`
}

func (*push) Kind() string { return "push" }
func (*push) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{}, errors.New("git push: rejected (non-fast-forward)")
}

var (
	coder    = logbook.Who{Identity: "john-agent", Role: "coder", Method: "claude-opus-4"}
	reviewer = logbook.Who{Identity: "ann", Role: "reviewer", Method: "human"}
)

// crewHome records, on a fixed clock (one minute a tick) with fixed ids,
// a voyage with a bearing, a note, a performed and a failed action, a
// judgement citing them, and a sub-voyage with a note of its own; and
// returns the home and the voyage.
func crewHome(t *testing.T) (*helm.Home, *helm.Voyage) {
	t.Helper()
	ctx := context.Background()
	opts := replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
	opts.NoSync = true
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, coder, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	m, err := marks.NewContext("init() dereferences a nil config")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m, coder, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", coder, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "Asking a reviewer to look at the fix.", coder)
	require.NoError(t, err)
	sub, err := h.Start(ctx, "Review the fix", helm.OpenWaters, reviewer, &helm.StartOptions{Parent: v.ID()})
	require.NoError(t, err)
	_, err = sub.Note(ctx, "The null check reads well.", reviewer)
	require.NoError(t, err)
	require.NoError(t, sub.Complete(ctx, logbook.OutcomeCompleted, "Approved.", reviewer))
	require.NoError(t, sub.Close())
	_, err = v.Perform(ctx, &commit{Message: "Fix null check in widget init"}, coder, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &push{Branch: "fix-42"}, coder, nil)
	require.Error(t, err)
	_, err = v.Judge(ctx, logbook.Judgement{Score: 7, Dimension: "correctness", Evidence: []int{1, 3}, Text: "The fix holds; the push did not."}, reviewer)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeFailed, "Fixed but not pushed.", coder))
	return h, v
}

// golden compares td, as indented OTLP/JSON, with testdata/NAME.
func golden(t *testing.T, name string, td *otlp.Traces) {
	t.Helper()
	otlp.Pdata(t, td)
	line, err := otlp.JSON(td)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(line, []byte("\n")), "one line, newline-terminated")
	require.Equal(t, 1, bytes.Count(line, []byte("\n")), "one line")
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, bytes.TrimSpace(line), "", "  "))
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *otlp.Update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, pretty.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test -run %s -update writes it", t.Name())
	assert.Equal(t, string(want), pretty.String())
}

func TestTraceOfACrewMatchesGolden(t *testing.T) {
	t.Parallel()
	h, v := crewHome(t)
	td, err := otlp.Trace(context.Background(), h, v, &otlp.Options{ServiceVersion: "v0.1.0-test"})
	require.NoError(t, err)
	golden(t, "crew.otlp.json", td)
}

// spans indexes td's spans by name; the second span of a name is
// "NAME 2", and so on, in the order of the trace.
func spans(t *testing.T, trace *otlp.Traces) map[string]ptrace.Span {
	t.Helper()
	td := otlp.Pdata(t, trace)
	out := map[string]ptrace.Span{}
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j).Spans()
			for k := range ss.Len() {
				sp := ss.At(k)
				name := sp.Name()
				for n := 2; ; n++ {
					if _, ok := out[name]; !ok {
						break
					}
					name = sp.Name() + " " + strconv.Itoa(n)
				}
				out[name] = sp
			}
		}
	}
	return out
}

func str(sp ptrace.Span, k string) string {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

func TestTraceLinksSubVoyagesAndEntriesToTheirParents(t *testing.T) {
	t.Parallel()
	h, v := crewHome(t)
	td, err := otlp.Trace(context.Background(), h, v, nil)
	require.NoError(t, err)
	s := spans(t, td)
	require.Len(t, s, 8, "two voyages and six entries")

	root := s["voyage Resolve #42: fix widget crash"]
	sub := s["voyage Review the fix"]
	assert.True(t, root.ParentSpanID().IsEmpty(), "the voyage is the root span")
	assert.Equal(t, pcommon.TraceID(uuid.MustParse(v.ID())), root.TraceID(), "the trace id is the voyage's UUID")
	assert.Equal(t, root.SpanID(), sub.ParentSpanID(), "a sub-voyage with no subagent step is a child of its parent's span")
	assert.Equal(t, root.TraceID(), sub.TraceID(), "one trace")
	assert.Equal(t, v.ID(), str(root, "helm.voyage.id"))
	assert.Equal(t, "failed", str(root, "helm.voyage.outcome"))
	assert.Equal(t, ptrace.StatusCodeError, root.Status().Code(), "a failed voyage is an error")
	assert.Equal(t, ptrace.StatusCodeOk, sub.Status().Code(), "a completed voyage is ok")
	assert.Regexp(t, `^\d+:[0-9a-f]{64}$`, str(root, "helm.voyage.head"))
	assert.Equal(t, "john-agent", str(root, "helm.identity"), "the starter")
	assert.Equal(t, "claude-opus-4", str(root, "helm.method"))

	subNote := s["note 2"]
	assert.Equal(t, sub.SpanID(), subNote.ParentSpanID(), "a sub-voyage's entries are under its span")
	assert.Equal(t, "The null check reads well.", str(subNote, "helm.note.text"))
	assert.Equal(t, "ann", str(subNote, "helm.identity"))

	note := s["note"]
	assert.Equal(t, root.SpanID(), note.ParentSpanID())
	assert.Equal(t, "Asking a reviewer to look at the fix.", str(note, "helm.note.text"))
	assert.Equal(t, note.StartTimestamp(), note.EndTimestamp(), "an entry with no duration is an instant")

	commit := s["action commit"]
	assert.Equal(t, "abc1234def5678", str(commit, "helm.action.result.sha"))
	assert.Equal(t, ptrace.StatusCodeOk, commit.Status().Code())
	assert.Greater(t, commit.EndTimestamp(), commit.StartTimestamp(), "an action runs from its intent to its outcome")
	failed := s["action push"]
	assert.Equal(t, ptrace.StatusCodeError, failed.Status().Code(), "a failed action is an error")
	assert.Contains(t, failed.Status().Message(), "rejected")

	judgement := s["judgement"]
	require.Equal(t, 2, judgement.Links().Len(), "a judgement links the entries it cites")
	assert.Equal(t, s["bearing"].SpanID(), judgement.Links().At(0).SpanID())

	assert.GreaterOrEqual(t, root.EndTimestamp(), sub.EndTimestamp(), "the voyage's span covers its sub-voyage")
	assert.LessOrEqual(t, root.StartTimestamp(), sub.StartTimestamp())
}

func TestTraceIDsAreTheSameOnEveryExport(t *testing.T) {
	t.Parallel()
	h, v := crewHome(t)
	first, err := otlp.Trace(context.Background(), h, v, nil)
	require.NoError(t, err)
	second, err := otlp.Trace(context.Background(), h, v, nil)
	require.NoError(t, err)
	a, err := otlp.JSON(first)
	require.NoError(t, err)
	b, err := otlp.JSON(second)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b), "exporting twice gives the same trace, ids included")

	ids := map[pcommon.SpanID]string{}
	for name, sp := range spans(t, first) {
		other, ok := ids[sp.SpanID()]
		assert.False(t, ok, "span %q and %q share an id", name, other)
		ids[sp.SpanID()] = name
	}
}

func TestSpanIDDependsOnVoyageAndEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		id     string
		n      int
		other  string
		otherN int
	}{
		{name: "another entry", id: "a3b0fc12-0000-4000-8000-000000000001", n: 1, other: "a3b0fc12-0000-4000-8000-000000000001", otherN: 2},
		{name: "another voyage", id: "a3b0fc12-0000-4000-8000-000000000001", n: 1, other: "a3b0fc12-0000-4000-8000-000000000002", otherN: 1},
		{name: "the voyage and its first entry", id: "a3b0fc12-0000-4000-8000-000000000001", n: 0, other: "a3b0fc12-0000-4000-8000-000000000001", otherN: 1},
		{name: "digits that run together", id: "a3b0fc12-0000-4000-8000-00000000000", n: 11, other: "a3b0fc12-0000-4000-8000-000000000001", otherN: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := otlp.SpanOf(tt.id, tt.n)
			assert.Equal(t, a, otlp.SpanOf(tt.id, tt.n), "derived, never drawn")
			assert.NotEqual(t, otlp.SpanID{}, a)
			assert.NotEqual(t, a, otlp.SpanOf(tt.other, tt.otherN))
		})
	}
}

func TestLongTextsAreBoundedAtAUTF8Boundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
	opts.NoSync = true
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Long notes", helm.OpenWaters, coder, nil)
	require.NoError(t, err)
	defer v.Close()
	long := "x" + strings.Repeat("é", otlp.MaxAttrBytes) // two bytes a rune, one byte off
	_, err = v.Note(ctx, long, coder)
	require.NoError(t, err)
	td, err := otlp.Trace(ctx, h, v, nil)
	require.NoError(t, err)
	got := str(spans(t, td)["note"], "helm.note.text")
	assert.LessOrEqual(t, len(got), otlp.MaxAttrBytes)
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")), "a prefix of the text, cut between runes")
}

// agentHome records, on a fixed clock, a Claude Code session's voyage
// through Voyage.Step: a prompt, a Bash call whose result came 3.5 s
// later with the model's usage, an rm -r -f a rule denied, and a
// subagent whose sub-voyage holds its own tool call.
func agentHome(t *testing.T) (*helm.Home, *helm.Voyage) {
	t.Helper()
	ctx := context.Background()
	opts := replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
	opts.NoSync = true
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	agent := logbook.Who{Identity: "john", Role: "coder", Method: "claude-code"}
	v, err := h.Start(ctx, "Fix the flaky widget test", helm.OpenWaters, agent, &helm.StartOptions{Session: "claude-code:9f6c2d1e"})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	step := func(v *helm.Voyage, s logbook.Step) {
		t.Helper()
		s.Agent, s.Session = "claude-code", "9f6c2d1e"
		_, err := v.Step(ctx, s, agent)
		require.NoError(t, err)
	}
	step(v, logbook.Step{Kind: logbook.StepPrompt, Text: "Make TestWidget pass reliably."})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_01", Tool: "Bash", Text: "go test ./widget/...",
		Input: json.RawMessage(`{"command":"go test ./widget/..."}`), Decision: &logbook.StepDecision{Verdict: "allow"}})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_01", Tool: "Bash",
		Result: &logbook.StepResult{Output: "ok  \twidget\t0.41s", Duration: 3500 * time.Millisecond},
		Usage:  &logbook.Usage{Model: "claude-sonnet-4-5", InputTokens: 12, OutputTokens: 85, CacheReadTokens: 14000, CacheWriteTokens: 900, CostUSD: 0.0123}})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_02", Tool: "Bash", Text: "rm -r -f build",
		Input:    json.RawMessage(`{"command":"rm -r -f build"}`),
		Decision: &logbook.StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:3)`, Reason: "recursive deletes need a person"}})
	sub, err := h.Start(ctx, "Explore: find the flaky wait", helm.OpenWaters, agent, &helm.StartOptions{Parent: v.ID(), Session: "claude-code:9f6c2d1e/agent-1"})
	require.NoError(t, err)
	step(v, logbook.Step{Kind: logbook.StepSubagent, ID: "agent-1", Text: "Explore", Voyage: sub.ID()})
	step(sub, logbook.Step{Kind: logbook.StepTool, ID: "toolu_03", Tool: "Grep", Text: "time.Sleep", Decision: &logbook.StepDecision{Verdict: "allow"}})
	step(sub, logbook.Step{Kind: logbook.StepTool, ID: "toolu_03", Tool: "Grep",
		Result: &logbook.StepResult{Output: "widget_test.go:1", Duration: 120 * time.Millisecond},
		Usage:  &logbook.Usage{Model: "claude-haiku-4-5", InputTokens: 400, OutputTokens: 20}})
	require.NoError(t, sub.Complete(ctx, logbook.OutcomeCompleted, "found it", agent))
	require.NoError(t, sub.Close())
	step(v, logbook.Step{Kind: logbook.StepMessage, Text: "The test waits for readiness now."})
	require.NoError(t, v.Complete(ctx, logbook.OutcomePartial, "session ended: logout", agent))
	return h, v
}

func TestTraceOfAnAgentSessionMatchesGolden(t *testing.T) {
	t.Parallel()
	h, v := agentHome(t)
	td, err := otlp.Trace(context.Background(), h, v, &otlp.Options{ServiceVersion: "v0.1.0-test"})
	require.NoError(t, err)
	golden(t, "session.otlp.json", td)
}

func TestTraceOfAnAgentSessionHasToolSpansUnderTheirVoyages(t *testing.T) {
	t.Parallel()
	h, v := agentHome(t)
	td, err := otlp.Trace(context.Background(), h, v, nil)
	require.NoError(t, err)
	s := spans(t, td)
	root := s["voyage Fix the flaky widget test"]
	bash := s["execute_tool Bash"]
	denied := s["execute_tool Bash 2"]
	opener := s["subagent Explore"]
	sub := s["voyage Explore: find the flaky wait"]
	grep := s["execute_tool Grep"]

	assert.Equal(t, "claude-code:9f6c2d1e", str(root, "helm.voyage.session"))
	assert.Equal(t, root.SpanID(), bash.ParentSpanID())
	assert.Equal(t, 3500*time.Millisecond, bash.EndTimestamp().AsTime().Sub(bash.StartTimestamp().AsTime()), "a call lasts until its result")
	assert.Equal(t, "execute_tool", str(bash, "gen_ai.operation.name"))
	assert.Equal(t, "Bash", str(bash, "gen_ai.tool.name"))
	assert.Equal(t, "toolu_01", str(bash, "gen_ai.tool.call.id"))
	assert.Equal(t, "anthropic", str(bash, "gen_ai.provider.name"))
	assert.Equal(t, "claude-sonnet-4-5", str(bash, "gen_ai.request.model"))
	assert.Equal(t, "14912", str(bash, "gen_ai.usage.input_tokens"), "every input token, the cache's included")
	assert.Equal(t, "85", str(bash, "gen_ai.usage.output_tokens"))
	assert.Equal(t, "14000", str(bash, "gen_ai.usage.cache_read.input_tokens"))
	assert.Equal(t, "900", str(bash, "gen_ai.usage.cache_creation.input_tokens"))
	assert.Equal(t, "ok  \twidget\t0.41s", str(bash, "gen_ai.tool.call.result"))

	assert.Equal(t, "deny", str(denied, "helm.guard.verdict"))
	assert.Equal(t, `"no rm -rf" (policy.toml:3)`, str(denied, "helm.guard.rule"))
	assert.Equal(t, denied.StartTimestamp(), denied.EndTimestamp(), "a denied call never ran")

	assert.Equal(t, opener.SpanID(), sub.ParentSpanID(), "the sub-voyage hangs under the step that opened it")
	assert.Equal(t, sub.SpanID(), grep.ParentSpanID())
	assert.Equal(t, 120*time.Millisecond, grep.EndTimestamp().AsTime().Sub(grep.StartTimestamp().AsTime()))
	assert.Equal(t, "claude-haiku-4-5", str(grep, "gen_ai.response.model"))
}
