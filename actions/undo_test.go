package actions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/logbook"
)

// invertible is an action that says how to take itself back.
type invertible interface {
	action
	Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error)
}

// performUndo performs a, asks it for its inverse, builds the undo from
// the inverse as recorded (through JSON, as the logbook keeps it), checks
// its dry run touches nothing, and performs it.
func performUndo(t *testing.T, f *fixture, a invertible, wantKind string) (logbook.ActionResult, actions.Undo) {
	t.Helper()
	ctx := context.Background()
	res, err := a.Perform(ctx)
	require.NoError(t, err)
	inv, err := a.Inverse(ctx, res)
	require.NoError(t, err)
	require.Equal(t, wantKind, inv.Kind, "inverse of %s: %+v", a.Kind(), inv)
	data, err := json.Marshal(inv)
	require.NoError(t, err)
	var recorded logbook.Inverse
	require.NoError(t, json.Unmarshal(data, &recorded))
	u, err := actions.FromInverse(ctx, f.r, recorded)
	require.NoError(t, err)
	f.srv.ClearRequests()
	head := f.git.Git(t, "rev-parse", "HEAD")
	assert.NotEmpty(t, u.DryRun(t.Context()))
	assert.Empty(t, f.srv.Requests(), "a dry run sends nothing")
	assert.Equal(t, head, f.git.Git(t, "rev-parse", "HEAD"), "a dry run changes nothing")
	_, err = u.Target(ctx)
	require.NoError(t, err)
	return res, u
}

// Each GitHub action's undo, performed through the real gh against the
// stand-in, leaves the world as it was before the action.
func TestGitHubUndosPutTheWorldBack(t *testing.T) {
	ctx := context.Background()
	const repo = "octo/widgets"
	tests := []struct {
		name     string
		build    func(f *fixture) invertible
		wantKind string
		check    func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool)
	}{
		{"create-pull-request", func(f *fixture) invertible {
			f.git.Git(t, "push", "-q", "origin", "main:feature")
			return must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Branch: "feature", Title: "T", Base: "trunk"}))
		}, "close-pull-request", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			assert.Equal(t, map[bool]string{false: "open", true: "closed"}[undone], f.srv.IssueState(repo, res.Number))
		}},
		{"comment-pull-request", func(f *fixture) invertible {
			return must[*actions.CommentPullRequest](t)(actions.NewCommentPullRequest(f.r, actions.CommentPullRequest{Number: f.pr, Body: "LGTM"}))
		}, "delete-comment", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			comments, _ := f.srv.CommentIDs(repo, f.pr)
			assert.Equal(t, !undone, len(comments) == 1 && comments[0] == res.CommentID, "%v", comments)
		}},
		{"reply-pull-request", func(f *fixture) invertible {
			return must[*actions.ReplyPullRequest](t)(actions.NewReplyPullRequest(f.r, actions.ReplyPullRequest{Number: f.pr, CommentID: f.inlineID, Body: "done"}))
		}, "delete-review-comment", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			_, review := f.srv.CommentIDs(repo, f.pr)
			want := []int64{f.inlineID}
			if !undone {
				want = append(want, res.CommentID)
			}
			assert.Equal(t, want, review)
		}},
		{"request-review", func(f *fixture) invertible {
			return must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"dyreby", "octo/core"}}))
		}, "remove-review-request", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			if undone {
				assert.Empty(t, f.srv.RequestedReviewers(repo, f.pr))
			} else {
				assert.Equal(t, []string{"dyreby", "core"}, f.srv.RequestedReviewers(repo, f.pr))
			}
		}},
		{"create-issue", func(f *fixture) invertible {
			return must[*actions.CreateIssue](t)(actions.NewCreateIssue(f.r, actions.CreateIssue{Title: "Flaky test"}))
		}, "close-issue", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			assert.Equal(t, map[bool]string{false: "open", true: "closed"}[undone], f.srv.IssueState(repo, res.Number))
		}},
		{"close-issue", func(f *fixture) invertible {
			return must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: f.iss}))
		}, "reopen-issue", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			assert.Equal(t, map[bool]string{false: "closed", true: "open"}[undone], f.srv.IssueState(repo, f.iss))
		}},
		{"comment-issue", func(f *fixture) invertible {
			return must[*actions.CommentIssue](t)(actions.NewCommentIssue(f.r, actions.CommentIssue{Number: f.iss, Body: "Seen it"}))
		}, "delete-comment", func(t *testing.T, f *fixture, res logbook.ActionResult, undone bool) {
			comments, _ := f.srv.CommentIDs(repo, f.iss)
			assert.Equal(t, !undone, len(comments) == 1 && comments[0] == res.CommentID, "%v", comments)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			res, u := performUndo(t, f, tt.build(f), tt.wantKind)
			tt.check(t, f, res, false)
			got, err := u.Perform(ctx)
			require.NoError(t, err)
			tt.check(t, f, res, true)
			assert.Equal(t, res.Number, got.Number, "the undo names what it took back")
			// Done twice, GitHub refuses (or it is a no-op that changes nothing).
			if _, err := u.Perform(ctx); err == nil {
				tt.check(t, f, res, true)
			}
		})
	}
}

