package actions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// targeter is what the guard asks of an action.
type targeter interface {
	Kind() string
	Target(ctx context.Context) (actions.Target, error)
}

func TestGitHubActionTargetsNameRepoAndArgs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "feature")
	for _, tc := range []struct {
		action targeter
		want   actions.Target
	}{
		{must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Title: "Fix crash", Reviewers: []string{"dyreby", "octo/core"}})),
			actions.Target{Repo: "octo/widgets", Branch: "feature", Args: []string{"--branch", "feature", "--title", "Fix crash", "--reviewer", "dyreby", "--reviewer", "octo/core"}}},
		{must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Repo: "octo/other", Branch: "fix", Title: "T", Body: "B", Base: "release"})),
			actions.Target{Repo: "octo/other", Branch: "fix", Args: []string{"--branch", "fix", "--title", "T", "--body", "B", "--base", "release"}}},
		{must[*actions.MergePullRequest](t)(actions.NewMergePullRequest(f.r, actions.MergePullRequest{Number: 42})),
			actions.Target{Repo: "octo/widgets", Args: []string{"42", "--merge-method", "merge"}}},
		{must[*actions.MergePullRequest](t)(actions.NewMergePullRequest(f.r, actions.MergePullRequest{Repo: "octo/other", Number: 7, Method: "squash"})),
			actions.Target{Repo: "octo/other", Args: []string{"7", "--merge-method", "squash"}}},
		{must[*actions.CommentPullRequest](t)(actions.NewCommentPullRequest(f.r, actions.CommentPullRequest{Number: 42, Body: "Rebased on main."})),
			actions.Target{Repo: "octo/widgets", Args: []string{"42", "--body", "Rebased on main."}}},
		{must[*actions.ReplyPullRequest](t)(actions.NewReplyPullRequest(f.r, actions.ReplyPullRequest{Number: 42, CommentID: 1234, Body: "Fixed."})),
			actions.Target{Repo: "octo/widgets", Args: []string{"42", "--comment", "1234", "--body", "Fixed."}}},
		{must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: 42, Reviewers: []string{"dyreby", "alice"}})),
			actions.Target{Repo: "octo/widgets", Args: []string{"42", "--reviewer", "dyreby", "--reviewer", "alice"}}},
		{must[*actions.CreateIssue](t)(actions.NewCreateIssue(f.r, actions.CreateIssue{Title: "Crash"})),
			actions.Target{Repo: "octo/widgets", Args: []string{"--title", "Crash"}}},
		{must[*actions.CreateIssue](t)(actions.NewCreateIssue(f.r, actions.CreateIssue{Title: "Crash", Body: "On reload."})),
			actions.Target{Repo: "octo/widgets", Args: []string{"--title", "Crash", "--body", "On reload."}}},
		{must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: 9})),
			actions.Target{Repo: "octo/widgets", Args: []string{"9"}}},
		{must[*actions.CommentIssue](t)(actions.NewCommentIssue(f.r, actions.CommentIssue{Number: 9, Body: "Fixed by #42."})),
			actions.Target{Repo: "octo/widgets", Args: []string{"9", "--body", "Fixed by #42."}}},
	} {
		t.Run(tc.action.Kind(), func(t *testing.T) {
			got, err := tc.action.Target(ctx)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Empty(t, f.srv.Requests(), "a target asks GitHub nothing")
}

func TestCommitTargetIsTheBranchTheCommitLandsOn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "Fix null check"}))
	head := f.git.Git(t, "rev-parse", "HEAD")

	got, err := commit.Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, actions.Target{Repo: "octo/widgets", Branch: "main", Args: []string{"-m", "Fix null check"}}, got)

	f.git.Git(t, "checkout", "-q", "--detach")
	got, err = commit.Target(ctx)
	require.NoError(t, err, "a commit on a detached HEAD is allowed")
	assert.Equal(t, actions.Target{Repo: "octo/widgets", Args: []string{"-m", "Fix null check"}}, got)

	f.git.Git(t, "checkout", "-q", "--orphan", "fresh")
	got, err = commit.Target(ctx)
	require.NoError(t, err, "a branch with no commit yet")
	assert.Equal(t, "fresh", got.Branch)

	assert.Equal(t, head, f.git.Git(t, "rev-parse", "main"), "nothing was committed")
	assert.Equal(t, "fresh", f.git.Git(t, "symbolic-ref", "--short", "HEAD"), "nothing was checked out")
}

func TestPushTargetResolvesTheBranch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "fix-widget")

	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{}))
	got, err := push.Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, actions.Target{Repo: "octo/widgets", Branch: "fix-widget", Args: []string{"origin", "fix-widget"},
		Refs: []logbook.RefUpdate{{Ref: "refs/heads/fix-widget"}}}, got)
	assert.Equal(t, "fix-widget", push.Branch, "the branch checked is the branch pushed")
	assert.Empty(t, f.git.BareRef(t, "fix-widget"), "nothing was pushed")

	// Named, and the checkout moved on: the target is the branch named.
	f.git.Git(t, "checkout", "-q", "main")
	got, err = push.Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, "fix-widget", got.Branch)

	f.git.Git(t, "checkout", "-q", "--detach")
	_, err = must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{})).Target(ctx)
	assert.ErrorIs(t, err, actions.ErrDetachedHead)
	assert.ErrorIs(t, err, actions.ErrInvalid)
}

