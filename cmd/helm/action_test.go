package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
)

func TestActionDryRunRecordsNothing(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	id := h.start("dry runs")
	before := g.Git(t, "rev-parse", "HEAD")
	srv.ClearRequests()
	tests := []struct {
		args []string
		want []string // in the printed commands
	}{
		{[]string{"commit", "--message", "Fix it"}, []string{"git -c i18n.commitEncoding=UTF-8 commit -m 'Fix it'"}},
		{[]string{"push", "--branch", "main"}, []string{"git push --porcelain --receive-pack=git-receive-pack origin ", ":refs/heads/main"}},
		{[]string{"create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash", "--base", "main", "--reviewer", "dyreby"}, []string{"gh api", "repos/octo/widgets/pulls", "requested_reviewers"}},
		{[]string{"merge-pull-request", "45", "--merge-method", "squash"}, []string{"repos/octo/widgets/pulls/45/merge"}},
		{[]string{"comment-pull-request", "45", "--body", "hi"}, []string{"repos/octo/widgets/issues/45/comments"}},
		{[]string{"reply-pull-request", "45", "--comment", "7", "--body", "done"}, []string{"repos/octo/widgets/pulls/45/comments/7/replies"}},
		{[]string{"request-review", "45", "--reviewer", "dyreby"}, []string{"repos/octo/widgets/pulls/45/requested_reviewers"}},
		{[]string{"create-issue", "--title", "Crash"}, []string{"repos/octo/widgets/issues"}},
		{[]string{"close-issue", "42"}, []string{"repos/octo/widgets/issues/42"}},
		{[]string{"comment-issue", "42", "--body", "Fixed by #45."}, []string{"repos/octo/widgets/issues/42/comments"}},
		{[]string{"comment-issue", "42", "--body", "x", "--repo", "other/repo"}, []string{"repos/other/repo/issues/42/comments"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			out := h.ok(append(append([]string{"action"}, tt.args...), "--dry-run")...)
			assert.True(t, strings.HasPrefix(out, "Dry run for voyage a3b00001: nothing is run or recorded. Would run:\n"), out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
		})
	}
	var dr view.DryRun
	require.NoError(t, json.Unmarshal([]byte(h.ok("action", "close-issue", "42", "--dry-run", "--json")), &dr))
	assert.Equal(t, view.DryRun{Voyage: id, Kind: "close-issue", DryRun: dr.DryRun}, dr)
	assert.Contains(t, dr.DryRun, "issues/42")

	assert.Empty(t, srv.Calls(), "a dry run never contacts GitHub")
	assert.Equal(t, before, g.Git(t, "rev-parse", "HEAD"))
	var show voyageShow
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "show", "--json")), &show))
	assert.Zero(t, show.Logbook.Entries)
	assert.Empty(t, show.FailedActions)
}

func TestActionGit(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	h.start("git")
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "widget.rs", "fn init() { /* null check */ }\n")
	g.Git(t, "add", "widget.rs")

	out := h.ok("action", "commit", "--message", "Fix null check in widget init")
	sha := g.Git(t, "rev-parse", "HEAD")
	assert.Equal(t, "Action 1 performed for voyage a3b00001\n  committed ("+sha[:7]+")\n", out)
	assert.Equal(t, "Fix null check in widget init", g.Git(t, "log", "-1", "--format=%s"))

	out = h.ok("action", "push", "--branch", "fix-widget")
	assert.Equal(t, "Action 2 performed for voyage a3b00001\n  pushed to fix-widget ("+sha[:7]+")\n", out)
	assert.Equal(t, sha, g.BareRef(t, "fix-widget"))

	var e logbook.Entry
	require.NoError(t, json.Unmarshal([]byte(h.ok("action", "push", "--branch", "fix-widget", "--json")), &e))
	assert.Equal(t, logbook.ActionPerformed, e.Action.Status)
	assert.Equal(t, sha, e.Action.Result.SHA)
	assert.Equal(t, logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}, e.Who)
}

