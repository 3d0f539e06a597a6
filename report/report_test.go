package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/report"
)

type (
	note        = voyagetest.Note
	worldAction = voyagetest.Action
)

var (
	who     = voyagetest.Who
	bob     = voyagetest.Bob
	carol   = voyagetest.Carol
	perform = voyagetest.Perform
	base    = strings.Repeat("b", 40)
	head    = strings.Repeat("c", 40)
)

// reportVoyage plays a voyage through every section of a report: it
// starts in a repository at base, takes a bearing that is challenged,
// commits (head) and pushes, opens a pull request, has an action fail,
// is blocked, resumed and completed, is judged, and has a sub-voyage.
func reportVoyage(t *testing.T) (*helm.Home, *helm.Voyage) {
	t.Helper()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, &helm.StartOptions{Repo: "octo/widgets", Dir: "/src/widgets", Base: base, Branch: "main"})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })

	_, err = v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() {}"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "init() lacks a null check.", who, nil) // 1
	require.NoError(t, err)
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "It is the caller's check.", Reading: "Callers of init() pass nil."}, bob)
	require.NoError(t, err)
	perform(t, v, &worldAction{Of: "commit", Result: logbook.ActionResult{SHA: head}}, who, "")                               // 2
	perform(t, v, &worldAction{Of: "push", Result: logbook.ActionResult{SHA: head, Branch: "fix-widget"}}, who, "")           // 3
	perform(t, v, &worldAction{Of: "create-pull-request", Title: "Fix widget crash", Result: logbook.ActionResult{Number: 45, // 4
		URL: "https://github.com/octo/widgets/pull/45"}}, who, "the fix is pushed")
	perform(t, v, &worldAction{Of: "merge-pull-request", Number: 45, Fail: errors.New("Pull Request is not mergeable")}, who, "") // 5
	_, err = v.Note(ctx, "Waiting for CI on PR #45.", bob)                                                                        // 6
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeBlocked, "waiting for CI", who))
	require.NoError(t, v.Resume(ctx, "CI is green", bob))
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed the crash; PR #45 open.", who))
	_, err = v.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "The fix holds."}, carol) // 7
	require.NoError(t, err)

	sub, err := h.Start(ctx, "Write the regression test", helm.OpenWaters, bob, &helm.StartOptions{Parent: v.ID()})
	require.NoError(t, err)
	require.NoError(t, sub.Close())
	other, err := h.Start(ctx, "Unrelated", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	return h, v
}