func TestUnpushedCommitIsResetToItsParent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	parent := f.git.Git(t, "rev-parse", "HEAD")
	f.git.WriteFile(t, "widget.go", "package widget\n")
	f.git.Git(t, "add", "widget.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "Add widget"}))
	res, u := performUndo(t, f, commit, "reset-commit")
	assert.Contains(t, u.DryRun(t.Context()), "git reset --soft '"+res.SHA+"^'")

	got, err := u.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, logbook.ActionResult{SHA: parent, Branch: "main"}, got)
	assert.Equal(t, parent, f.git.Git(t, "rev-parse", "HEAD"))
	assert.Equal(t, "A  widget.go", f.git.Git(t, "status", "--porcelain"), "its changes are staged again, as before the commit")
}

func TestResetIsRefusedWhenLaterCommitsExistOrAnotherBranchIsOut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.WriteFile(t, "a.go", "package a\n")
	f.git.Git(t, "add", "a.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "a"}))
	res, u := performUndo(t, f, commit, "reset-commit")
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "later")
	later := f.git.Git(t, "rev-parse", "HEAD")
	_, err := u.Perform(ctx)
	assert.ErrorContains(t, err, "later commits were made on it; undo them first")
	assert.Equal(t, later, f.git.Git(t, "rev-parse", "HEAD"), "nothing moved")

	f.git.Git(t, "reset", "-q", "--hard", res.SHA)
	f.git.Git(t, "checkout", "-q", "-b", "other")
	_, err = u.Perform(ctx)
	assert.ErrorContains(t, err, "the commit landed on branch main, but branch other is checked out: switch to branch main first")
}

// Once pushed, a commit is taken back by a revert commit, never by a
// reset (which would need a force push). The push that moved main has no
// inverse.
func TestPushedCommitIsReverted(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.WriteFile(t, "widget.go", "package widget\n")
	f.git.Git(t, "add", "widget.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "Add widget"}))
	res, err := commit.Perform(ctx)
	require.NoError(t, err)
	inv, err := commit.Inverse(ctx, res)
	require.NoError(t, err)

	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "main"}))
	pres, err := push.Perform(ctx)
	require.NoError(t, err)
	pinv, err := push.Inverse(ctx, pres)
	require.NoError(t, err)
	assert.Empty(t, pinv.Kind)
	assert.Contains(t, pinv.None, "the push moved branch main, which was on the remote already")

	u, err := actions.FromInverse(ctx, f.r, inv)
	require.NoError(t, err)
	require.Equal(t, "revert-commit", u.Kind(), "pushed: revert, not reset")
	assert.Contains(t, u.DryRun(t.Context()), "git -c i18n.commitEncoding=UTF-8 revert --no-edit "+res.SHA)
	got, err := u.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, f.git.Git(t, "rev-parse", "HEAD"), got.SHA)
	assert.Equal(t, res.SHA, f.git.Git(t, "rev-parse", "HEAD^"), "a new commit on top, nothing rewritten")
	assert.Empty(t, f.git.Git(t, "ls-files", "widget.go"), "the revert takes the file back out")
	assert.Equal(t, res.SHA, f.git.BareRef(t, "main"), "the revert is not pushed")

	// A reset recorded before the push, performed after it, is refused.
	reset, err := json.Marshal(map[string]string{"sha": res.SHA, "branch": "main"})
	require.NoError(t, err)
	f.git.Git(t, "reset", "-q", "--hard", res.SHA)
	stale := logbook.Inverse{Kind: "reset-commit", Params: reset}
	data, _ := json.Marshal(stale)
	require.NoError(t, json.Unmarshal(data, &stale))
	r := must[actions.Undo](t)(actions.FromInverse(ctx, f.r, stale))
	assert.Equal(t, "revert-commit", r.Kind())
}

