package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// action is what the root package expects of an action, structurally.
type action interface {
	Kind() string
	Perform(ctx context.Context) (logbook.ActionResult, error)
	DryRun(ctx context.Context) string
}

type fixture struct {
	srv      *ghtest.Server
	git      *ghtest.GitRepo
	r        *runner.Runner
	pr, iss  int
	inlineID int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "trunk")
	g := srv.GitRepo(t, "octo/widgets")
	g.Git(t, "push", "-q", "origin", "main:trunk")
	f := &fixture{srv: srv, git: g, r: srv.Runner(t, g.Dir)}
	f.pr = srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix", Head: "fix", HeadSHA: "abc", User: "john-agent"})
	f.iss = srv.AddIssue("octo/widgets", ghtest.Issue{Title: "Crash"})
	f.inlineID = srv.AddReviewComment("octo/widgets", f.pr, ghtest.ReviewComment{User: "dyreby", Body: "nil?", Path: "w.go", Line: 3})
	srv.ClearRequests()
	return f
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		require.NoError(t, err)
		return v
	}
}

func TestGitHubActionsSendTheirRequests(t *testing.T) {
	f := newFixture(t)
	base := "repos/octo/widgets"
	body := "Multi-line\n\"quoted\" @file `code`"
	for _, tc := range []struct {
		name   string
		action func() action
		method string
		path   string
		body   map[string]any
		want   func(got logbook.ActionResult) logbook.ActionResult
		after  func(t *testing.T)
		read   string // a GET before the write
	}{
		{"comment-pull-request", func() action {
			return must[*actions.CommentPullRequest](t)(actions.NewCommentPullRequest(f.r, actions.CommentPullRequest{Number: f.pr, Body: body}))
		},
			"POST", base + "/issues/1/comments", map[string]any{"body": body},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 1, CommentID: got.CommentID, URL: fmt.Sprintf("%s/octo/widgets/pull/1#issuecomment-%d", f.srv.URL, got.CommentID)}
			}, nil, ""},
		{"reply-pull-request", func() action {
			return must[*actions.ReplyPullRequest](t)(actions.NewReplyPullRequest(f.r, actions.ReplyPullRequest{Number: f.pr, CommentID: f.inlineID, Body: "Fixed in abc."}))
		},
			"POST", base + "/pulls/1/comments/" + fmt.Sprint(f.inlineID) + "/replies", map[string]any{"body": "Fixed in abc."},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 1, CommentID: got.CommentID, URL: fmt.Sprintf("%s/octo/widgets/pull/1#discussion_r%d", f.srv.URL, got.CommentID)}
			}, nil, ""},
		{"request-review", func() action {
			return must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"dyreby", "octo/core"}}))
		},
			"POST", base + "/pulls/1/requested_reviewers", map[string]any{"reviewers": []any{"dyreby"}, "team_reviewers": []any{"core"}},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 1, Reviewers: []string{"dyreby", "octo/core"}}
			},
			func(t *testing.T) {
				assert.Equal(t, []string{"dyreby", "core"}, f.srv.RequestedReviewers("octo/widgets", f.pr))
			}, base + "/pulls/1"},
		{"merge-pull-request", func() action {
			return must[*actions.MergePullRequest](t)(actions.NewMergePullRequest(f.r, actions.MergePullRequest{Number: f.pr, Method: "squash"}))
		},
			"PUT", base + "/pulls/1/merge", map[string]any{"merge_method": "squash"},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 1, SHA: mergeSHA(t, f)}
			},
			func(t *testing.T) { assert.Equal(t, "closed", f.srv.IssueState("octo/widgets", f.pr)) }, ""},
		{"create-issue", func() action {
			return must[*actions.CreateIssue](t)(actions.NewCreateIssue(f.r, actions.CreateIssue{Title: "New bug", Body: body}))
		},
			"POST", base + "/issues", map[string]any{"title": "New bug", "body": body},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 3, URL: f.srv.URL + "/octo/widgets/issues/3"}
			}, nil, ""},
		{"comment-issue", func() action {
			return must[*actions.CommentIssue](t)(actions.NewCommentIssue(f.r, actions.CommentIssue{Number: f.iss, Body: "On it."}))
		},
			"POST", base + "/issues/2/comments", map[string]any{"body": "On it."},
			func(got logbook.ActionResult) logbook.ActionResult {
				return logbook.ActionResult{Number: 2, CommentID: got.CommentID, URL: fmt.Sprintf("%s/octo/widgets/issues/2#issuecomment-%d", f.srv.URL, got.CommentID)}
			}, nil, ""},
		{"close-issue", func() action {
			return must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: f.iss}))
		},
			"PATCH", base + "/issues/2", map[string]any{"state": "closed"},
			func(got logbook.ActionResult) logbook.ActionResult { return logbook.ActionResult{Number: 2} },
			func(t *testing.T) { assert.Equal(t, "closed", f.srv.IssueState("octo/widgets", f.iss)) }, base + "/issues/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.srv.ClearRequests()
			a := tc.action()
			assert.Equal(t, tc.name, a.Kind())

			dry := a.DryRun(t.Context())
			assert.Empty(t, f.srv.Requests(), "a dry run sends nothing")
			assert.Contains(t, dry, "gh api -X "+tc.method+" "+tc.path+" --input -")
			assert.Contains(t, dry, "GH_CONFIG_DIR=")

			res, err := a.Perform(context.Background())
			require.NoError(t, err)
			reqs := f.srv.Requests()
			if tc.read != "" { // what the inverse must know, read first
				require.Len(t, reqs, 2)
				assert.Equal(t, "GET "+tc.read, reqs[0].String())
				assert.Contains(t, dry, "gh api "+tc.read+"\n")
				reqs = reqs[1:]
			}
			require.Len(t, reqs, 1)
			assert.Equal(t, tc.method, reqs[0].Method)
			assert.Equal(t, tc.path, reqs[0].Path)
			assert.Equal(t, tc.body, reqs[0].Body)
			assert.Equal(t, tc.want(res), res)
			if res.URL != "" && res.CommentID != 0 {
				assert.NotEqual(t, f.inlineID, res.CommentID, "a new comment")
			}
			if tc.after != nil {
				tc.after(t)
			}
		})
	}
}

