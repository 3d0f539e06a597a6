package marks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("github-repo", func() Mark { return &GitHubRepo{} })
}

// Repository focuses, in the order they are shown.
var repoFocuses = []string{"issues", "pull-requests"}

// GitHubRepo is a GitHub repository's open work: its open issues, its open
// pull requests, or both (the default, since "what is open here" is the
// question an orientation asks).
type GitHubRepo struct {
	// Repo is OWNER/NAME.
	Repo string `json:"repo"`
	// Focus is what to list, in canonical order without duplicates.
	Focus []string `json:"focus"`
}

// NewGitHubRepo returns a mark listing repo's open issues and/or pull
// requests; no focus means both.
func NewGitHubRepo(repo string, focus ...string) (*GitHubRepo, error) {
	const kind = "github-repo"
	if err := validateRepo(kind, repo); err != nil {
		return nil, err
	}
	f, err := normalizeFocus(kind, repoFocuses, repoFocuses, focus)
	if err != nil {
		return nil, err
	}
	return &GitHubRepo{Repo: repo, Focus: f}, nil
}

// Validate applies NewGitHubRepo's checks to m, which may have been
// decoded rather than constructed.
func (m *GitHubRepo) Validate() error {
	if err := validateRepo(m.Kind(), m.Repo); err != nil {
		return err
	}
	_, err := normalizeFocus(m.Kind(), repoFocuses, repoFocuses, m.Focus)
	return err
}

// Kind returns "github-repo".
func (*GitHubRepo) Kind() string { return "github-repo" }

// Key is "github-repo:OWNER/NAME focus=issues,pull-requests".
func (m *GitHubRepo) Key() string {
	return "github-repo:" + m.Repo + " focus=" + strings.Join(m.focus(), ",")
}

func (m *GitHubRepo) focus() []string { return focusOr(repoFocuses, repoFocuses, m.Focus) }

// String renders "GitHubRepository owner/name", adding "(issues)" when
// the focus is narrower than the default.
func (m *GitHubRepo) String() string {
	return "GitHubRepository " + m.Repo + focusSuffix(repoFocuses, repoFocuses, m.Focus)
}

// Observe lists the open issues (pull requests, which GitHub's issue list
// includes, left out) and the open pull requests, following every page.
func (m *GitHubRepo) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	gh, err := githubRunner(m.Kind(), env)
	if err != nil {
		return nil, err
	}
	focus := m.focus()
	s := &sighting.GitHubRepository{Repo: m.Repo, Focus: focus}
	var errs focusErrors
	for _, f := range focus {
		switch f {
		case "issues":
			list, err := ghList[ghIssue](ctx, gh, "repos/"+m.Repo+"/issues?state=open")
			if err != nil {
				errs.add(f, err)
				continue
			}
			s.Issues = []sighting.IssueSummary{}
			for _, is := range list {
				if is.PullRequest == nil {
					s.Issues = append(s.Issues, is.summary(false))
				}
			}
		case "pull-requests":
			list, err := ghList[ghPull](ctx, gh, "repos/"+m.Repo+"/pulls?state=open")
			if err != nil {
				errs.add(f, err)
				continue
			}
			s.PullRequests = []sighting.PullRequestSummary{}
			for _, pr := range list {
				s.PullRequests = append(s.PullRequests, pr.summary(false))
			}
		}
	}
	s.Errors = errs.list
	if err := errs.err(len(focus)); err != nil {
		return nil, err
	}
	return s, nil
}

// ---- shared by the three GitHub marks ----

var repoPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

func validateRepo(kind, repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !repoPart().MatchString(owner) || !repoPart().MatchString(name) ||
		owner == "." || owner == ".." || name == "." || name == ".." {
		return invalidf(kind, "repository %q is not OWNER/NAME (such as helmlog/helm)", repo)
	}
	return nil
}

func validateNumber(kind string, n int) error {
	if n <= 0 {
		return invalidf(kind, "number %d is not a positive issue or pull request number", n)
	}
	return nil
}

// summaryFocus is the default focus of the issue and pull request marks.
var summaryFocus = []string{"summary"}

// numberedFocus checks the parameters of an issue or pull request mark and
// returns its focus, normalized against known (summary when none is given).
func numberedFocus(kind string, known []string, repo string, number int, focus []string) ([]string, error) {
	if err := validateRepo(kind, repo); err != nil {
		return nil, err
	}
	if err := validateNumber(kind, number); err != nil {
		return nil, err
	}
	return normalizeFocus(kind, known, summaryFocus, focus)
}

// normalizeFocus checks focus against known, drops duplicates, puts it in
// known's order, and returns def when focus is empty.
func normalizeFocus(kind string, known, def, focus []string) ([]string, error) {
	for _, f := range focus {
		if !slices.Contains(known, f) {
			return nil, invalidf(kind, "unknown focus %q (choose from %s)", f, strings.Join(known, ", "))
		}
	}
	return focusOr(known, def, focus), nil
}

// focusOr is focus in known's order, or a copy of def when focus is empty.
func focusOr(known, def, focus []string) []string {
	if len(focus) == 0 {
		return slices.Clone(def)
	}
	return canonicalFocus(known, focus)
}

