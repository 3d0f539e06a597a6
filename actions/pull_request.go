package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// CreatePullRequest opens a pull request from Branch into Base (default:
// the repository's default branch, as GitHub reports it) and then, when
// Reviewers are given, requests their review. Result: Number, URL and
// Reviewers. If the pull request is created but the review request fails,
// Perform returns the result (the pull request exists) with the error.
// Given a witness (Witness), the body ends with it, after a blank line,
// and the result records it.
type CreatePullRequest struct {
	// Repo is OWNER/NAME; empty means the runner's repository.
	Repo      string         `json:"repo,omitempty"`
	Branch    string         `json:"branch"`
	Title     string         `json:"title"`
	Body      string         `json:"body,omitempty"`
	Base      string         `json:"base,omitempty"`
	Reviewers []string       `json:"reviewers,omitempty"`
	Runner    *runner.Runner `json:"-"`
	witness
}

// NewCreatePullRequest returns the create-pull-request action a describes, performed with r
// (a's Runner is set to r). Base and Reviewers are optional; Branch ""
// means the branch checked out when the action is resolved or performed
// (call Resolve before recording it, as for Push).
func NewCreatePullRequest(r *runner.Runner, a CreatePullRequest) (*CreatePullRequest, error) {
	a.Runner = r
	return validated(&a)
}

func (a *CreatePullRequest) validate() error {
	k := a.Kind()
	if err := checkGitHub(k, a.Runner, a.Repo); err != nil {
		return err
	}
	if a.Branch != "" {
		if err := checkRef(k, "branch", a.Branch); err != nil {
			return err
		}
	}
	if err := checkText(k, "title", a.Title); err != nil {
		return err
	}
	if a.Base != "" {
		if err := checkRef(k, "base", a.Base); err != nil {
			return err
		}
	}
	if len(a.Reviewers) > 0 {
		return checkReviewers(k, a.Reviewers)
	}
	return nil
}

// Kind returns "create-pull-request".
func (*CreatePullRequest) Kind() string { return "create-pull-request" }

// Resolve fills in the head branch, when none was given, with the one
// checked out in the runner's working directory, as gh pr create does. It
// reads the repository and changes nothing.
func (a *CreatePullRequest) Resolve(ctx context.Context) error {
	if err := a.validate(); err != nil {
		return err
	}
	return resolveBranch(ctx, a.Kind(), a.Runner, &a.Branch, true)
}

func (a *CreatePullRequest) body(base string) map[string]any {
	head := a.Branch
	if head == "" {
		head = "<current-branch>" // a dry run before Resolve
	}
	return map[string]any{"title": a.Title, "head": head, "base": base, "body": a.signed(a.Body)}
}

// Perform opens the pull request and requests the reviews.
func (a *CreatePullRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	k := a.Kind()
	if err := a.Resolve(ctx); err != nil {
		return logbook.ActionResult{}, err
	}
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	base := a.Base
	if base == "" {
		var info struct {
			DefaultBranch string `json:"default_branch"`
		}
		out, err := a.Runner.GH(ctx, "api", "repos/"+repo)
		if err != nil {
			return logbook.ActionResult{}, fmt.Errorf("%s: find the default branch (or set Base): %w", k, err)
		}
		if err := json.Unmarshal(out, &info); err != nil {
			return logbook.ActionResult{}, fmt.Errorf("%s: find the default branch: %w", k, err)
		}
		base = info.DefaultBranch
		if base == "" {
			base = "main"
		}
	}
	var pr ghCreated
	if err := ghWrite(ctx, a.Runner, "POST", "repos/"+repo+"/pulls", a.body(base), &pr); err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	res := logbook.ActionResult{Number: pr.Number, URL: pr.HTMLURL, Witness: a.line}
	if len(a.Reviewers) > 0 {
		path := fmt.Sprintf("repos/%s/pulls/%d/requested_reviewers", repo, pr.Number)
		if err := ghWrite(ctx, a.Runner, "POST", path, splitReviewers(a.Reviewers), nil); err != nil {
			return res, fmt.Errorf("%s: pull request #%d was created (%s) but requesting reviews failed: %w", k, pr.Number, pr.HTMLURL, err)
		}
		res.Reviewers = slices.Clone(a.Reviewers)
	}
	return res, nil
}

