package search_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/search"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/store/storetest"
)

type (
	note         = voyagetest.Note
	noteSighting = voyagetest.NoteSighting
	worldAction  = voyagetest.Action
)

var (
	who     = voyagetest.Who
	bob     = voyagetest.Bob
	carol   = voyagetest.Carol
	perform = voyagetest.Perform
)

// searchHome holds two voyages, A (about issue #42 and PR #45) and B
// (a README tidy that comments on #42), judged by carol. It returns the
// home and the two voyages' ids.
func searchHome(t *testing.T) (h *helm.Home, a, b string) {
	t.Helper()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	record := func(v *helm.Voyage, m marks.Mark, s sighting.Sighting, w logbook.Who) {
		t.Helper()
		_, err := v.Record(ctx, helm.Observation{Mark: m, Sighting: s}, w)
		require.NoError(t, err)
	}

	va, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	defer va.Close()
	issue, err := marks.NewGitHubIssue("octo/widgets", 42)
	require.NoError(t, err)
	record(va, issue, &sighting.GitHubIssue{Repo: "octo/widgets", Number: 42, Focus: []string{"summary"}}, who)
	_, err = va.TakeBearing(ctx, "Widget init crashes on a nil config.", who, nil) // A1
	require.NoError(t, err)
	_, err = va.Note(ctx, "Waiting for CI on PR #45.", bob) // A2
	require.NoError(t, err)
	perform(t, va, &worldAction{Of: "create-pull-request", Title: "Fix widget crash", Result: logbook.ActionResult{Number: 45}}, who, "") // A3
	perform(t, va, &worldAction{Of: "merge-pull-request", Number: 45, Fail: errors.New("Pull Request is not mergeable")}, who, "")        // A4
	pr, err := marks.NewGitHubPR("octo/widgets", 45)
	require.NoError(t, err)
	record(va, pr, &sighting.GitHubPullRequest{Repo: "octo/widgets", Number: 45, Focus: []string{"summary"}}, who)
	_, err = va.TakeBearing(ctx, "The checks pass.", who, nil) // A5
	require.NoError(t, err)
	_, err = va.Challenge(ctx, 5, helm.Challenge{Feedback: "Look at the flaky test", Reading: "Checks pass, one flaky."}, bob)
	require.NoError(t, err)
	require.NoError(t, va.Complete(ctx, logbook.OutcomeCompleted, "PR #45 merged, closes #42.", who))
	_, err = va.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{3}, Text: "The fix for #42 holds."}, carol) // A6
	require.NoError(t, err)

	vb, err := h.Start(ctx, "Tidy the README", helm.OpenWaters, bob, nil)
	require.NoError(t, err)
	defer vb.Close()
	record(vb, &note{Topic: "README", Text: "..."}, &noteSighting{Text: "..."}, bob)
	_, err = vb.TakeBearing(ctx, "The README mentions #450 only.", bob, nil) // B1
	require.NoError(t, err)
	perform(t, vb, &worldAction{Of: "comment-issue", Number: 42, Body: "Fixed by #45.", Result: logbook.ActionResult{Number: 42}}, bob, "") // B2
	return h, va.ID(), vb.ID()
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	h, a, b := searchHome(t)
	name := map[string]string{a: "A", b: "B"}
	tests := []struct {
		name string
		q    search.Query
		want []string // VOYAGE N KIND: TEXT, in order
	}{
		{"mark key", search.Query{Mark: "github-pr:octo/widgets#45 focus=summary"}, []string{"A 5 bearing: Checks pass, one flaky."}},
		{"mark prefix", search.Query{Mark: "github-issue:"}, []string{"A 1 bearing: Widget init crashes on a nil config."}},
		{"marks of two kinds", search.Query{Mark: "github-"}, []string{"A 1 bearing: Widget init crashes on a nil config.", "A 5 bearing: Checks pass, one flaky."}},
		{"mark nobody looked at", search.Query{Mark: "web:"}, nil},
		{"pull request", search.Query{PR: 45}, []string{
			"A 2 note: Waiting for CI on PR #45.",
			"A 3 action: created PR #45",
			"A 4 action: merge-pull-request failed: Pull Request is not mergeable",
			"A 5 bearing: Checks pass, one flaky.",
			"A 0 status: completed: PR #45 merged, closes #42.",
			"B 2 action: commented on issue #42", // its body says "Fixed by #45."; #450 in B1 is not #45
		}},
		{"issue", search.Query{Issue: 42}, []string{
			"A 0 voyage: Resolve #42: fix widget crash",
			"A 1 bearing: Widget init crashes on a nil config.",
			"A 0 status: completed: PR #45 merged, closes #42.",
			"A 6 judgement: correctness 8/10: The fix for #42 holds.",
			"B 2 action: commented on issue #42",
		}},
		{"who", search.Query{Who: "bob"}, []string{
			"A 2 note: Waiting for CI on PR #45.",
			"B 0 voyage: Tidy the README",
			"B 1 bearing: The README mentions #450 only.",
			"B 2 action: commented on issue #42",
		}},
		{"text in a challenged reading", search.Query{Text: "FLAKY"}, []string{"A 5 bearing: Checks pass, one flaky."}},
		{"text in the feedback", search.Query{Text: "look at"}, []string{"A 5 bearing: Look at the flaky test"}},
		{"text in a reading replaced", search.Query{Text: "checks pass."}, []string{"A 5 bearing: The checks pass."}},
		{"text in an intent and a title", search.Query{Text: "widget crash"}, []string{
			"A 0 voyage: Resolve #42: fix widget crash",
			"A 3 action: Fix widget crash", // "Widget init crashes" in A1 is not the phrase
		}},
		{"text in an error", search.Query{Text: "not mergeable"}, []string{"A 4 action: merge-pull-request failed: Pull Request is not mergeable"}},
		{"text in a body", search.Query{Text: "fixed by"}, []string{"B 2 action: Fixed by #45."}},
		{"pull request by bob", search.Query{PR: 45, Who: "bob"}, []string{"A 2 note: Waiting for CI on PR #45.", "B 2 action: commented on issue #42"}},
		{"mark and text that no entry has both", search.Query{Mark: "github-pr:", Text: "nil config"}, nil},
		{"mark and who", search.Query{Mark: "test-note:", Who: "bob"}, []string{"B 1 bearing: The README mentions #450 only."}},
		{"nothing", search.Query{Text: "kraken"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := search.Run(ctx, h, &tt.q)
			require.NoError(t, err)
			var got []string
			for i, hit := range hits {
				got = append(got, name[hit.Voyage]+" "+itoa(hit.N)+" "+string(hit.Kind)+": "+hit.Text)
				if i > 0 {
					assert.False(t, hit.At.Before(hits[i-1].At), "ordered by time")
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}

	hits, err := search.Run(ctx, h, &search.Query{PR: 45, Who: "bob"})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, search.Hit{Voyage: a, Intent: "Resolve #42: fix widget crash", Status: logbook.StatusCompleted, N: 2, Seq: hits[0].Seq,
		At: hits[0].At, Who: bob, Kind: search.Kind(logbook.EntryNote), Text: "Waiting for CI on PR #45."}, hits[0])
	assert.NotZero(t, hits[0].Seq)
	assert.Equal(t, logbook.StatusActive, hits[1].Status)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestRunNeedsACriterion(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	for _, q := range []*search.Query{nil, {}, {Text: "  "}, {PR: -1}, {Issue: -3}, {Who: "a/b"}, {Text: "\xff"}} {
		_, err := search.Run(ctx, h, q)
		assert.ErrorIs(t, err, helm.ErrInvalid, "%+v", q)
	}
	hits, err := search.Run(ctx, h, &search.Query{Text: "x"})
	require.NoError(t, err, "an empty home has nothing to find")
	assert.Empty(t, hits)
}

// TestRunReportsUnreadableVoyagesWithTheOtherHits: a voyage that
// cannot be read does not hide the others' hits.
func TestRunReportsUnreadableVoyagesWithTheOtherHits(t *testing.T) {
	ctx := context.Background()
	h, _, _ := searchHome(t)
	broken := "a3b0fc12-0000-4000-8000-0000000000ff"
	require.NoError(t, os.MkdirAll(filepath.Join(h.Dir(), "voyages", broken, "events"), 0o700))
	hits, err := search.Run(ctx, h, &search.Query{Issue: 42})
	var le *helm.ListError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, []string{broken}, le.Voyages)
	assert.ErrorIs(t, err, helm.ErrDamaged)
	assert.Len(t, hits, 5)
}

// numberedAction is an action of any kind on a pull request or issue
// number, which fails.
type numberedAction struct {
	kind   string
	Number int `json:"number"`
}

func (a *numberedAction) Kind() string { return a.kind }
func (a *numberedAction) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{}, errors.New("HTTP 502")
}

// The undos act on pull requests and issues too: a search by number
// finds them by their parameters, as it finds the actions they undo,
// even when they failed (and their line names no number).
func TestRunFindsUndosByNumber(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	for _, a := range []*numberedAction{
		{"close-pull-request", 45}, {"delete-review-comment", 45}, {"remove-review-request", 45},
		{"reopen-issue", 42}, {"delete-comment", 42}, {"delete-comment", 45},
	} {
		_, err := v.Perform(ctx, a, who, nil)
		require.Error(t, err)
	}
	for q, want := range map[search.Query][]int{
		{PR: 45}:    {1, 2, 3, 6},
		{Issue: 42}: {4, 5},
	} {
		hits, err := search.Run(ctx, h, &q)
		require.NoError(t, err)
		var got []int
		for _, hit := range hits {
			if hit.N != 0 {
				got = append(got, hit.N)
			}
		}
		assert.Equal(t, want, got, "%+v", q)
	}
}

// everyKind is every kind of action package actions performs, undos
// included (actions' TestEveryKindSaysWhatItIsAbout keeps the list whole
// there).
var everyKind = []string{"commit", "push", "create-pull-request", "merge-pull-request", "comment-pull-request", "reply-pull-request",
	"request-review", "create-issue", "close-issue", "comment-issue", "reset-commit", "revert-commit", "delete-remote-branch",
	"close-pull-request", "delete-comment", "delete-review-comment", "remove-review-request", "reopen-issue"}

// TestRunByNumberFollowsActions: a search by pull request (issue) number
// finds the actions of exactly the kinds package actions says act on a
// pull request (an issue), by the number in their parameters, failed ones
// too: a kind described there is found here, with no list kept here.
func TestRunByNumberFollowsActions(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	kindOf := map[int]string{}
	for i, kind := range append(everyKind, "deploy") { // and a kind another program recorded
		_, err := v.Perform(ctx, &numberedAction{kind, 7}, who, nil)
		require.Error(t, err)
		kindOf[i+1] = kind // the voyage's entries are these actions
	}
	found := func(q search.Query) map[string]bool {
		hits, err := search.Run(ctx, h, &q)
		require.NoError(t, err)
		out := map[string]bool{}
		for _, hit := range hits {
			out[kindOf[hit.N]] = true
		}
		return out
	}
	prs, issues := found(search.Query{PR: 7}), found(search.Query{Issue: 7})
	var onPR, onIssue int
	for _, kind := range append(everyKind, "deploy") {
		assert.Equal(t, actions.OnPullRequest(kind), prs[kind], "%s, by pull request", kind)
		assert.Equal(t, actions.OnIssue(kind), issues[kind], "%s, by issue", kind)
		if prs[kind] {
			onPR++
		}
		if issues[kind] {
			onIssue++
		}
	}
	assert.Equal(t, 9, onPR, "the pull request actions, undos among them")
	assert.Equal(t, 5, onIssue, "the issue actions, undos among them")
}

// TestRunInASharedHome: a home whose voyages are in a shared store is
// searched as one on disk; a voyage whose start wrote no event there (a
// failed start) is skipped, as listing skips it, rather than failing the
// search.
func TestRunInASharedHome(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	h, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", voyagetest.Fixed())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "Opened PR #45.", who)
	require.NoError(t, err)
	empty, err := st.Create(ctx, "a3b0fc12-0000-4000-8000-0000000000ee")
	require.NoError(t, err)
	require.NoError(t, empty.Close())

	hits, err := search.Run(ctx, h, &search.Query{PR: 45})
	require.NoError(t, err, "the empty voyage is skipped")
	require.Len(t, hits, 1)
	assert.Equal(t, "Opened PR #45.", hits[0].Text)
	assert.Equal(t, v.ID(), hits[0].Voyage)
}
