package marks

import (
	"context"
	"fmt"
	"strings"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("github-pr", func() Mark { return &GitHubPR{} })
}

// Pull request focuses, in the order they are shown.
var prFocuses = []string{"summary", "files", "checks", "diff", "comments", "reviews"}

// GitHubPR is a GitHub pull request. Focus controls depth: summary is the
// metadata and description; files the changed files with patches; checks
// the check runs on the head commit; diff the unified diff; comments the
// conversation and the inline review comments (whose IDs
// reply-pull-request answers); reviews the submitted reviews. No focus
// means summary.
type GitHubPR struct {
	// Repo is OWNER/NAME.
	Repo string `json:"repo"`
	// Number is the pull request's number.
	Number int `json:"number"`
	// Focus is what to fetch, in canonical order without duplicates.
	Focus []string `json:"focus"`
}

// NewGitHubPR returns a mark for pull request number of repo.
func NewGitHubPR(repo string, number int, focus ...string) (*GitHubPR, error) {
	f, err := numberedFocus("github-pr", prFocuses, repo, number, focus)
	if err != nil {
		return nil, err
	}
	return &GitHubPR{Repo: repo, Number: number, Focus: f}, nil
}

// Validate applies NewGitHubPR's checks to m, which may have been decoded
// rather than constructed.
func (m *GitHubPR) Validate() error {
	_, err := numberedFocus(m.Kind(), prFocuses, m.Repo, m.Number, m.Focus)
	return err
}

// Kind returns "github-pr".
func (*GitHubPR) Kind() string { return "github-pr" }

// Key is "github-pr:OWNER/NAME#N focus=summary,diff".
func (m *GitHubPR) Key() string {
	return fmt.Sprintf("github-pr:%s#%d focus=%s", m.Repo, m.Number, strings.Join(m.focus(), ","))
}

// String renders "GitHubPullRequest owner/name#45", adding
// "(summary, diff)" when the focus is other than the default summary.
func (m *GitHubPR) String() string {
	return fmt.Sprintf("GitHubPullRequest %s#%d%s", m.Repo, m.Number, focusSuffix(prFocuses, summaryFocus, m.Focus))
}

func (m *GitHubPR) focus() []string { return focusOr(prFocuses, summaryFocus, m.Focus) }

// Observe fetches each focus with `gh api` on GitHub's REST endpoints. The
// pull request itself is fetched once, for summary and for checks (which
// need its head commit).
func (m *GitHubPR) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	gh, err := githubRunner(m.Kind(), env)
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("repos/%s/pulls/%d", m.Repo, m.Number)
	focus := m.focus()
	s := &sighting.GitHubPullRequest{Repo: m.Repo, Number: m.Number, Focus: focus}

	var pr *ghPull
	var prErr error
	pull := func() (*ghPull, error) {
		if pr == nil && prErr == nil {
			var p ghPull
			if prErr = ghJSON(ctx, gh, &p, base); prErr == nil {
				pr = &p
			}
		}
		return pr, prErr
	}

	var errs focusErrors
	for _, f := range focus {
		var err error
		switch f {
		case "summary":
			var p *ghPull
			if p, err = pull(); err == nil {
				sum := p.summary(true)
				s.Summary = &sum
			}
		case "files":
			var files []ghFile
			if files, err = ghList[ghFile](ctx, gh, base+"/files"); err == nil {
				s.Files = []sighting.PullRequestFile{}
				for _, fl := range files {
					s.Files = append(s.Files, sighting.PullRequestFile(fl))
				}
			}
		case "checks":
			var p *ghPull
			if p, err = pull(); err == nil {
				err = m.checks(ctx, gh, p.Head.SHA, s)
			}
		case "diff":
			var out []byte
			if out, err = gh.GH(ctx, "api", "-H", "Accept: application/vnd.github.diff", base); err == nil {
				s.Diff = string(out)
			}
		case "comments":
			var conv []ghComment
			if conv, err = ghList[ghComment](ctx, gh, fmt.Sprintf("repos/%s/issues/%d/comments", m.Repo, m.Number)); err != nil {
				break
			}
			var inline []ghReviewComment
			if inline, err = ghList[ghReviewComment](ctx, gh, base+"/comments"); err != nil {
				break
			}
			s.Comments = comments(conv)
			s.ReviewComments = []sighting.ReviewComment{}
			for _, c := range inline {
				s.ReviewComments = append(s.ReviewComments, sighting.ReviewComment{ID: c.ID, InReplyTo: c.InReplyToID,
					Author: c.User.Login, Path: c.Path, Line: c.Line, Body: c.Body, URL: c.HTMLURL, CreatedAt: c.CreatedAt})
			}
		case "reviews":
			var reviews []ghReview
			if reviews, err = ghList[ghReview](ctx, gh, base+"/reviews"); err == nil {
				s.Reviews = []sighting.Review{}
				for _, r := range reviews {
					s.Reviews = append(s.Reviews, sighting.Review{ID: r.ID, Author: r.User.Login, State: r.State,
						Body: r.Body, URL: r.HTMLURL, SubmittedAt: r.SubmittedAt})
				}
			}
		default:
			err = fmt.Errorf("unknown focus %q", f)
		}
		if err != nil {
			errs.add(f, err)
		}
	}
	s.Errors = errs.list
	if err := errs.err(len(focus)); err != nil {
		return nil, err
	}
	return s, nil
}

// checks reads the check runs on sha (one request of up to 100 runs: the
// endpoint wraps its list in an object, which gh cannot paginate as one).
func (m *GitHubPR) checks(ctx context.Context, gh GitHubRunner, sha string, s *sighting.GitHubPullRequest) error {
	var resp struct {
		CheckRuns []struct {
			Name       string `json:"name"`
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
			HTMLURL    string `json:"html_url"`
		} `json:"check_runs"`
	}
	if err := ghJSON(ctx, gh, &resp, fmt.Sprintf("repos/%s/commits/%s/check-runs?per_page=100", m.Repo, sha)); err != nil {
		return err
	}
	s.Checks = []sighting.CheckRun{}
	for _, c := range resp.CheckRuns {
		s.Checks = append(s.Checks, sighting.CheckRun{Name: c.Name, Status: c.Status, Conclusion: c.Conclusion, URL: c.HTMLURL})
	}
	return nil
}

type ghFile struct {
	Filename  string `json:"filename"`
	Status    string `json:"status"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Patch     string `json:"patch"`
}

type ghReviewComment struct {
	ghComment
	InReplyToID int64  `json:"in_reply_to_id"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
}

type ghReview struct {
	ID          int64  `json:"id"`
	User        ghUser `json:"user"`
	State       string `json:"state"`
	Body        string `json:"body"`
	HTMLURL     string `json:"html_url"`
	SubmittedAt string `json:"submitted_at"`
}