func TestReportTellsEachSection(t *testing.T) {
	ctx := context.Background()
	h, v := reportVoyage(t)
	var asked []string
	r, err := report.Of(ctx, h, v.ID(), &report.Options{DiffStat: func(_ context.Context, dir, b, h string) ([]report.FileChange, error) {
		asked = append(asked, dir, b, h)
		return []report.FileChange{{Path: "src/lib.rs", Added: 3, Deleted: 1}, {Path: "logo.png", Binary: true}, {Path: "new.rs", From: "old.rs", Added: 1}}, nil
	}})
	require.NoError(t, err)
	info := v.Info()

	t.Run("voyage and duration", func(t *testing.T) {
		assert.Equal(t, info, r.Voyage)
		assert.False(t, r.Ongoing)
		assert.Equal(t, info.CompletedAt, r.Ended, "the last completion, not the judgement after it")
		assert.Equal(t, info.CompletedAt.Sub(info.Created), r.Duration())
		assert.Equal(t, int64(r.Duration()/time.Second), r.DurationSeconds)
	})
	t.Run("lifecycle", func(t *testing.T) {
		var got []string
		for _, l := range r.Voyage.Lifecycle {
			got = append(got, string(l.Status)+" by "+l.Who.Identity+": "+l.Reason)
		}
		assert.Equal(t, []string{"active by john-agent: ", "blocked by john-agent: waiting for CI", "active by bob: CI is green",
			"completed by john-agent: Fixed the crash; PR #45 open."}, got)
	})
	t.Run("crew", func(t *testing.T) {
		assert.Equal(t, []report.CrewMember{
			{Identity: "john-agent", Roles: []string{"coder"}, Methods: []string{"human"}, Entries: 5, Bearings: 1, Actions: 4},
			{Identity: "bob", Roles: []string{"reviewer"}, Methods: []string{"claude"}, Entries: 1, Notes: 1},
			{Identity: "carol", Roles: []string{"judge"}, Methods: []string{"human"}, Entries: 1, Judgements: 1},
		}, r.Crew, "the voyage's identity first; bob challenged and resumed as well as noted")
	})
	t.Run("bearings", func(t *testing.T) {
		require.Len(t, r.Bearings, 1)
		b := r.Bearings[0]
		assert.Equal(t, 1, b.N)
		assert.Equal(t, []string{"Note @ widget.rs"}, b.Marks)
		assert.Equal(t, []string{"test-note:widget.rs"}, b.Keys)
		assert.Equal(t, "Callers of init() pass nil.", b.Reading.Text)
		require.Len(t, b.Reading.History, 1)
		assert.Equal(t, "init() lacks a null check.", b.Reading.History[0].Text)
		assert.Equal(t, "It is the caller's check.", b.Reading.History[0].ChallengedWith)
		assert.Equal(t, "bob", b.Reading.History[0].ChallengedBy.Identity)
	})
	t.Run("actions", func(t *testing.T) {
		var got []string
		for _, a := range r.Actions {
			got = append(got, a.Kind+" "+string(a.Status)+": "+a.Description)
		}
		assert.Equal(t, []string{
			"commit performed: committed (ccccccc)",
			"push performed: pushed to fix-widget (ccccccc)",
			"create-pull-request performed: created PR #45",
			"merge-pull-request failed: merge-pull-request failed: Pull Request is not mergeable",
		}, got)
		assert.Equal(t, "https://github.com/octo/widgets/pull/45", r.Actions[2].Result.URL)
		assert.Equal(t, "the fix is pushed", r.Actions[2].Why)
		assert.Equal(t, 5, r.Actions[3].N)
		assert.Equal(t, "Pull Request is not mergeable", r.Actions[3].Error)
		assert.False(t, r.Actions[3].Succeeded())
	})
	t.Run("notes and judgements", func(t *testing.T) {
		assert.Equal(t, []report.Note{{N: 6, At: r.Notes[0].At, Who: bob, Text: "Waiting for CI on PR #45."}}, r.Notes)
		require.Len(t, r.Judgements, 1)
		assert.Equal(t, report.Judgement{N: 7, At: r.Judgements[0].At, Who: carol, Dimension: "correctness", Score: 8,
			Evidence: []int{1, 2}, Text: "The fix holds."}, r.Judgements[0])
	})
	t.Run("files changed", func(t *testing.T) {
		assert.Equal(t, []string{"/src/widgets", base, head}, asked, "the recorded directory, the base and the last commit")
		assert.Equal(t, base, r.Diff.Base)
		assert.Equal(t, head, r.Diff.Head)
		assert.Len(t, r.Diff.Files, 3)
		assert.Equal(t, 4, r.Diff.Added)
		assert.Equal(t, 1, r.Diff.Deleted)
		assert.Empty(t, r.Diff.Missing)
	})
	t.Run("sub-voyages", func(t *testing.T) {
		require.Len(t, r.SubVoyages, 1, "the unrelated voyage is not one")
		s := r.SubVoyages[0]
		assert.Equal(t, "Write the regression test", s.Intent)
		assert.Equal(t, logbook.StatusActive, s.Status)
		assert.Equal(t, "bob", s.Identity)
		assert.Empty(t, r.Unreadable)
	})
}

func TestReportSaysWhyItListsNoFiles(t *testing.T) {
	ctx := context.Background()
	failing := func(context.Context, string, string, string) ([]report.FileChange, error) {
		return nil, errors.New("git diff: bad object cccccccc")
	}
	tests := []struct {
		name     string
		base     string
		commit   bool
		diffStat func(context.Context, string, string, string) ([]report.FileChange, error)
		missing  string
	}{
		{"no base", "", true, failing, "no base commit recorded: the voyage did not start in a git repository"},
		{"no commit", base, false, failing, "no commit recorded"},
		{"no DiffStat", base, true, nil, "the files were not compared"},
		{"git fails", base, true, failing, "the files could not be compared: git diff: bad object cccccccc"},
		{"nothing changed", base, true, func(context.Context, string, string, string) ([]report.FileChange, error) { return nil, nil }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := helm.Open(t.TempDir(), nil)
			require.NoError(t, err)
			v, err := h.Start(ctx, "files", helm.OpenWaters, who, &helm.StartOptions{Base: tt.base})
			require.NoError(t, err)
			defer v.Close()
			// A failed commit and a performed comment name no commit.
			perform(t, v, &worldAction{Of: "commit", Fail: errors.New("nothing to commit")}, who, "")
			perform(t, v, &worldAction{Of: "comment-issue", Number: 42, Result: logbook.ActionResult{Number: 42}}, who, "")
			if tt.commit {
				perform(t, v, &worldAction{Of: "commit", Result: logbook.ActionResult{SHA: head}}, who, "")
			}
			r, err := report.Of(ctx, h, v.ID(), &report.Options{DiffStat: tt.diffStat})
			require.NoError(t, err, "a report without files is still a report")
			if tt.missing == "" {
				assert.Empty(t, r.Diff.Missing)
			} else {
				assert.Contains(t, r.Diff.Missing, tt.missing)
			}
			assert.NotNil(t, r.Diff.Files, "an empty list, in JSON too")
			assert.Empty(t, r.Diff.Files)
			var md bytes.Buffer
			require.NoError(t, r.WriteMarkdown(&md))
			if tt.missing != "" {
				assert.Contains(t, md.String(), "No file list: ")
			} else {
				assert.Contains(t, md.String(), "No file differs between base `bbbbbbb` and `ccccccc`.")
			}
		})
	}
}