// DryRun renders the gh calls: the default-branch lookup when Base is
// empty, the creation, and the review request.
func (a *CreatePullRequest) DryRun(ctx context.Context) string {
	repo := dryRepo(ctx, a.Runner, a.Repo)
	var lines []string
	base := a.Base
	if base == "" {
		lines = append(lines, dryGH(a.Runner, nil, "api", "repos/"+repo))
		base = "<default-branch>"
	}
	lines = append(lines, dryGHWrite(a.Runner, "POST", "repos/"+repo+"/pulls", a.body(base)))
	if len(a.Reviewers) > 0 {
		lines = append(lines, dryGHWrite(a.Runner, "POST", "repos/"+repo+"/pulls/<number>/requested_reviewers", splitReviewers(a.Reviewers)))
	}
	return joinLines(lines)
}

// MergePullRequest merges a pull request by Method: merge (default),
// squash or rebase. Given a witness (Witness), a merge or squash commit's
// message is the witness line (GitHub keeps its own title): the commit
// that lands on the base branch carries it. A rebase writes no message
// and carries none. Result: Number, the merge commit's SHA, and the
// witness written.
type MergePullRequest struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Method string         `json:"method,omitempty"`
	Runner *runner.Runner `json:"-"`
	witness
}

// NewMergePullRequest returns the merge-pull-request action a describes, performed with r
// (a's Runner is set to r). Method "" means merge.
func NewMergePullRequest(r *runner.Runner, a MergePullRequest) (*MergePullRequest, error) {
	a.Runner = r
	return validated(&a)
}

func (a *MergePullRequest) validate() error {
	k := a.Kind()
	if err := checkNumbered(k, a.Runner, a.Repo, "pull request number", a.Number); err != nil {
		return err
	}
	switch a.Method {
	case "", "merge", "squash", "rebase":
		return nil
	}
	return invalidf(k, "merge method %q is not merge, squash or rebase", a.Method)
}

// Kind returns "merge-pull-request".
func (*MergePullRequest) Kind() string { return "merge-pull-request" }

func (a *MergePullRequest) call(repo string) (string, string, any) {
	method := a.Method
	if method == "" {
		method = "merge"
	}
	body := map[string]any{"merge_method": method}
	if a.line != "" && method != "rebase" {
		body["commit_message"] = a.line
	}
	return "PUT", fmt.Sprintf("repos/%s/pulls/%d/merge", repo, a.Number), body
}

// Perform merges the pull request.
func (a *MergePullRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	var out struct {
		SHA string `json:"sha"`
	}
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, &out); err != nil {
		return logbook.ActionResult{}, err
	}
	res := logbook.ActionResult{Number: a.Number, SHA: out.SHA}
	if a.line != "" && a.Method != "rebase" {
		res.Witness = a.line
	}
	return res, nil
}

// DryRun renders the gh call.
func (a *MergePullRequest) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// CommentPullRequest adds a comment to a pull request's conversation.
// Given a witness (Witness), the comment ends with it, after a blank
// line. Result: Number, CommentID, URL and the witness written.
type CommentPullRequest struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Body   string         `json:"body"`
	Runner *runner.Runner `json:"-"`
	witness
}

// NewCommentPullRequest returns the comment-pull-request action a describes, performed with r
// (a's Runner is set to r).
func NewCommentPullRequest(r *runner.Runner, a CommentPullRequest) (*CommentPullRequest, error) {
	a.Runner = r
	return validated(&a)
}

func (a *CommentPullRequest) validate() error {
	return validateComment(a.Kind(), a.Runner, a.Repo, "pull request number", a.Number, a.Body)
}

// Kind returns "comment-pull-request".
func (*CommentPullRequest) Kind() string { return "comment-pull-request" }

func (a *CommentPullRequest) call(repo string) (string, string, any) {
	return "POST", fmt.Sprintf("repos/%s/issues/%d/comments", repo, a.Number), map[string]any{"body": a.signed(a.Body)}
}

// Perform posts the comment.
func (a *CommentPullRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	var c ghCreated
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, &c); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, CommentID: c.ID, URL: c.HTMLURL, Witness: a.line}, nil
}

// DryRun renders the gh call.
func (a *CommentPullRequest) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// ReplyPullRequest answers an inline review comment (CommentID) on a pull
// request's diff; "I addressed this feedback" reads differently in the
// logbook from a plain comment. Given a witness (Witness), the reply ends
// with it, after a blank line. Result: Number, the reply's CommentID, its
// URL and the witness written.
type ReplyPullRequest struct {
	Repo      string         `json:"repo,omitempty"`
	Number    int            `json:"number"`
	CommentID int64          `json:"comment_id"`
	Body      string         `json:"body"`
	Runner    *runner.Runner `json:"-"`
	witness
}

