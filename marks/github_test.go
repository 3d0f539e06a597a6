package marks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/sighting"
)

const ghRepo = "octo/widgets"

// ghFixture is a stand-in holding one pull request (#1) with files,
// checks, comments, inline comments and a review, and one issue (#2) with
// a comment.
type ghFixture struct {
	srv      *ghtest.Server
	env      *marks.Env
	pr, iss  int
	inlineID int64
}

func newGHFixture(t *testing.T) *ghFixture {
	t.Helper()
	srv := ghtest.NewServer(t)
	srv.AddRepo(ghRepo, "main")
	f := &ghFixture{srv: srv, env: &marks.Env{GitHub: srv.Runner(t, "")}}
	f.pr = srv.AddPull(ghRepo, ghtest.PullRequest{
		Title: "Fix widget crash", Body: "Adds the null check.", User: "john-agent",
		Head: "fix-widget", HeadSHA: "abc123",
		Files: []ghtest.File{{Filename: "widget.go", Status: "modified", Additions: 2, Deletions: 1, Patch: "@@ -1 +1,2 @@\n-old\n+new\n+check"}},
	})
	f.iss = srv.AddIssue(ghRepo, ghtest.Issue{Title: "Widget crashes", Body: "Stack trace...", User: "dyreby", Labels: []string{"bug"}})
	srv.AddCheckRun(ghRepo, "abc123", ghtest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	srv.AddIssueComment(ghRepo, f.pr, "dyreby", "Looks close.")
	f.inlineID = srv.AddReviewComment(ghRepo, f.pr, ghtest.ReviewComment{User: "dyreby", Body: "nil here?", Path: "widget.go", Line: 2})
	srv.AddReview(ghRepo, f.pr, ghtest.Review{User: "dyreby", State: "CHANGES_REQUESTED", Body: "One question."})
	srv.AddIssueComment(ghRepo, f.iss, "john-agent", "Reproduced.")
	return f
}

func TestGitHubMarkConstructorsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func() (marks.Mark, error)
		want string
	}{
		{"pr bad repo", func() (marks.Mark, error) { return marks.NewGitHubPR("widgets", 1) }, "not OWNER/NAME"},
		{"pr zero", func() (marks.Mark, error) { return marks.NewGitHubPR(ghRepo, 0) }, "not a positive"},
		{"pr bad focus", func() (marks.Mark, error) { return marks.NewGitHubPR(ghRepo, 1, "body") }, `unknown focus "body" (choose from summary, files, checks, diff, comments, reviews)`},
		{"issue negative", func() (marks.Mark, error) { return marks.NewGitHubIssue(ghRepo, -3) }, "not a positive"},
		{"issue bad focus", func() (marks.Mark, error) { return marks.NewGitHubIssue(ghRepo, 1, "diff") }, `unknown focus "diff"`},
		{"repo bad repo", func() (marks.Mark, error) { return marks.NewGitHubRepo("../x") }, "not OWNER/NAME"},
		{"repo bad focus", func() (marks.Mark, error) { return marks.NewGitHubRepo(ghRepo, "prs") }, `unknown focus "prs" (choose from issues, pull-requests)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.new()
			require.Error(t, err)
			assert.ErrorIs(t, err, marks.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestGitHubMarkKeysAndLabels(t *testing.T) {
	must := func(m marks.Mark, err error) marks.Mark {
		require.NoError(t, err)
		return m
	}
	for _, tc := range []struct {
		name       string
		mark       marks.Mark
		key, label string
	}{
		{"pr default", must(marks.NewGitHubPR(ghRepo, 45)),
			"github-pr:octo/widgets#45 focus=summary", "GitHubPullRequest octo/widgets#45"},
		{"pr focus sorted and deduped", must(marks.NewGitHubPR(ghRepo, 45, "diff", "summary", "diff")),
			"github-pr:octo/widgets#45 focus=summary,diff", "GitHubPullRequest octo/widgets#45 (summary, diff)"},
		{"issue default", must(marks.NewGitHubIssue(ghRepo, 42)),
			"github-issue:octo/widgets#42 focus=summary", "GitHubIssue octo/widgets#42"},
		{"issue comments", must(marks.NewGitHubIssue(ghRepo, 42, "comments", "summary")),
			"github-issue:octo/widgets#42 focus=summary,comments", "GitHubIssue octo/widgets#42 (summary, comments)"},
		{"repo default is both", must(marks.NewGitHubRepo(ghRepo)),
			"github-repo:octo/widgets focus=issues,pull-requests", "GitHubRepository octo/widgets"},
		{"repo issues", must(marks.NewGitHubRepo(ghRepo, "issues")),
			"github-repo:octo/widgets focus=issues", "GitHubRepository octo/widgets (issues)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.key, tc.mark.Key())
			assert.Equal(t, tc.label, tc.mark.String())
			data, err := marks.Marshal(tc.mark)
			require.NoError(t, err)
			back, err := marks.Unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, tc.mark, back)
			assert.Equal(t, tc.key, back.Key())
		})
	}
}

func TestGitHubPRObservesEachFocus(t *testing.T) {
	f := newGHFixture(t)
	pulls := "repos/octo/widgets/pulls/1"
	for _, tc := range []struct {
		focus string
		calls []string
		check func(t *testing.T, s *sighting.GitHubPullRequest)
	}{
		{"summary", []string{"GET " + pulls}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			require.NotNil(t, s.Summary)
			assert.Equal(t, "Fix widget crash", s.Summary.Title)
			assert.Equal(t, "Adds the null check.", s.Summary.Body)
			assert.Equal(t, "john-agent", s.Summary.Author)
			assert.Equal(t, "fix-widget", s.Summary.Head)
			assert.Equal(t, "abc123", s.Summary.HeadSHA)
			assert.Equal(t, "main", s.Summary.Base)
			assert.Equal(t, "open", s.Summary.State)
			assert.Equal(t, 1, s.Summary.ChangedFiles)
			assert.Equal(t, f.srv.URL+"/octo/widgets/pull/1", s.Summary.URL)
		}},
		{"files", []string{"GET " + pulls + "/files"}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			assert.Equal(t, []sighting.PullRequestFile{{Filename: "widget.go", Status: "modified", Additions: 2, Deletions: 1, Patch: "@@ -1 +1,2 @@\n-old\n+new\n+check"}}, s.Files)
			assert.Nil(t, s.Summary)
		}},
		{"checks", []string{"GET " + pulls, "GET repos/octo/widgets/commits/abc123/check-runs"}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			require.Len(t, s.Checks, 1)
			assert.Equal(t, "test", s.Checks[0].Name)
			assert.Equal(t, "success", s.Checks[0].Conclusion)
			assert.Nil(t, s.Summary, "the pull request is read for its head commit only")
		}},
		{"diff", []string{"GET " + pulls}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			assert.Equal(t, "diff --git a/widget.go b/widget.go\n--- a/widget.go\n+++ b/widget.go\n@@ -1 +1,2 @@\n-old\n+new\n+check\n", s.Diff)
		}},
		{"comments", []string{"GET repos/octo/widgets/issues/1/comments", "GET " + pulls + "/comments"}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			require.Len(t, s.Comments, 1)
			assert.Equal(t, "Looks close.", s.Comments[0].Body)
			assert.Equal(t, "dyreby", s.Comments[0].Author)
			require.Len(t, s.ReviewComments, 1)
			assert.Equal(t, f.inlineID, s.ReviewComments[0].ID)
			assert.Equal(t, "widget.go", s.ReviewComments[0].Path)
			assert.Equal(t, 2, s.ReviewComments[0].Line)
		}},
		{"reviews", []string{"GET " + pulls + "/reviews"}, func(t *testing.T, s *sighting.GitHubPullRequest) {
			require.Len(t, s.Reviews, 1)
			assert.Equal(t, "CHANGES_REQUESTED", s.Reviews[0].State)
			assert.Equal(t, "One question.", s.Reviews[0].Body)
		}},
	} {
		t.Run(tc.focus, func(t *testing.T) {
			f.srv.ClearRequests()
			m, err := marks.NewGitHubPR(ghRepo, f.pr, tc.focus)
			require.NoError(t, err)
			got, err := m.Observe(context.Background(), f.env)
			require.NoError(t, err)
			s := got.(*sighting.GitHubPullRequest)
			assert.Equal(t, ghRepo, s.Repo)
			assert.Equal(t, 1, s.Number)
			assert.Equal(t, []string{tc.focus}, s.Focus)
			assert.Empty(t, s.Errors)
			tc.check(t, s)
			assert.Equal(t, tc.calls, f.srv.Calls())
			if tc.focus == "diff" {
				assert.Equal(t, "application/vnd.github.diff", f.srv.Requests()[0].Accept)
			}
		})
	}
}

func TestGitHubPRReadsThePullRequestOnceForSummaryAndChecks(t *testing.T) {
	f := newGHFixture(t)
	m, err := marks.NewGitHubPR(ghRepo, f.pr, "checks", "summary")
	require.NoError(t, err)
	got, err := m.Observe(context.Background(), f.env)
	require.NoError(t, err)
	s := got.(*sighting.GitHubPullRequest)
	assert.NotNil(t, s.Summary)
	assert.Len(t, s.Checks, 1)
	assert.Equal(t, []string{"GET repos/octo/widgets/pulls/1", "GET repos/octo/widgets/commits/abc123/check-runs"}, f.srv.Calls())
}

func TestGitHubPRFailingFocusAmongSeveralIsRecorded(t *testing.T) {
	f := newGHFixture(t)
	f.srv.Fail("GET", "repos/octo/widgets/pulls/1/files", 500, "files are on fire")
	m, err := marks.NewGitHubPR(ghRepo, f.pr, "summary", "files", "reviews")
	require.NoError(t, err)
	got, err := m.Observe(context.Background(), f.env)
	require.NoError(t, err)
	s := got.(*sighting.GitHubPullRequest)
	require.Len(t, s.Errors, 1)
	assert.Equal(t, "files", s.Errors[0].Focus)
	assert.Contains(t, s.Errors[0].Error, "gh: files are on fire (HTTP 500)")
	assert.Nil(t, s.Files)
	assert.NotNil(t, s.Summary)
	assert.Len(t, s.Reviews, 1)
}

func TestGitHubPRSingleFailingFocusIsAnError(t *testing.T) {
	f := newGHFixture(t)
	for _, tc := range []struct{ name, focus, fail, want string }{
		{"not found", "summary", "", "gh: Not Found (HTTP 404)"},
		{"server error", "reviews", "repos/octo/widgets/pulls/9/reviews", "gh: boom (HTTP 500)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fail != "" {
				f.srv.Fail("", tc.fail, 500, "boom")
			}
			m, err := marks.NewGitHubPR(ghRepo, 9, tc.focus)
			require.NoError(t, err)
			got, err := m.Observe(context.Background(), f.env)
			assert.Nil(t, got)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), tc.focus+": "), "the error names the focus that failed; its caller names the mark: %v", err)
			var ee *runner.ExitError
			assert.True(t, errors.As(err, &ee), "gh's error is kept for errors.As")
		})
	}
}

func TestGitHubIssueObservesEachFocus(t *testing.T) {
	f := newGHFixture(t)
	for _, tc := range []struct {
		name  string
		focus []string
		calls []string
	}{
		{"default", nil, []string{"GET repos/octo/widgets/issues/2"}},
		{"comments", []string{"comments"}, []string{"GET repos/octo/widgets/issues/2/comments"}},
		{"both", []string{"comments", "summary"}, []string{"GET repos/octo/widgets/issues/2", "GET repos/octo/widgets/issues/2/comments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.srv.ClearRequests()
			m, err := marks.NewGitHubIssue(ghRepo, f.iss, tc.focus...)
			require.NoError(t, err)
			got, err := m.Observe(context.Background(), f.env)
			require.NoError(t, err)
			s := got.(*sighting.GitHubIssue)
			assert.Equal(t, tc.calls, f.srv.Calls())
			if len(tc.focus) == 0 || tc.name == "both" {
				require.NotNil(t, s.Summary)
				assert.Equal(t, "Widget crashes", s.Summary.Title)
				assert.Equal(t, "Stack trace...", s.Summary.Body)
				assert.Equal(t, []string{"bug"}, s.Summary.Labels)
				assert.Equal(t, 1, s.Summary.Comments)
			}
			if tc.name != "default" {
				require.Len(t, s.Comments, 1)
				assert.Equal(t, "Reproduced.", s.Comments[0].Body)
			}
		})
	}
}

func TestGitHubIssueFailures(t *testing.T) {
	f := newGHFixture(t)
	f.srv.Fail("GET", "repos/octo/widgets/issues/2/comments", 502, "Server Error")

	m, err := marks.NewGitHubIssue(ghRepo, f.iss, "summary", "comments")
	require.NoError(t, err)
	got, err := m.Observe(context.Background(), f.env)
	require.NoError(t, err)
	s := got.(*sighting.GitHubIssue)
	assert.NotNil(t, s.Summary)
	assert.Equal(t, []sighting.FocusError{{Focus: "comments", Error: s.Errors[0].Error}}, s.Errors)
	assert.Contains(t, s.Errors[0].Error, "gh: Server Error (HTTP 502)")

	m, err = marks.NewGitHubIssue(ghRepo, f.iss, "comments")
	require.NoError(t, err)
	_, err = m.Observe(context.Background(), f.env)
	assert.ErrorContains(t, err, "gh: Server Error (HTTP 502)")
}

func TestGitHubRepoListsOpenWorkAcrossPages(t *testing.T) {
	f := newGHFixture(t)
	f.srv.AddIssue(ghRepo, ghtest.Issue{Title: "Closed one", State: "closed"})
	f.srv.AddIssue(ghRepo, ghtest.Issue{Title: "Docs typo"})
	f.srv.SetPageSize(1)

	m, err := marks.NewGitHubRepo(ghRepo)
	require.NoError(t, err)
	got, err := m.Observe(context.Background(), f.env)
	require.NoError(t, err)
	s := got.(*sighting.GitHubRepository)
	assert.Equal(t, []string{"issues", "pull-requests"}, s.Focus)
	var titles []string
	for _, is := range s.Issues {
		titles = append(titles, is.Title)
	}
	assert.Equal(t, []string{"Docs typo", "Widget crashes"}, titles, "open issues, newest first, pull requests left out")
	require.Len(t, s.PullRequests, 1)
	assert.Equal(t, "Fix widget crash", s.PullRequests[0].Title)
	// Three open entries in the issue list (two issues, one pull request)
	// at one per page, then one pull request.
	assert.Equal(t, []string{
		"GET repos/octo/widgets/issues?state=open", "GET repos/octo/widgets/issues?state=open", "GET repos/octo/widgets/issues?state=open",
		"GET repos/octo/widgets/pulls?state=open",
	}, f.srv.Calls())

	f.srv.ClearRequests()
	f.srv.Fail("GET", "repos/octo/widgets/pulls", 403, "Resource not accessible by integration")
	got, err = m.Observe(context.Background(), f.env)
	require.NoError(t, err)
	s = got.(*sighting.GitHubRepository)
	assert.Len(t, s.Issues, 2)
	require.Len(t, s.Errors, 1)
	assert.Equal(t, "pull-requests", s.Errors[0].Focus)
	assert.Contains(t, s.Errors[0].Error, "Resource not accessible by integration (HTTP 403)")

	only, err := marks.NewGitHubRepo(ghRepo, "pull-requests")
	require.NoError(t, err)
	_, err = only.Observe(context.Background(), f.env)
	assert.ErrorContains(t, err, "Resource not accessible by integration (HTTP 403)")
}

func TestGitHubMarksNeedARunner(t *testing.T) {
	m, err := marks.NewGitHubIssue(ghRepo, 1)
	require.NoError(t, err)
	_, err = m.Observe(context.Background(), &marks.Env{})
	assert.ErrorContains(t, err, "no GitHub runner")
}

func TestGitHubRepoEmptyListIsObservedNotMissing(t *testing.T) {
	srv := ghtest.NewServer(t)
	srv.AddRepo(ghRepo, "main")
	m, err := marks.NewGitHubRepo(ghRepo, "pull-requests")
	require.NoError(t, err)
	got, err := m.Observe(context.Background(), &marks.Env{GitHub: srv.Runner(t, "")})
	require.NoError(t, err)
	data, err := sighting.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"github-repo","repo":"octo/widgets","focus":["pull-requests"],"pull_requests":[]}`, string(data))
}