func TestPushThatCreatedABranchIsUndoneByDeletingIt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "fix-widget")
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "fix")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "fix-widget"}))
	res, u := performUndo(t, f, push, "delete-remote-branch")
	assert.Equal(t, res.SHA, f.git.BareRef(t, "fix-widget"))
	assert.Contains(t, u.DryRun(t.Context()), "git push --porcelain --force-with-lease=refs/heads/fix-widget:"+res.SHA+" origin --delete fix-widget")
	got, err := u.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, logbook.ActionResult{Branch: "fix-widget", SHA: res.SHA}, got)
	assert.Empty(t, f.git.BareRef(t, "fix-widget"), "the branch is gone from the remote")
	assert.NotEmpty(t, f.git.Git(t, "rev-parse", "fix-widget"), "the local branch stays")
}

func TestDeleteRemoteBranchRefusesABranchThatMoved(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "fix-widget")
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "fix")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "fix-widget"}))
	_, u := performUndo(t, f, push, "delete-remote-branch")
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "more")
	f.git.Git(t, "push", "-q", "origin", "fix-widget")
	moved := f.git.BareRef(t, "fix-widget")
	_, err := u.Perform(ctx)
	assert.ErrorContains(t, err, "delete-remote-branch: [rejected] (stale info)")
	assert.Equal(t, moved, f.git.BareRef(t, "fix-widget"), "someone else's push is kept")
}

func TestMergeHasNoInverse(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	merge := must[*actions.MergePullRequest](t)(actions.NewMergePullRequest(f.r, actions.MergePullRequest{Number: f.pr}))
	inv, err := merge.Inverse(ctx, logbook.ActionResult{Number: f.pr})
	require.NoError(t, err)
	assert.Empty(t, inv.Kind)
	assert.Contains(t, inv.None, "cannot be unmerged")
	_, err = actions.FromInverse(ctx, f.r, inv)
	assert.ErrorIs(t, err, actions.ErrInvalid)
	assert.ErrorContains(t, err, "cannot be unmerged")
}

func TestFromInverseRefusesWhatItCannotBuild(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, inv := range []logbook.Inverse{
		{Kind: "format-disk", Params: json.RawMessage(`{}`)},
		{Kind: "close-pull-request", Params: json.RawMessage(`{"number":1,"force":true}`)},
		{Kind: "close-pull-request", Params: json.RawMessage(`{"number":0}`)},
		{Kind: "reset-commit", Params: json.RawMessage(`{"sha":"--hard"}`)},
		{Kind: "delete-remote-branch", Params: json.RawMessage(`{"branch":"-f","sha":"0123456789"}`)},
		{Kind: "delete-comment", Params: json.RawMessage(`{"number":1}`)},
		{Kind: "remove-review-request", Params: json.RawMessage(`{"number":1,"reviewers":[]}`)},
		{Kind: "close-issue", Params: json.RawMessage(`not json`)},
	} {
		_, err := actions.FromInverse(ctx, f.r, inv)
		assert.ErrorIs(t, err, actions.ErrInvalid, "%s %s", inv.Kind, inv.Params)
	}
}