// TestActionFailureExitsThreeWithGitsMessage: an action git refused is
// recorded as a failed action, so helm exits 3, not 1 (nothing recorded).
func TestActionFailureExitsThreeWithGitsMessage(t *testing.T) {
	t.Parallel()
	h, _, _ := newGitHubHarness(t)
	h.start("nothing to commit")
	r := h.fails(3, "action", "commit", "--message", "Empty")
	// The commit carries the voyage's witness (the head at the intent).
	assert.Regexp(t, `helm: commit failed on voyage a3b00001 \(recorded as a failed action\): git -c i18n.commitEncoding=UTF-8 commit -m Empty --trailer 'Helm-Voyage: a3b00001-0000-4000-8000-000000000001 \d+:[0-9a-f]{64}' exited with status 1\n`, r.Stderr)
	assert.Contains(t, r.Stderr, "nothing to commit")
	show := h.ok("voyage", "show")
	assert.Contains(t, show, "Logbook:   0 bearings, 1 action (1 failed)\n", "a failure keeps its entry")
	assert.Contains(t, h.ok("log"), "── Action 1 ── ")
	assert.Contains(t, h.ok("log"), "  commit failed: ")

	r = h.fails(2, "action", "push", "--branch", "no-such-branch")
	assert.Contains(t, r.Stderr, "git cannot tell what pushing no-such-branch to origin would do, so nothing was pushed")
	assert.Contains(t, h.ok("voyage", "show"), "Logbook:   0 bearings, 1 action (1 failed)\n", "nothing more was recorded")
}

func TestActionNeedsRoleAndMethodBeforeTouchingTheWorld(t *testing.T) {
	t.Parallel()
	h, srv, _ := newGitHubHarness(t)
	h.start("who")
	delete(h.Env, "HELM_ROLE")
	// bob never gave a role in this voyage: none is remembered for him.
	h.Env["HELM_IDENTITY"] = "bob"
	srv.ClearRequests()
	r := h.fails(2, "action", "create-issue", "--title", "x")
	assert.Contains(t, r.Stderr, "HELM_ROLE")
	assert.Empty(t, srv.Calls())
}

func TestActionGitHub(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "widget crashes"})
	h.start("github actions")
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "widget.rs", "fixed\n")
	g.Git(t, "add", ".")
	h.ok("action", "commit", "-m", "Fix")
	h.ok("action", "push", "--branch", "fix-widget")

	out := h.ok("action", "create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash", "--body", "Fixes #"+itoa(issue), "--reviewer", "dyreby")
	pr := issue + 1
	assert.Equal(t, "Action 3 performed for voyage a3b00001\n  created PR #"+itoa(pr)+"\n", out)
	assert.Equal(t, []string{"dyreby"}, srv.RequestedReviewers("octo/widgets", pr))
	comment := srv.AddReviewComment("octo/widgets", pr, ghtest.ReviewComment{User: "dyreby", Body: "null?", Path: "widget.rs", Line: 1})

	steps := []struct {
		args []string
		want string
	}{
		{[]string{"comment-pull-request", itoa(pr), "--body", "Ready."}, "commented on PR #" + itoa(pr)},
		{[]string{"reply-pull-request", itoa(pr), "--comment", itoa(int(comment)), "--body", "Checked."}, "replied on PR #" + itoa(pr)},
		{[]string{"request-review", itoa(pr), "--reviewer", "alice", "--reviewer", "bob"}, "requested review on PR #" + itoa(pr) + " from alice, bob"},
		{[]string{"merge-pull-request", itoa(pr)}, "merged PR #" + itoa(pr)},
		{[]string{"comment-issue", itoa(issue), "--body", "Fixed by #" + itoa(pr) + "."}, "commented on issue #" + itoa(issue)},
		{[]string{"close-issue", itoa(issue)}, "closed issue #" + itoa(issue)},
		{[]string{"create-issue", "--title", "Follow-up: add a test"}, "created issue #" + itoa(pr+1)},
	}
	for i, s := range steps {
		out := h.ok(append([]string{"action"}, s.args...)...)
		assert.Equal(t, "Action "+itoa(4+i)+" performed for voyage a3b00001\n  "+s.want+"\n", out, "%v", s.args)
	}
	assert.Equal(t, "closed", srv.IssueState("octo/widgets", issue))

	srv.Fail("POST", "repos/octo/widgets/issues/"+itoa(issue)+"/comments", 403, "Resource not accessible by integration")
	r := h.fails(3, "action", "comment-issue", itoa(issue), "--body", "again")
	assert.Contains(t, r.Stderr, "comment-issue failed")
	assert.Contains(t, r.Stderr, "Resource not accessible by integration")
}