func TestPushTargetNamesTheRemotesRepository(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// upstream names octo/upstream, and git rewrites it to a local path:
	// no network, and the repository is still the one it names.
	upstream := t.TempDir()
	f.git.Git(t, "init", "-q", "--bare", upstream)
	f.git.Git(t, "config", "url."+upstream+".insteadOf", "git@github.com:octo/upstream.git")
	f.git.Git(t, "remote", "add", "upstream", "git@github.com:octo/upstream.git")
	local := t.TempDir()
	f.git.Git(t, "init", "-q", "--bare", local)
	f.git.Git(t, "remote", "add", "local", local)
	for _, tc := range []struct {
		remote, repo string
	}{
		{"upstream", "octo/upstream"},
		{"local", ""}, // a path names no GitHub repository
	} {
		t.Run(tc.remote, func(t *testing.T) {
			got, err := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Remote: tc.remote, Branch: "main"})).Target(ctx)
			require.NoError(t, err)
			assert.Equal(t, actions.Target{Repo: tc.repo, Branch: "main", Args: []string{tc.remote, "main"},
				Refs: []logbook.RefUpdate{{Ref: "refs/heads/main"}}}, got)
		})
	}
	_, err := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Remote: "missing", Branch: "main"})).Target(ctx)
	assert.ErrorIs(t, err, actions.ErrInvalid, "no such remote: git cannot say what the push would do")

	// The runner's Repository is one more repository for origin: rules
	// see it and the URLs' own.
	r := *f.r
	r.Repository = "octo/other"
	got, err := must[*actions.Push](t)(actions.NewPush(&r, actions.Push{Branch: "main"})).Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, "octo/other", got.Repo)
	assert.Equal(t, []string{"octo/widgets"}, got.Repos)
	got, err = must[*actions.Commit](t)(actions.NewCommit(&r, actions.Commit{Message: "m"})).Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, "octo/other", got.Repo)
}

func TestTargetWithoutAGitHubRepository(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "remote", "set-url", "origin", f.git.Bare)

	got, err := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "m"})).Target(ctx)
	require.NoError(t, err, "a git action needs no GitHub repository")
	assert.Equal(t, actions.Target{Branch: "main", Args: []string{"-m", "m"}}, got)
	got, err = must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{})).Target(ctx)
	require.NoError(t, err)
	assert.Equal(t, actions.Target{Branch: "main", Args: []string{"origin", "main"}, Refs: []logbook.RefUpdate{{Ref: "refs/heads/main"}}}, got)

	_, err = must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: 1})).Target(ctx)
	require.Error(t, err, "a GitHub action does")
	assert.Contains(t, err.Error(), "close-issue: find the GitHub repository")
	got, err = must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Repo: "octo/widgets", Number: 1})).Target(ctx)
	require.NoError(t, err, "unless it names one")
	assert.Equal(t, "octo/widgets", got.Repo)
}

func TestTargetChecksTheAction(t *testing.T) {
	r := &runner.Runner{Home: t.TempDir(), Identity: "john", Dir: t.TempDir()}
	for _, a := range []targeter{
		&actions.Commit{Runner: r},
		&actions.Push{Runner: r, Branch: "-f"},
		&actions.CreatePullRequest{Runner: r, Branch: "b"},
		&actions.MergePullRequest{Runner: r},
		&actions.CommentPullRequest{Runner: r, Number: 1},
		&actions.ReplyPullRequest{Runner: r, Number: 1, Body: "x"},
		&actions.RequestReview{Runner: r, Number: 1},
		&actions.CreateIssue{Runner: r},
		&actions.CloseIssue{Runner: r},
		&actions.CommentIssue{Runner: r, Number: 1},
	} {
		t.Run(a.Kind(), func(t *testing.T) {
			_, err := a.Target(context.Background())
			assert.ErrorIs(t, err, actions.ErrInvalid)
		})
	}
	_, err := (&actions.Commit{Message: "m"}).Target(context.Background())
	assert.ErrorContains(t, err, "no runner")
}

// TestPushTargetIsTheBranchGitUpdates: a branch named as git reads it
// (HEAD, @, refs/heads/NAME) is the branch the push updates, and the one
// guard rules see: "nobody pushes to main" must see main.
func TestPushTargetIsTheBranchGitUpdates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "ahead of the remote")
	before := f.git.BareRef(t, "main")
	for _, name := range []string{"HEAD", "@", "refs/heads/main"} {
		t.Run(name, func(t *testing.T) {
			push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: name}))
			got, err := push.Target(ctx)
			require.NoError(t, err)
			assert.Equal(t, "main", got.Branch)
			assert.Equal(t, []logbook.RefUpdate{{Ref: "refs/heads/main"}}, got.Refs)
		})
	}
	assert.Equal(t, before, f.git.BareRef(t, "main"), "nothing was pushed")

	// Performed, it reports the branch it pushed, and succeeds.
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "HEAD"}))
	res, err := push.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", res.Branch)
	assert.Equal(t, f.git.Git(t, "rev-parse", "HEAD"), f.git.BareRef(t, "main"))
}