// A revert that cannot start because the user is in the middle of a
// cherry-pick (their conflict resolution staged) leaves that work alone:
// helm aborts only a revert it started.
func TestRevertLeavesAnOperationInProgressAlone(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.WriteFile(t, "widget.go", "package widget\n")
	f.git.Git(t, "add", "widget.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "Add widget"}))
	res, err := commit.Perform(ctx)
	require.NoError(t, err)
	inv, err := commit.Inverse(ctx, res)
	require.NoError(t, err)
	f.git.Git(t, "push", "-q", "origin", "main")

	// A commit on another branch that conflicts with main, cherry-picked.
	f.git.Git(t, "checkout", "-q", "-b", "side", "HEAD^")
	f.git.WriteFile(t, "widget.go", "package side\n")
	f.git.Git(t, "add", "widget.go")
	f.git.Git(t, "commit", "-q", "-m", "side")
	f.git.Git(t, "checkout", "-q", "main")
	_, err = f.r.Git(ctx, "cherry-pick", "side")
	require.Error(t, err, "the cherry-pick conflicts")
	f.git.WriteFile(t, "widget.go", "package resolved\n")
	f.git.Git(t, "add", "widget.go")

	u, err := actions.FromInverse(ctx, f.r, inv)
	require.NoError(t, err)
	require.Equal(t, "revert-commit", u.Kind())
	_, err = u.Perform(ctx)
	assert.ErrorContains(t, err, "revert-commit: a cherry-pick is in progress in the working tree (CHERRY_PICK_HEAD is ")
	assert.ErrorContains(t, err, "finish it or abort it first, then undo again")
	assert.Equal(t, "M  widget.go", f.git.Git(t, "status", "--porcelain", "--untracked-files=no"), "the resolution stays staged")
	assert.NotEmpty(t, f.git.Git(t, "rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"), "the cherry-pick is still in progress")

	// Once it is finished, the revert conflicts with it: helm's own
	// revert is abandoned, and the tree left as it was.
	f.git.Git(t, "-c", "core.editor=true", "cherry-pick", "--continue")
	head := f.git.Git(t, "rev-parse", "HEAD")
	_, err = u.Perform(ctx)
	assert.ErrorContains(t, err, "revert-commit: ")
	assert.Empty(t, f.git.Git(t, "status", "--porcelain", "--untracked-files=no"), "the tree is clean")
	assert.Equal(t, head, f.git.Git(t, "rev-parse", "HEAD"))
	_, err = f.r.Git(ctx, "rev-parse", "-q", "--verify", "REVERT_HEAD")
	assert.Error(t, err, "no revert is left in progress")
}

// A commit amended (or reset away) since is not followed by later
// commits: the refusal says what happened to it, not to undo others.
func TestResetOfACommitAmendedSince(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.WriteFile(t, "a.go", "package a\n")
	f.git.Git(t, "add", "a.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "a"}))
	res, u := performUndo(t, f, commit, "reset-commit")
	f.git.Git(t, "commit", "-q", "--amend", "-m", "amended")
	amended := f.git.Git(t, "rev-parse", "HEAD")
	_, err := u.Perform(ctx)
	assert.ErrorContains(t, err, "reset-commit: commit "+res.SHA[:7]+" is no longer on branch main (HEAD is "+amended[:7]+", which does not follow it): it was amended or reset away since; take back what is left of it by hand")
	assert.NotContains(t, err.Error(), "later commits")
	assert.Equal(t, amended, f.git.Git(t, "rev-parse", "HEAD"), "nothing moved")
}

// An undo of a commit built where the commit is not (another clone,
// another repository) says so, and where to run it.
func TestCommitUndoWhereTheCommitIsNot(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.WriteFile(t, "a.go", "package a\n")
	f.git.Git(t, "add", "a.go")
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "a"}))
	res, err := commit.Perform(ctx)
	require.NoError(t, err)
	inv, err := commit.Inverse(ctx, res)
	require.NoError(t, err)

	elsewhere := f.srv.GitRepo(t, "octo/gadgets")
	_, err = actions.FromInverse(ctx, f.srv.Runner(t, elsewhere.Dir), inv)
	assert.ErrorContains(t, err, "reset-commit: commit "+res.SHA[:7]+" is not in the repository at "+elsewhere.Dir+": undo it in the working tree where it was made")
}

