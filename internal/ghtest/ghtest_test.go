package ghtest_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

func TestStandInServesGHAndRecordsRequests(t *testing.T) {
	srv := ghtest.NewServer(t)
	srv.AddRepo("o/r", "main")
	n := srv.AddIssue("o/r", ghtest.Issue{Title: "crash"})
	r := srv.Runner(t, "")
	ctx := context.Background()

	out, err := r.GH(ctx, "api", "repos/o/r/issues/1")
	require.NoError(t, err)
	assert.Contains(t, string(out), `"title":"crash"`)
	assert.Equal(t, 1, n)

	_, err = r.GHInput(ctx, []byte(`{"body":"hello"}`), "api", "-X", "POST", "repos/o/r/issues/1/comments", "--input", "-")
	require.NoError(t, err)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "GET repos/o/r/issues/1", reqs[0].String())
	assert.Nil(t, reqs[0].Body)
	assert.Equal(t, map[string]any{"body": "hello"}, reqs[1].Body)
}

func TestStandInRejectsAnotherToken(t *testing.T) {
	srv := ghtest.NewServer(t)
	srv.AddRepo("o/r", "main")
	r := srv.Runner(t, "")
	r.Env = append(r.Env, "GH_ENTERPRISE_TOKEN=wrong")
	_, err := r.GH(context.Background(), "api", "repos/o/r")
	assert.ErrorContains(t, err, "Bad credentials (HTTP 401)")
}

func TestStandInFailAndUnknownPaths(t *testing.T) {
	srv := ghtest.NewServer(t)
	srv.AddRepo("o/r", "main")
	srv.Fail("GET", "repos/o/r", 503, "Service Unavailable")
	r := srv.Runner(t, "")
	_, err := r.GH(context.Background(), "api", "repos/o/r")
	assert.ErrorContains(t, err, "gh: Service Unavailable (HTTP 503)")
	_, err = r.GH(context.Background(), "api", "repos/o/r/nothing-here")
	assert.ErrorContains(t, err, "gh: Not Found (HTTP 404)")
	_, err = r.GH(context.Background(), "api", "repos/nobody/none")
	assert.ErrorContains(t, err, "gh: Not Found (HTTP 404)")
}

func TestGitRepoDerivesRepoAndPushesLocally(t *testing.T) {
	srv := ghtest.NewServer(t)
	g := srv.GitRepo(t, "o/r")
	r := srv.Runner(t, g.Dir)
	repo, err := r.Repo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "o/r", repo)
	assert.Equal(t, g.Git(t, "rev-parse", "HEAD"), g.BareRef(t, "main"))
	assert.Equal(t, srv.URL+"/o/r.git", g.Git(t, "remote", "get-url", "origin"))
	assert.Equal(t, g.Bare, g.Git(t, "remote", "get-url", "--push", "origin"))
}

// The endpoints undo uses: closing a pull request, deleting comments and
// review requests; what is not there is a 404, and a merged pull request
// cannot be reopened.
func TestStandInTakesThingsBack(t *testing.T) {
	srv := ghtest.NewServer(t)
	srv.AddRepo("o/r", "main")
	pr := srv.AddPull("o/r", ghtest.PullRequest{Title: "Fix", Head: "fix"})
	c := srv.AddIssueComment("o/r", pr, "", "hi")
	rc := srv.AddReviewComment("o/r", pr, ghtest.ReviewComment{Body: "nil?", Path: "a.go", Line: 1})
	r := srv.Runner(t, "")
	ctx := context.Background()
	send := func(method, path, body string) error {
		_, err := r.GHInput(ctx, []byte(body), "api", "-X", method, path, "--input", "-")
		return err
	}
	require.NoError(t, send("POST", "repos/o/r/pulls/1/requested_reviewers", `{"reviewers":["ann","bob"],"team_reviewers":["core"]}`))
	require.NoError(t, send("DELETE", "repos/o/r/pulls/1/requested_reviewers", `{"reviewers":["ann"],"team_reviewers":["core"]}`))
	assert.Equal(t, []string{"bob"}, srv.RequestedReviewers("o/r", pr))
	assert.ErrorContains(t, send("DELETE", "repos/o/r/pulls/1/requested_reviewers", `{}`), "HTTP 422")

	require.NoError(t, send("DELETE", "repos/o/r/issues/comments/"+strconv.FormatInt(c, 10), `{}`))
	require.NoError(t, send("DELETE", "repos/o/r/pulls/comments/"+strconv.FormatInt(rc, 10), `{}`))
	comments, review := srv.CommentIDs("o/r", pr)
	assert.Empty(t, comments)
	assert.Empty(t, review)
	assert.ErrorContains(t, send("DELETE", "repos/o/r/issues/comments/"+strconv.FormatInt(c, 10), `{}`), "HTTP 404")
	assert.ErrorContains(t, send("DELETE", "repos/o/r/pulls/comments/x", `{}`), "HTTP 404")

	require.NoError(t, send("PATCH", "repos/o/r/pulls/1", `{"state":"closed"}`))
	assert.Equal(t, "closed", srv.IssueState("o/r", pr))
	assert.ErrorContains(t, send("PATCH", "repos/o/r/pulls/1", `{"state":"merged"}`), "HTTP 422")
	require.NoError(t, send("PATCH", "repos/o/r/pulls/1", `{"state":"open"}`))
	require.NoError(t, send("PUT", "repos/o/r/pulls/1/merge", `{}`))
	assert.ErrorContains(t, send("PATCH", "repos/o/r/pulls/1", `{"state":"open"}`), "HTTP 422")
}