// mergeSHA reads the merge commit the stand-in recorded.
func mergeSHA(t *testing.T, f *fixture) string {
	out, err := f.r.GH(context.Background(), "api", "repos/octo/widgets/pulls/1")
	require.NoError(t, err)
	var pr struct {
		SHA string `json:"merge_commit_sha"`
	}
	require.NoError(t, json.Unmarshal(out, &pr))
	require.NotEmpty(t, pr.SHA)
	return pr.SHA
}

func TestGitHubActionFailuresCarryGHMessage(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name   string
		action action
		want   string
	}{
		{"merge twice", func() action {
			a := must[*actions.MergePullRequest](t)(actions.NewMergePullRequest(f.r, actions.MergePullRequest{Number: f.pr}))
			_, err := a.Perform(context.Background())
			require.NoError(t, err)
			return a
		}(), "gh: Pull Request is not mergeable (HTTP 405)"},
		{"comment on missing issue", must[*actions.CommentIssue](t)(actions.NewCommentIssue(f.r, actions.CommentIssue{Number: 99, Body: "x"})), "gh: Not Found (HTTP 404)"},
		{"reply to missing comment", must[*actions.ReplyPullRequest](t)(actions.NewReplyPullRequest(f.r, actions.ReplyPullRequest{Number: f.pr, CommentID: 4242, Body: "x"})), "gh: Not Found (HTTP 404)"},
		{"review by the author", must[*actions.RequestReview](t)(actions.NewRequestReview(f.r, actions.RequestReview{Number: f.pr, Reviewers: []string{"john-agent"}})), "Validation Failed (HTTP 422)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.action.Perform(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), tc.action.Kind()+": "), err.Error())
			assert.Equal(t, logbook.ActionResult{}, res)
		})
	}
}