// A push that found the branch up to date changed nothing: its inverse
// says so, rather than that it moved the branch.
func TestPushUpToDateHasNothingToTakeBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "push", "-q", "origin", "main")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "main"}))
	res, err := push.Perform(ctx)
	require.NoError(t, err)
	inv, err := push.Inverse(ctx, res)
	require.NoError(t, err)
	assert.Empty(t, inv.Kind)
	assert.Equal(t, "the push changed nothing: branch main was up to date on the remote", inv.None)
}

// A commit made in another working tree of the repository (a voyage's
// own) is undone there: the refusal elsewhere names it, rather than
// asking to switch to a branch git will not check out twice.
func TestCommitUndoNamesTheWorktreeItsBranchIsIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt-fix")
	f.git.Git(t, "worktree", "add", "-q", "-b", "fix-widget", wt)
	there := f.srv.Runner(t, wt)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "a.go"), []byte("package a\n"), 0o644))
	_, err := there.Git(ctx, "add", "a.go")
	require.NoError(t, err)
	commit := must[*actions.Commit](t)(actions.NewCommit(there, actions.Commit{Message: "a"}))
	res, err := commit.Perform(ctx)
	require.NoError(t, err)
	inv, err := commit.Inverse(ctx, res)
	require.NoError(t, err)

	u, err := actions.FromInverse(ctx, f.r, inv) // the main working tree
	require.NoError(t, err)
	_, err = u.Perform(ctx)
	assert.ErrorContains(t, err, "reset-commit: the commit landed on branch fix-widget, which is checked out in the working tree "+wt+": undo it there")
}

// A revert of a commit that is not in the branch's history (reset away
// since) is refused: there is nothing of it to take back.
func TestRevertRefusesACommitNotInHistory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "gone")
	gone := f.git.Git(t, "rev-parse", "HEAD")
	f.git.Git(t, "reset", "-q", "--hard", "HEAD^")
	u := must[actions.Undo](t)(actions.FromInverse(ctx, f.r, logbook.Inverse{Kind: "revert-commit", Params: json.RawMessage(`{"sha":"` + gone + `","branch":"main"}`)}))
	head := f.git.Git(t, "rev-parse", "HEAD")
	_, err := u.Perform(ctx)
	assert.ErrorContains(t, err, "revert-commit: commit "+gone[:7]+" is not in the history of branch main: there is nothing of it here to revert")
	assert.Equal(t, head, f.git.Git(t, "rev-parse", "HEAD"))
}

// An undo takes back what its action changed, not more: a review request
// made before stays, and an issue closed before is not reopened.
func TestUndoTakesBackOnlyWhatTheActionChanged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const repo = "octo/widgets"
	before := must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"alice", "octo/core"}}))
	_, err := before.Perform(ctx)
	require.NoError(t, err)
	again := must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"alice", "bob", "octo/core"}}))
	_, u := performUndo(t, f, again, "remove-review-request")
	_, err = u.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "core"}, f.srv.RequestedReviewers(repo, f.pr), "only bob was asked by the action")

	same := must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"alice"}}))
	res, err := same.Perform(ctx)
	require.NoError(t, err)
	inv, err := same.Inverse(ctx, res)
	require.NoError(t, err)
	assert.Equal(t, "everyone it asked was asked already: it changed nothing to take back", inv.None)

	closeIt := must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: f.iss}))
	_, err = closeIt.Perform(ctx)
	require.NoError(t, err)
	closeAgain := must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: f.iss}))
	res, err = closeAgain.Perform(ctx)
	require.NoError(t, err)
	inv, err = closeAgain.Inverse(ctx, res)
	require.NoError(t, err)
	assert.Contains(t, inv.None, "was closed already")
}