// NewReplyPullRequest returns the reply-pull-request action a describes, performed with r
// (a's Runner is set to r): a reply to the inline comment CommentID.
func NewReplyPullRequest(r *runner.Runner, a ReplyPullRequest) (*ReplyPullRequest, error) {
	a.Runner = r
	return validated(&a)
}

func (a *ReplyPullRequest) validate() error {
	if err := validateComment(a.Kind(), a.Runner, a.Repo, "pull request number", a.Number, a.Body); err != nil {
		return err
	}
	if a.CommentID <= 0 {
		return invalidf(a.Kind(), "comment id %d is not a positive number", a.CommentID)
	}
	return nil
}

// Kind returns "reply-pull-request".
func (*ReplyPullRequest) Kind() string { return "reply-pull-request" }

func (a *ReplyPullRequest) call(repo string) (string, string, any) {
	return "POST", fmt.Sprintf("repos/%s/pulls/%d/comments/%d/replies", repo, a.Number, a.CommentID), map[string]any{"body": a.signed(a.Body)}
}

// Perform posts the reply.
func (a *ReplyPullRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	var c ghCreated
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, &c); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, CommentID: c.ID, URL: c.HTMLURL, Witness: a.line}, nil
}

// DryRun renders the gh call.
func (a *ReplyPullRequest) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// RequestReview asks Reviewers (logins, or ORG/TEAM for teams) to review a
// pull request. Result: Number and Reviewers.
type RequestReview struct {
	Repo      string         `json:"repo,omitempty"`
	Number    int            `json:"number"`
	Reviewers []string       `json:"reviewers"`
	Runner    *runner.Runner `json:"-"`
	// added are the reviewers Perform asked who were not asked already
	// (for Inverse).
	added []string
}

// NewRequestReview returns the request-review action a describes, performed with r
// (a's Runner is set to r).
func NewRequestReview(r *runner.Runner, a RequestReview) (*RequestReview, error) {
	a.Runner = r
	return validated(&a)
}

func (a *RequestReview) validate() error {
	k := a.Kind()
	if err := checkNumbered(k, a.Runner, a.Repo, "pull request number", a.Number); err != nil {
		return err
	}
	return checkReviewers(k, a.Reviewers)
}

// Kind returns "request-review".
func (*RequestReview) Kind() string { return "request-review" }

func (a *RequestReview) call(repo string) (string, string, any) {
	return "POST", fmt.Sprintf("repos/%s/pulls/%d/requested_reviewers", repo, a.Number), splitReviewers(a.Reviewers)
}

func (a *RequestReview) pull(repo string) string {
	return fmt.Sprintf("repos/%s/pulls/%d", repo, a.Number)
}

// Perform reads who is asked already, and requests the reviews.
func (a *RequestReview) Perform(ctx context.Context) (logbook.ActionResult, error) {
	read := func(ctx context.Context, repo string) error {
		var pr struct {
			Users []struct {
				Login string `json:"login"`
			} `json:"requested_reviewers"`
			Teams []struct {
				Slug string `json:"slug"`
			} `json:"requested_teams"`
		}
		if err := ghGet(ctx, a.Runner, a.pull(repo), &pr); err != nil {
			return err
		}
		asked := map[string]bool{}
		for _, u := range pr.Users {
			asked[u.Login] = true
		}
		for _, t := range pr.Teams {
			asked[t.Slug] = true
		}
		a.added = nil
		for _, r := range a.Reviewers {
			if _, team, ok := strings.Cut(r, "/"); !asked[r] && !(ok && asked[team]) {
				a.added = append(a.added, r)
			}
		}
		return nil
	}
	if err := performAfter(ctx, a.Kind(), a.Runner, a.validate, a.Repo, read, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, Reviewers: slices.Clone(a.Reviewers)}, nil
}

// DryRun renders the gh calls: the read of who is asked already, and the
// request.
func (a *RequestReview) DryRun(ctx context.Context) string {
	return dryGH(a.Runner, nil, "api", a.pull(dryRepo(ctx, a.Runner, a.Repo))) + "\n" + dryCall(ctx, a.Runner, a.Repo, a.call)
}