// canonicalFocus orders focus as known does, without duplicates; unknown
// names (from a hand-edited mark) go last, sorted.
func canonicalFocus(known, focus []string) []string {
	out := make([]string, 0, len(focus))
	for _, k := range known {
		if slices.Contains(focus, k) {
			out = append(out, k)
		}
	}
	var extra []string
	for _, f := range focus {
		if !slices.Contains(known, f) {
			extra = append(extra, f)
		}
	}
	slices.Sort(extra)
	return append(out, slices.Compact(extra)...)
}

func focusSuffix(known, def, focus []string) string {
	f := canonicalFocus(known, focus)
	if len(f) == 0 || slices.Equal(f, def) {
		return ""
	}
	return " (" + strings.Join(f, ", ") + ")"
}

func githubRunner(kind string, env *Env) (GitHubRunner, error) {
	if env == nil || env.GitHub == nil {
		return nil, fmt.Errorf("%s: no GitHub runner (gh) configured (Env.GitHub)", kind)
	}
	return env.GitHub, nil
}

// focusErrors gathers the focuses that failed. A mark fails as a whole
// when every focus failed (with one focus: gh's own error); otherwise the
// failures ride in the sighting.
type focusErrors struct {
	list []sighting.FocusError
	errs []error
}

func (e *focusErrors) add(focus string, err error) {
	e.list = append(e.list, sighting.FocusError{Focus: focus, Error: err.Error()})
	e.errs = append(e.errs, fmt.Errorf("%s: %w", focus, err))
}

func (e *focusErrors) err(focuses int) error {
	if len(e.errs) == 0 || len(e.errs) < focuses {
		return nil
	}
	// The caller says what was observed; this says which focus failed.
	return errors.Join(e.errs...)
}

// ghJSON runs `gh api PATH` and decodes its JSON into v.
func ghJSON(ctx context.Context, gh GitHubRunner, v any, args ...string) error {
	out, err := gh.GH(ctx, append([]string{"api"}, args...)...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("gh api %s: decode response: %w", args[len(args)-1], err)
	}
	return nil
}

// ghList runs `gh api --paginate PATH` and decodes every page. gh writes
// the pages' arrays one after another, so they are decoded as a stream.
func ghList[T any](ctx context.Context, gh GitHubRunner, path string) ([]T, error) {
	out, err := gh.GH(ctx, "api", "--paginate", path)
	if err != nil {
		return nil, err
	}
	var all []T
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var page []T
		if err := dec.Decode(&page); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("gh api %s: decode response: %w", path, err)
		}
		all = append(all, page...)
	}
	return all, nil
}

// GitHub's REST shapes, as far as helm reads them.

type ghUser struct {
	Login string `json:"login"`
}

type ghLabel struct {
	Name string `json:"name"`
}

type ghIssue struct {
	Number      int             `json:"number"`
	Title       string          `json:"title"`
	State       string          `json:"state"`
	User        ghUser          `json:"user"`
	Labels      []ghLabel       `json:"labels"`
	Body        string          `json:"body"`
	Comments    int             `json:"comments"`
	HTMLURL     string          `json:"html_url"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	PullRequest json.RawMessage `json:"pull_request"`
}

func labelNames(ls []ghLabel) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// summary converts an issue; lists leave the body out to stay small.
func (is ghIssue) summary(withBody bool) sighting.IssueSummary {
	s := sighting.IssueSummary{Number: is.Number, Title: is.Title, State: is.State, Author: is.User.Login,
		Labels: labelNames(is.Labels), Comments: is.Comments, URL: is.HTMLURL,
		CreatedAt: is.CreatedAt, UpdatedAt: is.UpdatedAt}
	if withBody {
		s.Body = is.Body
	}
	return s
}

type ghRef struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

type ghPull struct {
	ghIssue
	Draft              bool     `json:"draft"`
	Merged             bool     `json:"merged"`
	Head               ghRef    `json:"head"`
	Base               ghRef    `json:"base"`
	RequestedReviewers []ghUser `json:"requested_reviewers"`
	Additions          int      `json:"additions"`
	Deletions          int      `json:"deletions"`
	ChangedFiles       int      `json:"changed_files"`
}

func (pr ghPull) summary(withBody bool) sighting.PullRequestSummary {
	s := sighting.PullRequestSummary{Number: pr.Number, Title: pr.Title, State: pr.State, Draft: pr.Draft,
		Merged: pr.Merged, Author: pr.User.Login, Head: pr.Head.Ref, HeadSHA: pr.Head.SHA, Base: pr.Base.Ref,
		Labels: labelNames(pr.Labels), Additions: pr.Additions, Deletions: pr.Deletions,
		ChangedFiles: pr.ChangedFiles, URL: pr.HTMLURL, CreatedAt: pr.CreatedAt, UpdatedAt: pr.UpdatedAt}
	for _, u := range pr.RequestedReviewers {
		s.RequestedReviewers = append(s.RequestedReviewers, u.Login)
	}
	if withBody {
		s.Body = pr.Body
	}
	return s
}

type ghComment struct {
	ID        int64  `json:"id"`
	User      ghUser `json:"user"`
	Body      string `json:"body"`
	HTMLURL   string `json:"html_url"`
	CreatedAt string `json:"created_at"`
}

func comments(list []ghComment) []sighting.Comment {
	out := []sighting.Comment{}
	for _, c := range list {
		out = append(out, sighting.Comment{ID: c.ID, Author: c.User.Login, Body: c.Body, URL: c.HTMLURL, CreatedAt: c.CreatedAt})
	}
	return out
}