func TestCommitPushAndOpenPullRequest(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "fix-widget")
	f.git.WriteFile(t, "widget.go", "package widget\n")
	f.git.Git(t, "add", "widget.go")

	commit := must[*actions.Commit](t)(actions.NewCommit(f.r, actions.Commit{Message: "Fix null check in widget init"}))
	assert.True(t, strings.HasSuffix(commit.DryRun(t.Context()), "GIT_TERMINAL_PROMPT=0 git -c i18n.commitEncoding=UTF-8 commit -m 'Fix null check in widget init'"), commit.DryRun(t.Context()))
	assert.True(t, strings.HasPrefix(commit.DryRun(t.Context()), "cd "+f.git.Dir+" && "), commit.DryRun(t.Context()))
	assert.Equal(t, "1", f.git.Git(t, "rev-list", "--count", "HEAD"), "a dry run commits nothing")
	res, err := commit.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, f.git.Git(t, "rev-parse", "HEAD"), res.SHA)
	assert.Equal(t, "Fix null check in widget init", f.git.Git(t, "log", "-1", "--format=%s"))

	_, err = commit.Perform(ctx)
	require.Error(t, err, "nothing to commit")
	assert.Contains(t, err.Error(), "nothing to commit")
	assert.Contains(t, err.Error(), "commit: git -c i18n.commitEncoding=UTF-8 commit -m")

	// Opening the pull request before pushing: the stand-in, like GitHub,
	// rejects an unknown head branch.
	pr := must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Branch: "fix-widget", Title: "Fix widget crash", Body: "Body", Reviewers: []string{"dyreby"}}))
	_, err = pr.Perform(ctx)
	assert.ErrorContains(t, err, "Validation Failed (HTTP 422)")

	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "fix-widget"}))
	assert.Contains(t, push.DryRun(t.Context()), "git push --porcelain origin fix-widget")
	assert.Empty(t, f.git.BareRef(t, "fix-widget"), "a dry run pushes nothing")
	res, err = push.Perform(ctx)
	require.NoError(t, err)
	sha := f.git.Git(t, "rev-parse", "HEAD")
	assert.Equal(t, logbook.ActionResult{Branch: "fix-widget", SHA: sha}, res)
	assert.Equal(t, sha, f.git.BareRef(t, "fix-widget"))

	f.srv.ClearRequests()
	dry := pr.DryRun(t.Context())
	assert.Empty(t, f.srv.Requests())
	assert.Contains(t, dry, "gh api repos/octo/widgets\n")
	assert.Contains(t, dry, `"base":"<default-branch>"`)
	assert.Contains(t, dry, "repos/octo/widgets/pulls/<number>/requested_reviewers")

	res, err = pr.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, logbook.ActionResult{Number: 3, URL: f.srv.URL + "/octo/widgets/pull/3", Reviewers: []string{"dyreby"}}, res)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "GET repos/octo/widgets", reqs[0].String())
	assert.Equal(t, "POST repos/octo/widgets/pulls", reqs[1].String())
	assert.Equal(t, map[string]any{"title": "Fix widget crash", "head": "fix-widget", "base": "trunk", "body": "Body"}, reqs[1].Body)
	assert.Equal(t, "POST repos/octo/widgets/pulls/3/requested_reviewers", reqs[2].String())
	assert.Equal(t, map[string]any{"reviewers": []any{"dyreby"}}, reqs[2].Body)
	assert.Equal(t, sha, f.srv.PullHeadSHA("octo/widgets", 3), "the head commit is the one pushed")
}

func TestCreatePullRequestWithBaseSkipsTheLookup(t *testing.T) {
	f := newFixture(t)
	f.git.Git(t, "push", "-q", "origin", "main:feature")
	a := must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Branch: "feature", Title: "Feature", Base: "main"}))
	res, err := a.Perform(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, res.Number)
	assert.Empty(t, res.Reviewers)
	assert.Equal(t, []string{"POST repos/octo/widgets/pulls"}, f.srv.Calls())
}

func TestCreatePullRequestKeepsResultWhenReviewRequestFails(t *testing.T) {
	f := newFixture(t)
	f.git.Git(t, "push", "-q", "origin", "main:feature")
	f.srv.Fail("POST", "repos/octo/widgets/pulls/3/requested_reviewers", 422, "Reviews may only be requested from collaborators")
	a := must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Branch: "feature", Title: "Feature", Base: "main", Reviewers: []string{"stranger"}}))
	res, err := a.Perform(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pull request #3 was created")
	assert.Contains(t, err.Error(), "Reviews may only be requested from collaborators (HTTP 422)")
	assert.Equal(t, 3, res.Number)
	assert.Empty(t, res.Reviewers)
}