func TestReportOfAnActiveVoyageRunsToItsLastEvent(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Note(ctx, "started", who)
	require.NoError(t, err)
	r, err := report.Of(ctx, h, v.ID(), &report.Options{})
	require.NoError(t, err)
	assert.True(t, r.Ongoing)
	assert.Equal(t, v.Info().LastAt, r.Ended)
	assert.Equal(t, time.Minute, r.Duration())
	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "- **Last event:** 2026-02-26T17:02:00Z (1m so far)\n")
	assert.NotContains(t, md.String(), "### Sub-voyages")

	// Blocked: stopped, not ended, and it may go on.
	require.NoError(t, v.Complete(ctx, logbook.OutcomeBlocked, "waiting for CI", who))
	r, err = report.Of(ctx, h, v.ID(), &report.Options{})
	require.NoError(t, err)
	assert.False(t, r.Ongoing)
	assert.Equal(t, v.Info().CompletedAt, r.Ended)
	md.Reset()
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "- **Status:** blocked — waiting for CI\n")
	assert.Contains(t, md.String(), "- **Stopped:** 2026-02-26T17:03:00Z (2m so far)\n")
}

func TestReportMarkdown(t *testing.T) {
	ctx := context.Background()
	h, v := reportVoyage(t)
	r, err := report.Of(ctx, h, v.ID(), &report.Options{DiffStat: func(context.Context, string, string, string) ([]report.FileChange, error) {
		return []report.FileChange{{Path: "src/lib.rs", Added: 3, Deleted: 1}, {Path: "logo.png", Binary: true}}, nil
	}})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&b))
	md := b.String()
	for _, want := range []string{
		"## Voyage report: Resolve #42: fix widget crash\n",
		"- **Status:** completed — Fixed the crash; PR #45 open.\n",
		"- **Repository:** octo/widgets, branch main, base `bbbbbbb`\n",
		"| john-agent | coder | human | 5 (1 bearing, 4 actions) |\n",
		"- 2026-02-26T17:16:00Z resumed by bob: CI is green\n",
		"Between base `bbbbbbb` and `ccccccc`: 2 files, +3 −1.\n",
		"| src/lib.rs | 3 | 1 |\n| logo.png | binary | binary |\n",
		"**Bearing 1** · 2026-02-26T17:04:00Z\\\nMarks: Note @ widget.rs\n\n> Callers of init() pass nil.\n\n(challenged 1×: “It is the caller's check.”)\n",
		"- **Action 4** · created PR #45 — <https://github.com/octo/widgets/pull/45>\\\n  Why: the fix is pushed\n",
		"### Failed or refused actions\n\n- **Action 5** · merge-pull-request failed: Pull Request is not mergeable\n",
		"- **Note 6** · ",
		"| 7 | carol (judge) | correctness | 8/10 | 1, 2 | The fix holds. |\n",
		"\" Write the regression test — active, by bob\n",
	} {
		want = strings.ReplaceAll(want, `" `, "` ")
		if strings.HasPrefix(want, "` ") {
			assert.Regexp(t, "- `[0-9a-f]{8}"+regexp.QuoteMeta(want), md)
			continue
		}
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "Unrelated")
}

