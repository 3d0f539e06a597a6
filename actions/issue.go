package actions

import (
	"context"
	"fmt"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// CreateIssue opens an issue. Given a witness (Witness), its body ends
// with it, after a blank line. Result: Number, URL and the witness
// written.
type CreateIssue struct {
	Repo   string         `json:"repo,omitempty"`
	Title  string         `json:"title"`
	Body   string         `json:"body,omitempty"`
	Runner *runner.Runner `json:"-"`
	witness
}

// NewCreateIssue returns the create-issue action a describes, performed with r
// (a's Runner is set to r).
func NewCreateIssue(r *runner.Runner, a CreateIssue) (*CreateIssue, error) {
	a.Runner = r
	return validated(&a)
}

func (a *CreateIssue) validate() error {
	k := a.Kind()
	if err := checkGitHub(k, a.Runner, a.Repo); err != nil {
		return err
	}
	return checkText(k, "title", a.Title)
}

// Kind returns "create-issue".
func (*CreateIssue) Kind() string { return "create-issue" }

func (a *CreateIssue) call(repo string) (string, string, any) {
	return "POST", "repos/" + repo + "/issues", map[string]any{"title": a.Title, "body": a.signed(a.Body)}
}

// Perform opens the issue.
func (a *CreateIssue) Perform(ctx context.Context) (logbook.ActionResult, error) {
	var is ghCreated
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, &is); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: is.Number, URL: is.HTMLURL, Witness: a.line}, nil
}

// DryRun renders the gh call.
func (a *CreateIssue) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// CloseIssue closes an issue. It reads the issue's state first, so that
// its inverse reopens only an issue it closed. Result: Number.
type CloseIssue struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Runner *runner.Runner `json:"-"`
	// closedBefore says the issue was closed when Perform began.
	closedBefore bool
}

// NewCloseIssue returns the close-issue action a describes, performed with r
// (a's Runner is set to r).
func NewCloseIssue(r *runner.Runner, a CloseIssue) (*CloseIssue, error) {
	a.Runner = r
	return validated(&a)
}

func (a *CloseIssue) validate() error {
	return checkNumbered(a.Kind(), a.Runner, a.Repo, "issue number", a.Number)
}

// Kind returns "close-issue".
func (*CloseIssue) Kind() string { return "close-issue" }

func (a *CloseIssue) call(repo string) (string, string, any) {
	return "PATCH", a.path(repo), map[string]any{"state": "closed"}
}

func (a *CloseIssue) path(repo string) string {
	return fmt.Sprintf("repos/%s/issues/%d", repo, a.Number)
}

// Perform reads the issue's state and closes it.
func (a *CloseIssue) Perform(ctx context.Context) (logbook.ActionResult, error) {
	read := func(ctx context.Context, repo string) error {
		var is struct {
			State string `json:"state"`
		}
		err := ghGet(ctx, a.Runner, a.path(repo), &is)
		a.closedBefore = is.State == "closed"
		return err
	}
	if err := performAfter(ctx, a.Kind(), a.Runner, a.validate, a.Repo, read, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number}, nil
}

// DryRun renders the gh calls: the read of the issue's state, and the
// close.
func (a *CloseIssue) DryRun(ctx context.Context) string {
	return dryGH(a.Runner, nil, "api", a.path(dryRepo(ctx, a.Runner, a.Repo))) + "\n" + dryCall(ctx, a.Runner, a.Repo, a.call)
}

// CommentIssue adds a comment to an issue. Given a witness (Witness), the
// comment ends with it, after a blank line. Result: Number, CommentID,
// URL and the witness written.
type CommentIssue struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Body   string         `json:"body"`
	Runner *runner.Runner `json:"-"`
	witness
}

// NewCommentIssue returns the comment-issue action a describes, performed with r
// (a's Runner is set to r).
func NewCommentIssue(r *runner.Runner, a CommentIssue) (*CommentIssue, error) {
	a.Runner = r
	return validated(&a)
}

func (a *CommentIssue) validate() error {
	return validateComment(a.Kind(), a.Runner, a.Repo, "issue number", a.Number, a.Body)
}

// Kind returns "comment-issue".
func (*CommentIssue) Kind() string { return "comment-issue" }

func (a *CommentIssue) call(repo string) (string, string, any) {
	return "POST", fmt.Sprintf("repos/%s/issues/%d/comments", repo, a.Number), map[string]any{"body": a.signed(a.Body)}
}

// Perform posts the comment.
func (a *CommentIssue) Perform(ctx context.Context) (logbook.ActionResult, error) {
	var c ghCreated
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, &c); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, CommentID: c.ID, URL: c.HTMLURL, Witness: a.line}, nil
}

// DryRun renders the gh call.
func (a *CommentIssue) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}
