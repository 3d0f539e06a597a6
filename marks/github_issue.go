package marks

import (
	"context"
	"fmt"
	"strings"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("github-issue", func() Mark { return &GitHubIssue{} })
}

// Issue focuses, in the order they are shown.
var issueFocuses = []string{"summary", "comments"}

// GitHubIssue is a GitHub issue. Focus controls depth: summary is the
// metadata and body, comments the discussion. No focus means summary.
type GitHubIssue struct {
	// Repo is OWNER/NAME.
	Repo string `json:"repo"`
	// Number is the issue's number.
	Number int `json:"number"`
	// Focus is what to fetch, in canonical order without duplicates.
	Focus []string `json:"focus"`
}

// NewGitHubIssue returns a mark for issue number of repo.
func NewGitHubIssue(repo string, number int, focus ...string) (*GitHubIssue, error) {
	f, err := numberedFocus("github-issue", issueFocuses, repo, number, focus)
	if err != nil {
		return nil, err
	}
	return &GitHubIssue{Repo: repo, Number: number, Focus: f}, nil
}

// Validate applies NewGitHubIssue's checks to m, which may have been
// decoded rather than constructed.
func (m *GitHubIssue) Validate() error {
	_, err := numberedFocus(m.Kind(), issueFocuses, m.Repo, m.Number, m.Focus)
	return err
}

// Kind returns "github-issue".
func (*GitHubIssue) Kind() string { return "github-issue" }

// Key is "github-issue:OWNER/NAME#N focus=summary,comments".
func (m *GitHubIssue) Key() string {
	return fmt.Sprintf("github-issue:%s#%d focus=%s", m.Repo, m.Number, strings.Join(m.focus(), ","))
}

// String renders "GitHubIssue owner/name#42", adding "(comments)" when the
// focus is other than the default summary.
func (m *GitHubIssue) String() string {
	return fmt.Sprintf("GitHubIssue %s#%d%s", m.Repo, m.Number, focusSuffix(issueFocuses, summaryFocus, m.Focus))
}

func (m *GitHubIssue) focus() []string { return focusOr(issueFocuses, summaryFocus, m.Focus) }

// Observe fetches each focus with `gh api` on GitHub's REST endpoints.
func (m *GitHubIssue) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	gh, err := githubRunner(m.Kind(), env)
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("repos/%s/issues/%d", m.Repo, m.Number)
	focus := m.focus()
	s := &sighting.GitHubIssue{Repo: m.Repo, Number: m.Number, Focus: focus}
	var errs focusErrors
	for _, f := range focus {
		var err error
		switch f {
		case "summary":
			var is ghIssue
			if err = ghJSON(ctx, gh, &is, base); err == nil {
				sum := is.summary(true)
				s.Summary = &sum
			}
		case "comments":
			var list []ghComment
			if list, err = ghList[ghComment](ctx, gh, base+"/comments"); err == nil {
				s.Comments = comments(list)
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
