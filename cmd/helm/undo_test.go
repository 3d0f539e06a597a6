package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
)

// TestUndoEveryInvertibleAction undoes each action that has an inverse,
// through the real git (a bare remote) and the real gh (the loopback
// stand-in), and checks the world is back as it was and the story links
// both entries.
func TestUndoEveryInvertibleAction(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	const repo = "octo/widgets"
	issue := srv.AddIssue(repo, ghtest.Issue{Title: "widget crashes"})
	h.start("undo")
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	base := g.Git(t, "rev-parse", "HEAD")

	// An unpushed commit: reset to its parent, its changes staged again.
	g.WriteFile(t, "widget.rs", "fixed\n")
	g.Git(t, "add", ".")
	h.ok("action", "commit", "-m", "Fix") // 1
	assert.Contains(t, h.ok("undo", "1", "--dry-run"), "git reset --soft")
	assert.NotEqual(t, base, g.Git(t, "rev-parse", "HEAD"), "a dry run changes nothing")
	out := h.ok("undo", "1")
	assert.Equal(t, "Action 2 performed for voyage a3b00001\n  reset fix-widget to "+base[:7]+", taking back a commit (undoes 1)\n", out)
	assert.Equal(t, base, g.Git(t, "rev-parse", "HEAD"))
	assert.Equal(t, "A  widget.rs", g.Git(t, "status", "--porcelain"))

	// A push that created a branch: the remote branch is deleted.
	h.ok("action", "commit", "-m", "Fix again") // 3
	fix := g.Git(t, "rev-parse", "HEAD")
	h.ok("action", "push", "--branch", "fix-widget") // 4
	require.Equal(t, fix, g.BareRef(t, "fix-widget"))
	assert.Equal(t, "Action 5 performed for voyage a3b00001\n  deleted remote branch fix-widget (undoes 4)\n", h.ok("undo", "4"))
	assert.Empty(t, g.BareRef(t, "fix-widget"), "the remote branch is gone")

	// A pushed commit: a revert commit, never a force push.
	h.ok("action", "push", "--branch", "fix-widget") // 6
	out = h.ok("undo", "3")
	revert := g.Git(t, "rev-parse", "HEAD")
	assert.Equal(t, "Action 7 performed for voyage a3b00001\n  reverted a commit on fix-widget ("+revert[:7]+") (undoes 3)\n", out)
	assert.Equal(t, fix, g.Git(t, "rev-parse", "HEAD^"))
	assert.Empty(t, g.Git(t, "ls-files", "widget.rs"))
	h.ok("action", "push", "--branch", "fix-widget") // 8: moved a branch already there
	r := h.fails(2, "undo", "8")
	assert.Contains(t, r.Stderr, "entry 8 (push) has no inverse: the push moved branch fix-widget, which was on the remote already")
	assert.Equal(t, revert, g.BareRef(t, "fix-widget"))

	// GitHub: each undo takes back what its action left.
	h.ok("action", "create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash") // 9
	pr := issue + 1
	inline := srv.AddReviewComment(repo, pr, ghtest.ReviewComment{User: "dyreby", Body: "null?", Path: "widget.rs", Line: 1})
	for _, args := range [][]string{
		{"comment-pull-request", itoa(pr), "--body", "Ready."},                           // 10
		{"reply-pull-request", itoa(pr), "--comment", itoa(int(inline)), "--body", "ok"}, // 11
		{"request-review", itoa(pr), "--reviewer", "alice", "--reviewer", "octo/core"},   // 12
		{"comment-issue", itoa(issue), "--body", "Fixed by #" + itoa(pr) + "."},          // 13
		{"close-issue", itoa(issue)},                                                     // 14
		{"create-issue", "--title", "Follow-up"},                                         // 15
	} {
		h.ok(append([]string{"action"}, args...)...)
	}
	followUp := pr + 1
	comments, review := srv.CommentIDs(repo, pr)
	require.Len(t, comments, 1)
	require.Len(t, review, 2)
	issueComments, _ := srv.CommentIDs(repo, issue)
	require.Len(t, issueComments, 1)
	require.Equal(t, []string{"alice", "core"}, srv.RequestedReviewers(repo, pr))

	undos := []struct {
		n    int
		want string
	}{
		{10, fmt.Sprintf("deleted comment %d on #%d", comments[0], pr)},
		{11, fmt.Sprintf("deleted review comment %d on PR #%d", review[1], pr)},
		{12, "removed the review request on PR #" + itoa(pr) + " from alice, octo/core"},
		{13, fmt.Sprintf("deleted comment %d on #%d", issueComments[0], issue)},
		{14, "reopened issue #" + itoa(issue)},
		{15, "closed issue #" + itoa(followUp)},
		{9, "closed PR #" + itoa(pr)},
	}
	next := 16
	for _, u := range undos {
		out := h.ok("undo", itoa(u.n))
		assert.Equal(t, fmt.Sprintf("Action %d performed for voyage a3b00001\n  %s (undoes %d)\n", next, u.want, u.n), out)
		next++
	}
	comments, review = srv.CommentIDs(repo, pr)
	assert.Empty(t, comments)
	assert.Equal(t, []int64{inline}, review)
	issueComments, _ = srv.CommentIDs(repo, issue)
	assert.Empty(t, issueComments)
	assert.Empty(t, srv.RequestedReviewers(repo, pr))
	assert.Equal(t, "open", srv.IssueState(repo, issue))
	assert.Equal(t, "closed", srv.IssueState(repo, followUp))
	assert.Equal(t, "closed", srv.IssueState(repo, pr))

	story := h.ok("log")
	for _, u := range append(undos, struct {
		n    int
		want string
	}{1, ""}, struct {
		n    int
		want string
	}{3, ""}, struct {
		n    int
		want string
	}{4, ""}) {
		assert.Regexp(t, fmt.Sprintf(`(?m)^── Action %d ── .*\n  .* \(undone by \d+\)$`, u.n), story)
	}
	assert.Contains(t, story, "  closed PR #"+itoa(pr)+" (undoes 9)\n")

	// The JSON story carries the links.
	var entries []logbook.Entry
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &struct {
		Entries *[]logbook.Entry `json:"entries"`
	}{&entries}))
	require.Len(t, entries, next-1)
	assert.Equal(t, 2, entries[0].Action.UndoneBy)
	assert.Equal(t, 1, entries[1].Action.Undoes)
	assert.Equal(t, "reset-commit", entries[0].Action.Inverse.Kind)
}