func TestCreatePullRequestWithoutBranchUsesTheCurrentOne(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "feature")
	f.git.Git(t, "push", "-q", "origin", "feature")
	a := must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Title: "Feature", Base: "main"}))
	assert.Contains(t, a.DryRun(t.Context()), "<current-branch>")
	require.NoError(t, a.Resolve(ctx))
	assert.Equal(t, "feature", a.Branch, "the parameters name the branch")
	assert.Contains(t, a.DryRun(t.Context()), `"head":"feature"`)
	res, err := a.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Number)

	f.git.Git(t, "checkout", "-q", "--detach")
	b := must[*actions.CreatePullRequest](t)(actions.NewCreatePullRequest(f.r, actions.CreatePullRequest{Title: "Feature"}))
	_, err = b.Perform(ctx)
	assert.ErrorIs(t, err, actions.ErrDetachedHead)
	assert.ErrorIs(t, err, actions.ErrInvalid)
}

func TestPushGitCannotResolveIsInvalid(t *testing.T) {
	f := newFixture(t)
	before := f.git.BareRef(t, "main")
	a := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "no-such-branch"}))
	_, err := a.Perform(context.Background())
	require.Error(t, err)
	assert.ErrorIs(t, err, actions.ErrInvalid, "nothing was pushed: bad input, not a failed push")
	assert.Contains(t, err.Error(), "src refspec no-such-branch does not match any")
	assert.Equal(t, before, f.git.BareRef(t, "main"))
}

func TestPushWithoutBranchPushesTheCurrentOne(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "checkout", "-q", "-b", "fix-widget")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{}))
	assert.Contains(t, push.DryRun(t.Context()), "git rev-parse --abbrev-ref HEAD\n")
	assert.Contains(t, push.DryRun(t.Context()), "git push --porcelain origin '<current-branch>'")

	require.NoError(t, push.Resolve(ctx))
	sha := f.git.Git(t, "rev-parse", "HEAD")
	assert.Equal(t, "fix-widget", push.Branch, "the parameters name the branch")
	assert.True(t, strings.HasSuffix(push.DryRun(t.Context()), "git push --porcelain --receive-pack=git-receive-pack origin "+sha+":refs/heads/fix-widget"), push.DryRun(t.Context()))
	data, err := json.Marshal(push)
	require.NoError(t, err)
	assert.JSONEq(t, `{"branch":"fix-widget","updates":[{"ref":"refs/heads/fix-widget","new":"`+sha+`","create":true}]}`, string(data))

	// Perform resolves by itself for a caller that did not.
	f.git.Git(t, "checkout", "-q", "-b", "second")
	again := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{}))
	res, err := again.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, logbook.ActionResult{Branch: "second", SHA: sha}, res)
	assert.Equal(t, sha, f.git.BareRef(t, "second"))
}

func TestPushOnDetachedHeadNamesNoBranch(t *testing.T) {
	f := newFixture(t)
	f.git.Git(t, "checkout", "-q", "--detach")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{}))
	err := push.Resolve(context.Background())
	require.Error(t, err)
	assert.ErrorIs(t, err, actions.ErrDetachedHead)
	assert.ErrorIs(t, err, actions.ErrInvalid, "bad input, not a failed push")
	assert.Contains(t, err.Error(), "push: invalid action: HEAD is detached (at ")
	_, err = push.Perform(context.Background())
	assert.ErrorIs(t, err, actions.ErrDetachedHead)
	assert.Empty(t, push.Branch)
}

func TestActionsRepoOverride(t *testing.T) {
	f := newFixture(t)
	f.srv.AddRepo("octo/other", "main")
	r := *f.r
	r.Repository = "octo/other"
	a := must[*actions.CreateIssue](t)(actions.NewCreateIssue(&r, actions.CreateIssue{Title: "Elsewhere"}))
	_, err := a.Perform(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"POST repos/octo/other/issues"}, f.srv.Calls())
}