// A commit taken back moves the head the report compares with the base:
// to the parent the reset went back to, or to the revert commit.
func TestReportDiffFollowsUndoneCommits(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Fix widget", helm.OpenWaters, who, &helm.StartOptions{Dir: "/src/widgets", Base: base, Branch: "main"})
	require.NoError(t, err)
	defer v.Close()
	undo := func(n int, a *worldAction) {
		t.Helper()
		_, err := v.Perform(ctx, a, who, &helm.PerformOptions{Undoes: n})
		require.NoError(t, err)
	}
	headOf := func() string {
		t.Helper()
		r, err := report.Of(ctx, h, v.ID(), &report.Options{})
		require.NoError(t, err)
		return r.Diff.Head
	}
	inverse := logbook.Inverse{Kind: "reset-commit", Params: []byte(`{"sha":"` + head + `"}`)}
	perform(t, v, &invertibleWorldAction{worldAction{Of: "commit", Result: logbook.ActionResult{SHA: head}}, inverse}, who, "") // 1
	require.Equal(t, head, headOf())
	undo(1, &worldAction{Of: "reset-commit", Result: logbook.ActionResult{SHA: base, Branch: "main"}}) // 2
	assert.Equal(t, base, headOf(), "reset to the parent")

	again := strings.Repeat("d", 40)
	revert := strings.Repeat("e", 40)
	perform(t, v, &invertibleWorldAction{worldAction{Of: "commit", Result: logbook.ActionResult{SHA: again}}, inverse}, who, "") // 3
	undo(3, &worldAction{Of: "revert-commit", Result: logbook.ActionResult{SHA: revert, Branch: "main"}})                        // 4
	assert.Equal(t, revert, headOf(), "the revert commit")
	perform(t, v, &invertibleWorldAction{worldAction{Of: "push", Result: logbook.ActionResult{SHA: revert, Branch: "main"}},
		logbook.Inverse{Kind: "delete-remote-branch", Params: []byte(`{"branch":"main","sha":"` + revert + `"}`)}}, who, "") // 5
	undo(5, &worldAction{Of: "delete-remote-branch", Result: logbook.ActionResult{SHA: revert, Branch: "main"}}) // 6
	assert.Equal(t, revert, headOf(), "a branch deleted on the remote moves no head")
}

// invertibleWorldAction is a worldAction that declares its inverse.
type invertibleWorldAction struct {
	worldAction
	inverse logbook.Inverse
}

func (a *invertibleWorldAction) Inverse(context.Context, logbook.ActionResult) (logbook.Inverse, error) {
	return a.inverse, nil
}

// The report carries the voyage's head, in markdown and in JSON: what a
// pull request's description pastes is a witness of the records up to it.
func TestReportCarriesTheHead(t *testing.T) {
	ctx := context.Background()
	h, v := reportVoyage(t)
	want, err := v.Head(ctx)
	require.NoError(t, err)
	r, err := report.Of(ctx, h, v.ID(), &report.Options{})
	require.NoError(t, err)
	assert.Equal(t, want, r.Head)
	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "- **Voyage:** `"+v.ID()+"` (resolve-issue)\n- **Head:** `"+want.String()+"`\n")
	js, err := json.Marshal(r)
	require.NoError(t, err)
	var back struct {
		Head chain.Head `json:"head"`
	}
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, want, back.Head, `"head": {"seq":N,"hash":"HEX"}`)
}

// TestReportSumsTheAgentsSteps: a hooked session's report counts its
// prompts and tool calls (a call and its result once), the denied and
// failed ones, and what they cost, in its JSON and its markdown.
func TestReportSumsTheAgentsSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	ann := logbook.Who{Identity: "ann", Role: "coder", Method: "claude-code"}
	v, err := h.Start(ctx, "claude-code session s", helm.OpenWaters, ann, &helm.StartOptions{Session: "claude-code:s"})
	require.NoError(t, err)
	defer v.Close()
	usage := &logbook.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 1000, CostUSD: 0.25, Duration: time.Second}
	for _, s := range []logbook.Step{
		{Kind: logbook.StepPrompt, Text: "go", Usage: usage},
		{Kind: logbook.StepTool, ID: "t1", Tool: "Bash", Text: "make"},
		{Kind: logbook.StepTool, ID: "t1", Result: &logbook.StepResult{Failed: true}, Usage: usage},
		{Kind: logbook.StepTool, ID: "t2", Tool: "Bash", Text: "rm -rf /", Decision: &logbook.StepDecision{Verdict: "deny"}},
	} {
		s.Agent, s.Session = "claude-code", "s"
		_, err := v.Step(ctx, s, ann)
		require.NoError(t, err)
	}
	r, err := report.Of(ctx, h, v.ID(), &report.Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, r.Agents.Prompts)
	assert.Equal(t, 2, r.Agents.ToolCalls)
	assert.Equal(t, 1, r.Agents.DeniedCalls)
	assert.Equal(t, 1, r.Agents.FailedCalls)
	assert.Equal(t, int64(200), r.Agents.InputTokens)
	assert.InDelta(t, 0.5, r.Agents.CostUSD, 1e-9)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"agents":{"prompts":1,"tool_calls":2,"denied_calls":1,"failed_calls":1,`)
	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "- **Agent steps:** 1 prompt, 2 tool calls (1 denied, 1 failed); 200 input, 20 output, 2000 cache tokens; $0.5000\n")
}