// TestUndoRefusals: what cannot be undone says why, records nothing and
// touches nothing; a guard rule refuses an undo as the action it is.
func TestUndoRefusals(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	const repo = "octo/widgets"
	h.start("refusals")
	g.Git(t, "push", "-q", "origin", "main:feature")
	h.ok("action", "create-pull-request", "--branch", "feature", "--title", "Feature") // 1
	pr := 1
	h.ok("action", "merge-pull-request", itoa(pr)) // 2
	h.ok("note", "merged")                         // 3
	h.ok("action", "create-issue", "--title", "x") // 4
	h.ok("undo", "4")                              // 5

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"undo", "2"}, "helm: undo entry 2 on voyage a3b00001-0000-4000-8000-000000000001: cannot be undone: entry 2 (merge-pull-request) has no inverse: a merged pull request cannot be unmerged (GitHub has no such operation): revert its merge commit in a new pull request instead"},
		{[]string{"undo", "3"}, "entry 3 is a note, not an action"},
		{[]string{"undo", "5"}, "entry 5 (close-issue) is the undo of entry 4, and an undo is not undone: perform that action again instead"},
		{[]string{"undo", "4"}, "entry 4 (create-issue) was undone already, by entry 5"},
		{[]string{"undo", "9"}, "the story has no entry 9 (it has 5)"},
		{[]string{"undo", "2", "--dry-run"}, "cannot be unmerged"},
	}
	for _, tt := range tests {
		srv.ClearRequests()
		r := h.fails(2, tt.args...)
		assert.Contains(t, r.Stderr, tt.want, "%v", tt.args)
		assert.Contains(t, r.Stderr, "\nTry: helm log, to see which actions were performed and which were undone\n", "%v", tt.args)
		assert.Empty(t, r.Stdout)
		assert.Empty(t, srv.Calls(), "%v: nothing reaches GitHub", tt.args)
	}
	for _, args := range [][]string{{"undo"}, {"undo", "x"}, {"undo", "0"}, {"undo", "1", "2"}} {
		h.fails(2, args...)
	}
	assert.Contains(t, h.ok("voyage", "show"), "Logbook:   0 bearings, 4 actions")

	// A guard rule that denies closing pull requests denies the undo of one.
	h.writeHome("policy.toml", `
[[rule]]
name = "pull requests stay open"
action = "close-pull-request"
decision = "deny"
`)
	h.ok("action", "create-pull-request", "--branch", "feature", "--title", "Again") // 7, after the policy entry 6
	srv.ClearRequests()
	r := h.fails(4, "undo", "7")
	assert.Contains(t, r.Stderr, `perform close-pull-request on voyage a3b00001-0000-4000-8000-000000000001: refused by a guard rule: denied by rule "pull requests stay open"`)
	assert.Empty(t, srv.Calls(), "the stand-in sees no request")
	assert.Equal(t, "open", srv.IssueState(repo, 3))
	story := h.ok("log")
	assert.Contains(t, story, "── Policy 6 ── 2026-02-26T17:00:00Z\n  guard rules sha256:", "the rules changed mid-voyage")
	assert.Contains(t, story, "── Action 7 ── 2026-02-26T17:00:00Z\n  created PR #3\n")
	assert.Contains(t, story, "── Action 8 ── 2026-02-26T17:00:00Z\n  close-pull-request denied by rule")
	assert.True(t, strings.Contains(h.ok("undo", "7", "--dry-run"), "repos/octo/widgets/pulls/3"), "still undoable")
}

// An undo whose parameters a redaction rule added since finds secret is
// refused as any action is, and its hint's flag is one helm undo takes.
func TestUndoWithParametersFoundSecretSince(t *testing.T) {
	t.Parallel()
	h, srv, _ := newGitHubHarness(t)
	h.start("secret since")
	h.ok("action", "create-issue", "--title", "x") // 1
	h.writeHome("config.toml", "[[redact.patterns]]\nname = \"octo-repos\"\nregexp = \"octo/[a-z]+\"\n")
	srv.ClearRequests()
	r := h.fails(2, "undo", "1")
	assert.Contains(t, r.Stderr, "the action's parameters hold a secret (octo-repos): nothing was run or recorded")
	assert.Contains(t, r.Stderr, "\nTry: helm undo 1 --allow-secret, or take the secret out\n")
	assert.Empty(t, srv.Calls())
	assert.Equal(t, "Action 2 performed for voyage a3b00001\n  closed issue #1 (undoes 1)\n", h.ok("undo", "1", "--allow-secret"))
}