func TestActionConstructorsValidate(t *testing.T) {
	r := &runner.Runner{Home: t.TempDir(), Identity: "john"}
	for _, tc := range []struct {
		name string
		new  func() error
		want string
	}{
		{"commit empty message", func() error { _, err := actions.NewCommit(r, actions.Commit{Message: "  "}); return err }, "commit message is empty"},
		{"commit no runner", func() error { _, err := actions.NewCommit(nil, actions.Commit{Message: "x"}); return err }, "no runner"},
		{"push option-like branch", func() error { _, err := actions.NewPush(r, actions.Push{Branch: "--force"}); return err }, `branch "--force" is not a valid name`},
		{"push bad remote", func() error { _, err := actions.NewPush(r, actions.Push{Branch: "main", Remote: "-x"}); return err }, "remote"},
		{"pr no title", func() error {
			_, err := actions.NewCreatePullRequest(r, actions.CreatePullRequest{Branch: "b"})
			return err
		}, "title is empty"},
		{"pr option-like branch", func() error {
			_, err := actions.NewCreatePullRequest(r, actions.CreatePullRequest{Branch: "-b", Title: "t"})
			return err
		}, `branch "-b" is not a valid name`},
		{"pr blank reviewer", func() error {
			_, err := actions.NewCreatePullRequest(r, actions.CreatePullRequest{Branch: "b", Title: "t", Reviewers: []string{""}})
			return err
		}, "reviewer"},
		{"merge zero", func() error { _, err := actions.NewMergePullRequest(r, actions.MergePullRequest{}); return err }, "pull request number 0"},
		{"merge method", func() error {
			_, err := actions.NewMergePullRequest(r, actions.MergePullRequest{Number: 1, Method: "octopus"})
			return err
		}, `merge method "octopus"`},
		{"comment pr empty", func() error {
			_, err := actions.NewCommentPullRequest(r, actions.CommentPullRequest{Number: 1})
			return err
		}, "comment body is empty"},
		{"reply no comment id", func() error {
			_, err := actions.NewReplyPullRequest(r, actions.ReplyPullRequest{Number: 1, Body: "x"})
			return err
		}, "comment id 0"},
		{"review nobody", func() error { _, err := actions.NewRequestReview(r, actions.RequestReview{Number: 1}); return err }, "no reviewers"},
		{"issue no title", func() error { _, err := actions.NewCreateIssue(r, actions.CreateIssue{Body: "b"}); return err }, "title is empty"},
		{"close negative", func() error { _, err := actions.NewCloseIssue(r, actions.CloseIssue{Number: -1}); return err }, "issue number -1"},
		{"comment issue zero", func() error { _, err := actions.NewCommentIssue(r, actions.CommentIssue{Body: "x"}); return err }, "issue number 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.new()
			require.Error(t, err)
			if tc.want != "no runner" {
				assert.ErrorIs(t, err, actions.ErrInvalid)
			}
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestActionParamsAreJSON(t *testing.T) {
	r := &runner.Runner{Home: t.TempDir(), Identity: "john"}
	a := must[*actions.ReplyPullRequest](t)(actions.NewReplyPullRequest(r, actions.ReplyPullRequest{Number: 45, CommentID: 77, Body: "Done."}))
	data, err := json.Marshal(a)
	require.NoError(t, err)
	assert.JSONEq(t, `{"number":45,"comment_id":77,"body":"Done."}`, string(data))
}

// TestPushOfAnAnnotatedTagPushesTheTagObject: the push is pinned to the
// object git would push, not to the commit it names.
func TestPushOfAnAnnotatedTagPushesTheTagObject(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "tag", "-a", "-m", "release", "v1")
	tag := f.git.Git(t, "rev-parse", "v1")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "v1"}))
	_, err := push.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, tag, f.git.Git(t, "--git-dir", f.git.Bare, "rev-parse", "refs/tags/v1"))
	assert.Equal(t, "tag", f.git.Git(t, "--git-dir", f.git.Bare, "cat-file", "-t", "refs/tags/v1"))
}

// TestPushPushesWhatTheGuardWasShown: once resolved, a push is pinned to
// the object git showed; commits the agent makes before it runs (between
// the guard's check and the push) do not go with it.
func TestPushPushesWhatTheGuardWasShown(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "shown to the guard")
	shown := f.git.Git(t, "rev-parse", "HEAD")
	push := must[*actions.Push](t)(actions.NewPush(f.r, actions.Push{Branch: "main"}))
	require.NoError(t, push.Resolve(ctx))
	f.git.Git(t, "commit", "-q", "--allow-empty", "-m", "slipped in after the check")
	res, err := push.Perform(ctx)
	require.NoError(t, err)
	assert.Equal(t, shown, res.SHA)
	assert.Equal(t, shown, f.git.BareRef(t, "main"), "the remote has what the guard saw, not the later commit")
}
