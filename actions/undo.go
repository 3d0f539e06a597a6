package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// Undo: every action says how to take back what it did (its Inverse
// method, asked once it has been performed, given its result), and the
// voyage records the answer with the action's outcome. FromInverse builds
// the action that does it from what was recorded:
//
//	commit               reset-commit: back to the commit's parent
//	                     (git reset --soft, its changes staged again), or,
//	                     once the commit is on a remote-tracking branch,
//	                     revert-commit (git revert: a new commit, never a
//	                     force push)
//	push                 delete-remote-branch, when the push created the
//	                     branch; a push that moved a branch has none
//	create-pull-request  close-pull-request
//	merge-pull-request   none: GitHub cannot unmerge
//	comment-pull-request delete-comment
//	reply-pull-request   delete-review-comment
//	request-review       remove-review-request
//	create-issue         close-issue
//	close-issue          reopen-issue
//	comment-issue        delete-comment
//
// The inverse names the repository (OWNER/NAME) the action acted on, so
// an undo reaches it from any working directory.

// Undo is an action FromInverse builds: performed, shown as a dry run and
// checked by guard rules like any other.
type Undo = Action

// FromInverse builds the action that an inverse recorded by a voyage
// names, performed with r. The inverse of a commit (reset-commit) becomes
// a revert-commit once the commit is on a remote-tracking branch (pushed):
// resetting a pushed commit away would need a force push. An inverse
// that names no action (a merge's) is an error saying why, and so are
// parameters of another shape.
func FromInverse(ctx context.Context, r *runner.Runner, inv logbook.Inverse) (Undo, error) {
	if inv.Kind == "" {
		return nil, fmt.Errorf("%w: nothing takes it back: %s", ErrInvalid, inv.None)
	}
	build, ok := undoKinds[inv.Kind]
	if !ok {
		return nil, invalidf(inv.Kind, "no such action: a newer helm recorded this inverse")
	}
	u, err := build(r, inv.Params)
	if err != nil {
		return nil, err
	}
	if reset, ok := u.(*ResetCommit); ok {
		pushed, err := pushedIn(ctx, r, reset.SHA)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", reset.Kind(), err)
		}
		if pushed != "" {
			return validated(&RevertCommit{SHA: reset.SHA, Branch: reset.Branch, Runner: r})
		}
	}
	return u, nil
}

// undoKinds decodes each kind's recorded parameters into its action.
var undoKinds = map[string]func(r *runner.Runner, params json.RawMessage) (Undo, error){
	"reset-commit":          decodeUndo[ResetCommit],
	"revert-commit":         decodeUndo[RevertCommit],
	"delete-remote-branch":  decodeUndo[DeleteRemoteBranch],
	"close-pull-request":    decodeUndo[ClosePullRequest],
	"delete-comment":        decodeUndo[DeleteComment],
	"delete-review-comment": decodeUndo[DeleteReviewComment],
	"remove-review-request": decodeUndo[RemoveReviewRequest],
	"close-issue":           decodeUndo[CloseIssue],
	"reopen-issue":          decodeUndo[ReopenIssue],
}

// undoAction is a pointer to one of the undo kinds' structs.
type undoAction[T any] interface {
	*T
	Undo
	validate() error
	setRunner(*runner.Runner)
}

func decodeUndo[T any, P undoAction[T]](r *runner.Runner, params json.RawMessage) (Undo, error) {
	a := P(new(T))
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(a); err != nil {
		return nil, invalidf(a.Kind(), "recorded parameters %s: %v", params, err)
	}
	a.setRunner(r)
	return validated(a)
}

func (a *ResetCommit) setRunner(r *runner.Runner)         { a.Runner = r }
func (a *RevertCommit) setRunner(r *runner.Runner)        { a.Runner = r }
func (a *DeleteRemoteBranch) setRunner(r *runner.Runner)  { a.Runner = r }
func (a *ClosePullRequest) setRunner(r *runner.Runner)    { a.Runner = r }
func (a *DeleteComment) setRunner(r *runner.Runner)       { a.Runner = r }
func (a *DeleteReviewComment) setRunner(r *runner.Runner) { a.Runner = r }
func (a *RemoveReviewRequest) setRunner(r *runner.Runner) { a.Runner = r }
func (a *CloseIssue) setRunner(r *runner.Runner)          { a.Runner = r }
func (a *ReopenIssue) setRunner(r *runner.Runner)         { a.Runner = r }

// inverse is the recorded inverse performing u would be.
func inverse(u Undo) (logbook.Inverse, error) {
	params, err := json.Marshal(u)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return logbook.Inverse{Kind: u.Kind(), Params: params}, nil
}

// Inverse of a commit: reset the branch it landed on to its parent.
func (a *Commit) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	branch, err := checkedOutBranch(ctx, a.Runner)
	if err != nil {
		return logbook.Inverse{}, err
	}
	if _, err := revParse(ctx, a.Runner, res.SHA+"^"); err != nil {
		return logbook.Inverse{None: "it is the repository's first commit: there is no parent to go back to"}, nil
	}
	return inverse(&ResetCommit{SHA: res.SHA, Branch: branch})
}

// Inverse of a push: delete the branch, when the push created it. A push
// that moved a branch already there has none: taking it back would need
// a force push; nor has one that found the branch up to date.
func (a *Push) Inverse(_ context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	if a.upToDate {
		return logbook.Inverse{None: fmt.Sprintf("the push changed nothing: branch %s was up to date on the remote", a.Branch)}, nil
	}
	if !a.created {
		return logbook.Inverse{None: fmt.Sprintf("the push moved branch %s, which was on the remote already: taking it back would need a force push, which helm does not do; undo the commits it carried instead (their undo reverts them), then push again", a.Branch)}, nil
	}
	return inverse(&DeleteRemoteBranch{Remote: a.Remote, Branch: a.Branch, SHA: res.SHA})
}

// Inverse of a pull request: close it.
func (a *CreatePullRequest) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return inverse(&ClosePullRequest{Repo: repo, Number: res.Number})
}

// Inverse of a merge: none.
func (a *MergePullRequest) Inverse(context.Context, logbook.ActionResult) (logbook.Inverse, error) {
	return logbook.Inverse{None: "a merged pull request cannot be unmerged (GitHub has no such operation): revert its merge commit in a new pull request instead"}, nil
}

// Inverse of a comment: delete it.
func (a *CommentPullRequest) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	return deleteCommentInverse(ctx, a.Runner, a.Repo, res)
}

// Inverse of a reply: delete it.
func (a *ReplyPullRequest) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return inverse(&DeleteReviewComment{Repo: repo, Number: res.Number, CommentID: res.CommentID})
}

// Inverse of a review request: remove it.
func (a *RequestReview) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	if len(a.added) == 0 {
		return logbook.Inverse{None: "everyone it asked was asked already: it changed nothing to take back"}, nil
	}
	return inverse(&RemoveReviewRequest{Repo: repo, Number: res.Number, Reviewers: a.added})
}

// Inverse of a new issue: close it.
func (a *CreateIssue) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return inverse(&CloseIssue{Repo: repo, Number: res.Number})
}

// Inverse of closing an issue: reopen it, unless it was closed already.
func (a *CloseIssue) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	if a.closedBefore {
		return logbook.Inverse{None: fmt.Sprintf("issue #%d was closed already: closing it changed nothing to take back", a.Number)}, nil
	}
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return inverse(&ReopenIssue{Repo: repo, Number: res.Number})
}

// Inverse of a comment: delete it.
func (a *CommentIssue) Inverse(ctx context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	return deleteCommentInverse(ctx, a.Runner, a.Repo, res)
}

func deleteCommentInverse(ctx context.Context, r *runner.Runner, repo string, res logbook.ActionResult) (logbook.Inverse, error) {
	name, err := repoOf(ctx, r, repo)
	if err != nil {
		return logbook.Inverse{}, err
	}
	return inverse(&DeleteComment{Repo: name, Number: res.Number, CommentID: res.CommentID})
}

// ResetCommit takes back a commit that was not pushed: the branch goes
// back to the commit's parent (`git reset --soft SHA^`), and the
// commit's changes are staged again, as they were before it. It is
// refused when the branch is not checked out, when HEAD is not the commit
// (later commits exist: undo them first) and when the commit is on a
// remote-tracking branch (pushed: revert it instead). Result: Branch and
// the SHA it now points to.
type ResetCommit struct {
	SHA    string         `json:"sha"`
	Branch string         `json:"branch,omitempty"`
	Runner *runner.Runner `json:"-"`
}

func (a *ResetCommit) validate() error {
	return validateCommitUndo(a.Kind(), a.Runner, a.SHA, a.Branch)
}

// Kind returns "reset-commit".
func (*ResetCommit) Kind() string { return "reset-commit" }

// Perform checks the commit is the branch's last and unpushed, and
// resets the branch to its parent.
func (a *ResetCommit) Perform(ctx context.Context) (logbook.ActionResult, error) {
	k := a.Kind()
	if err := a.validate(); err != nil {
		return logbook.ActionResult{}, err
	}
	if err := onBranch(ctx, k, a.Runner, a.Branch); err != nil {
		return logbook.ActionResult{}, err
	}
	head, err := revParse(ctx, a.Runner, "HEAD")
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	if head != a.SHA {
		if _, err := a.Runner.Git(ctx, "merge-base", "--is-ancestor", a.SHA, head); err != nil {
			var ee *runner.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 1 {
				return logbook.ActionResult{}, fmt.Errorf("%s: find whether HEAD follows commit %s: %w", k, shortSHA(a.SHA), err)
			}
			return logbook.ActionResult{}, fmt.Errorf("%s: commit %s is no longer on %s (HEAD is %s, which does not follow it): it was amended or reset away since; take back what is left of it by hand", k, shortSHA(a.SHA), branchName(a.Branch), shortSHA(head))
		}
		return logbook.ActionResult{}, fmt.Errorf("%s: HEAD is %s, not the commit %s: later commits were made on it; undo them first", k, shortSHA(head), shortSHA(a.SHA))
	}
	pushed, err := pushedIn(ctx, a.Runner, a.SHA)
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	if pushed != "" {
		return logbook.ActionResult{}, fmt.Errorf("%s: commit %s is on %s: it was pushed, and a reset would need a force push; undo it again to revert it instead", k, shortSHA(a.SHA), pushed)
	}
	parent, err := revParse(ctx, a.Runner, a.SHA+"^")
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	if _, err := a.Runner.Git(ctx, "reset", "--soft", parent); err != nil {
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	return logbook.ActionResult{SHA: parent, Branch: a.Branch}, nil
}

// DryRun renders the git command.
func (a *ResetCommit) DryRun(context.Context) string {
	return dryGit(a.Runner, "reset", "--soft", a.SHA+"^")
}

// Target names what the reset acts on, for guard rules: the repository,
// the branch and the arguments --soft SHA^.
func (a *ResetCommit) Target(ctx context.Context) (Target, error) {
	return commitUndoTarget(ctx, a.Kind(), a.Runner, a.validate, a.Branch, "--soft", a.SHA+"^")
}

// RevertCommit takes back a commit that was pushed: a new commit undoes
// its changes (`git revert --no-edit SHA`) on the branch, which must be
// checked out. The revert is not pushed: push it to take the commit back
// on the remote. If git cannot revert cleanly, the revert is abandoned
// (`git revert --abort`) and the working tree left as it was. Given a
// witness (Witness), the revert commit carries it as a trailer, as a
// commit does (git revert takes no trailer: the revert is amended with
// `git commit --amend --no-edit --trailer LINE`). Result: Branch, the
// revert commit's SHA, and the witness written.
type RevertCommit struct {
	SHA    string         `json:"sha"`
	Branch string         `json:"branch,omitempty"`
	Runner *runner.Runner `json:"-"`
	witness
}

func (a *RevertCommit) validate() error {
	return validateCommitUndo(a.Kind(), a.Runner, a.SHA, a.Branch)
}

// Kind returns "revert-commit".
func (*RevertCommit) Kind() string { return "revert-commit" }

// Perform reverts the commit on its branch.
func (a *RevertCommit) Perform(ctx context.Context) (logbook.ActionResult, error) {
	k := a.Kind()
	if err := a.validate(); err != nil {
		return logbook.ActionResult{}, err
	}
	if err := onBranch(ctx, k, a.Runner, a.Branch); err != nil {
		return logbook.ActionResult{}, err
	}
	// A cherry-pick or revert of the user's own in progress is theirs:
	// git would refuse to start another, and aborting then would throw
	// their work away.
	for _, ref := range []string{"REVERT_HEAD", "CHERRY_PICK_HEAD"} {
		at, err := pseudoRef(ctx, a.Runner, ref)
		if err != nil {
			return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
		}
		if at != "" {
			return logbook.ActionResult{}, fmt.Errorf("%s: a %s is in progress in the working tree (%s is %s): finish it or abort it first, then undo again", k,
				map[string]string{"REVERT_HEAD": "revert", "CHERRY_PICK_HEAD": "cherry-pick"}[ref], ref, shortSHA(at))
		}
	}
	if _, err := a.Runner.Git(ctx, "merge-base", "--is-ancestor", a.SHA, "HEAD"); err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) && ee.ExitCode == 1 {
			return logbook.ActionResult{}, fmt.Errorf("%s: commit %s is not in the history of %s: there is nothing of it here to revert", k, shortSHA(a.SHA), branchName(a.Branch))
		}
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	if _, err := a.Runner.Git(ctx, committing("revert", "--no-edit", a.SHA)...); err != nil {
		// Abandon the revert only when it started (it stopped on a
		// conflict): there is nothing to abort when it failed before.
		if at, _ := pseudoRef(context.WithoutCancel(ctx), a.Runner, "REVERT_HEAD"); at != "" {
			_, _ = a.Runner.Git(context.WithoutCancel(ctx), "revert", "--abort")
		}
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", k, err)
	}
	if a.line != "" {
		if _, err := a.Runner.Git(ctx, append(committing("commit", "--amend", "--no-edit"), a.trailerArgs()...)...); err != nil {
			sha, _ := revParse(context.WithoutCancel(ctx), a.Runner, "HEAD")
			return logbook.ActionResult{SHA: sha, Branch: a.Branch}, fmt.Errorf("%s: reverted as %s, but the revert could not be given its %s trailer, so it witnesses nothing: %w", k, shortSHA(sha), chain.TrailerKey, err)
		}
	}
	sha, err := revParse(ctx, a.Runner, "HEAD")
	if err != nil {
		return logbook.ActionResult{Branch: a.Branch}, fmt.Errorf("%s: reverted, but %w", k, err)
	}
	res := logbook.ActionResult{SHA: sha, Branch: a.Branch, Witness: a.line}
	if err := a.checkTrailer(ctx, a.Runner, sha); err != nil {
		return res, fmt.Errorf("%s: %w", k, err)
	}
	return res, nil
}

// DryRun renders the git command.
func (a *RevertCommit) DryRun(context.Context) string {
	return dryGit(a.Runner, committing("revert", "--no-edit", a.SHA)...)
}

// Target names what the revert acts on, for guard rules: the repository,
// the branch and the arguments --no-edit SHA.
func (a *RevertCommit) Target(ctx context.Context) (Target, error) {
	return commitUndoTarget(ctx, a.Kind(), a.Runner, a.validate, a.Branch, "--no-edit", a.SHA)
}

func validateCommitUndo(kind string, r *runner.Runner, sha, branch string) error {
	if err := needRunner(kind, r); err != nil {
		return err
	}
	if !isHex(sha) {
		return invalidf(kind, "commit %q is not a commit's SHA", sha)
	}
	if branch != "" {
		return checkRef(kind, "branch", branch)
	}
	return nil
}

func commitUndoTarget(ctx context.Context, kind string, r *runner.Runner, validate func() error, branch string, args ...string) (Target, error) {
	if err := validate(); err != nil {
		return Target{}, err
	}
	repo, err := remoteRepo(ctx, r, "origin")
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", kind, err)
	}
	return Target{Repo: repo, Branch: branch, Args: args}, nil
}

func isHex(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// onBranch checks that the branch the commit landed on is the one checked
// out ("" when it landed on a detached HEAD: HEAD must still be detached).
func onBranch(ctx context.Context, kind string, r *runner.Runner, branch string) error {
	current, err := checkedOutBranch(ctx, r)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if current != branch {
		if dir := worktreeOf(ctx, r, branch); dir != "" {
			return fmt.Errorf("%s: the commit landed on %s, which is checked out in the working tree %s: undo it there", kind, branchName(branch), dir)
		}
		return fmt.Errorf("%s: the commit landed on %s, but %s is checked out: switch to %s first", kind, branchName(branch), branchName(current), branchName(branch))
	}
	return nil
}

// worktreeOf returns the other working tree of the repository in which
// branch is checked out (git will not check it out twice), or "".
func worktreeOf(ctx context.Context, r *runner.Runner, branch string) string {
	if branch == "" {
		return ""
	}
	out, err := r.Git(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	dir := ""
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		if d, ok := strings.CutPrefix(line, "worktree "); ok {
			dir = d
		} else if line == "branch refs/heads/"+branch {
			return dir
		}
	}
	return ""
}

func branchName(b string) string {
	if b == "" {
		return "a detached HEAD"
	}
	return "branch " + b
}

// pushedIn returns a remote-tracking branch that holds the commit, or ""
// when none does (`git for-each-ref --contains SHA refs/remotes`).
func pushedIn(ctx context.Context, r *runner.Runner, sha string) (string, error) {
	if _, err := r.Git(ctx, "rev-parse", "-q", "--verify", sha+"^{commit}"); err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) && ee.ExitCode == 1 {
			where := "in the working directory"
			if r.Dir != "" {
				where = "at " + r.Dir
			}
			return "", fmt.Errorf("commit %s is not in the repository %s: undo it in the working tree where it was made", shortSHA(sha), where)
		}
		return "", fmt.Errorf("find commit %s: %w", shortSHA(sha), err)
	}
	out, err := r.Git(ctx, "for-each-ref", "--contains", sha, "--format=%(refname:short)", "refs/remotes")
	if err != nil {
		return "", fmt.Errorf("find whether commit %s was pushed: %w", shortSHA(sha), err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// pseudoRef returns the commit a pseudo-ref such as REVERT_HEAD names,
// or "" when there is none.
func pseudoRef(ctx context.Context, r *runner.Runner, ref string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) && ee.ExitCode == 1 {
			return "", nil // --quiet says there is none with status 1 alone
		}
		return "", fmt.Errorf("find whether a %s is in progress: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func shortSHA(sha string) string { return sha[:min(len(sha), 7)] }

// DeleteRemoteBranch deletes a branch a push created, only while it still
// points at the commit pushed (`git push --force-with-lease=refs/heads/
// BRANCH:SHA REMOTE --delete BRANCH`): if someone pushed to it since,
// the remote refuses and nothing is deleted. Result: Branch and SHA.
type DeleteRemoteBranch struct {
	Remote string         `json:"remote,omitempty"`
	Branch string         `json:"branch"`
	SHA    string         `json:"sha"`
	Runner *runner.Runner `json:"-"`
}

func (a *DeleteRemoteBranch) validate() error {
	k := a.Kind()
	if err := needRunner(k, a.Runner); err != nil {
		return err
	}
	if err := checkRef(k, "branch", a.Branch); err != nil {
		return err
	}
	if a.Remote != "" {
		if err := checkRef(k, "remote", a.Remote); err != nil {
			return err
		}
	}
	if !isHex(a.SHA) {
		return invalidf(k, "commit %q is not a commit's SHA", a.SHA)
	}
	return nil
}

// Kind returns "delete-remote-branch".
func (*DeleteRemoteBranch) Kind() string { return "delete-remote-branch" }

func (a *DeleteRemoteBranch) remote() string {
	if a.Remote == "" {
		return "origin"
	}
	return a.Remote
}

func (a *DeleteRemoteBranch) args() []string {
	return []string{"push", "--porcelain", "--force-with-lease=refs/heads/" + a.Branch + ":" + a.SHA, a.remote(), "--delete", a.Branch}
}

// Perform deletes the branch on the remote.
func (a *DeleteRemoteBranch) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := a.validate(); err != nil {
		return logbook.ActionResult{}, err
	}
	if _, err := a.Runner.Git(ctx, a.args()...); err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) {
			if refused := porcelain(ee.Stdout).refused; refused != "" {
				return logbook.ActionResult{}, fmt.Errorf("%s: %s (the branch moved since it was pushed, or is gone): %w", a.Kind(), refused, err)
			}
		}
		return logbook.ActionResult{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	return logbook.ActionResult{Branch: a.Branch, SHA: a.SHA}, nil
}

// DryRun renders the git command.
func (a *DeleteRemoteBranch) DryRun(context.Context) string { return dryGit(a.Runner, a.args()...) }

// Target names what the deletion acts on, for guard rules: every
// repository the remote names (as a push's Target does), the branch, the
// ref deleted (a deletion, as a fact rules match) and the arguments
// --delete REMOTE BRANCH.
func (a *DeleteRemoteBranch) Target(ctx context.Context) (Target, error) {
	if err := a.validate(); err != nil {
		return Target{}, err
	}
	repos, err := remoteRepos(ctx, a.Runner, a.remote(), nil)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	t := Target{Branch: a.Branch, Args: []string{"--delete", a.remote(), a.Branch},
		Refs: []logbook.RefUpdate{{Ref: "refs/heads/" + a.Branch, Delete: true}}}
	if len(repos) > 0 {
		t.Repo = repos[0]
	}
	if len(repos) > 1 {
		t.Repos = repos[1:]
	}
	return t, nil
}

// ClosePullRequest closes a pull request without merging it. Result:
// Number.
type ClosePullRequest struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Runner *runner.Runner `json:"-"`
}

func (a *ClosePullRequest) validate() error {
	return checkNumbered(a.Kind(), a.Runner, a.Repo, "pull request number", a.Number)
}

// Kind returns "close-pull-request".
func (*ClosePullRequest) Kind() string { return "close-pull-request" }

func (a *ClosePullRequest) call(repo string) (string, string, any) {
	return "PATCH", fmt.Sprintf("repos/%s/pulls/%d", repo, a.Number), map[string]any{"state": "closed"}
}

// Perform closes the pull request.
func (a *ClosePullRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number}, nil
}

// DryRun renders the gh call.
func (a *ClosePullRequest) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// Target names the repository and the argument N.
func (a *ClosePullRequest) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number))
}

// DeleteComment deletes a comment on an issue or a pull request's
// conversation, by id; Number names the issue or pull request it is on.
// Result: Number and CommentID.
type DeleteComment struct {
	Repo      string         `json:"repo,omitempty"`
	Number    int            `json:"number"`
	CommentID int64          `json:"comment_id"`
	Runner    *runner.Runner `json:"-"`
}

func (a *DeleteComment) validate() error {
	return validateCommentID(a.Kind(), a.Runner, a.Repo, a.Number, a.CommentID)
}

func validateCommentID(kind string, r *runner.Runner, repo string, number int, id int64) error {
	if err := checkNumbered(kind, r, repo, "number", number); err != nil {
		return err
	}
	if id <= 0 {
		return invalidf(kind, "comment id %d is not a positive number", id)
	}
	return nil
}

// Kind returns "delete-comment".
func (*DeleteComment) Kind() string { return "delete-comment" }

func (a *DeleteComment) call(repo string) (string, string, any) {
	return "DELETE", fmt.Sprintf("repos/%s/issues/comments/%d", repo, a.CommentID), map[string]any{}
}

// Perform deletes the comment.
func (a *DeleteComment) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, CommentID: a.CommentID}, nil
}

// DryRun renders the gh call.
func (a *DeleteComment) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// Target names the repository and the arguments N --comment ID.
func (a *DeleteComment) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--comment", strconv.FormatInt(a.CommentID, 10))
}

// DeleteReviewComment deletes an inline review comment on a pull
// request's diff (a reply among them), by id. Result: Number and
// CommentID.
type DeleteReviewComment struct {
	Repo      string         `json:"repo,omitempty"`
	Number    int            `json:"number"`
	CommentID int64          `json:"comment_id"`
	Runner    *runner.Runner `json:"-"`
}

func (a *DeleteReviewComment) validate() error {
	return validateCommentID(a.Kind(), a.Runner, a.Repo, a.Number, a.CommentID)
}

// Kind returns "delete-review-comment".
func (*DeleteReviewComment) Kind() string { return "delete-review-comment" }

func (a *DeleteReviewComment) call(repo string) (string, string, any) {
	return "DELETE", fmt.Sprintf("repos/%s/pulls/comments/%d", repo, a.CommentID), map[string]any{}
}

// Perform deletes the comment.
func (a *DeleteReviewComment) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, CommentID: a.CommentID}, nil
}

// DryRun renders the gh call.
func (a *DeleteReviewComment) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// Target names the repository and the arguments N --comment ID.
func (a *DeleteReviewComment) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--comment", strconv.FormatInt(a.CommentID, 10))
}

// RemoveReviewRequest takes back review requests on a pull request
// (logins, or ORG/TEAM for teams). Result: Number and Reviewers.
type RemoveReviewRequest struct {
	Repo      string         `json:"repo,omitempty"`
	Number    int            `json:"number"`
	Reviewers []string       `json:"reviewers"`
	Runner    *runner.Runner `json:"-"`
}

func (a *RemoveReviewRequest) validate() error {
	k := a.Kind()
	if err := checkNumbered(k, a.Runner, a.Repo, "pull request number", a.Number); err != nil {
		return err
	}
	return checkReviewers(k, a.Reviewers)
}

// Kind returns "remove-review-request".
func (*RemoveReviewRequest) Kind() string { return "remove-review-request" }

func (a *RemoveReviewRequest) call(repo string) (string, string, any) {
	return "DELETE", fmt.Sprintf("repos/%s/pulls/%d/requested_reviewers", repo, a.Number), splitReviewers(a.Reviewers)
}

// Perform removes the requests.
func (a *RemoveReviewRequest) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number, Reviewers: slices.Clone(a.Reviewers)}, nil
}

// DryRun renders the gh call.
func (a *RemoveReviewRequest) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// Target names the repository and the arguments N --reviewer LOGIN...
func (a *RemoveReviewRequest) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, append([]string{strconv.Itoa(a.Number)}, flagEach("--reviewer", a.Reviewers)...)...)
}

// ReopenIssue reopens a closed issue. Result: Number.
type ReopenIssue struct {
	Repo   string         `json:"repo,omitempty"`
	Number int            `json:"number"`
	Runner *runner.Runner `json:"-"`
}

func (a *ReopenIssue) validate() error {
	return checkNumbered(a.Kind(), a.Runner, a.Repo, "issue number", a.Number)
}

// Kind returns "reopen-issue".
func (*ReopenIssue) Kind() string { return "reopen-issue" }

func (a *ReopenIssue) call(repo string) (string, string, any) {
	return "PATCH", fmt.Sprintf("repos/%s/issues/%d", repo, a.Number), map[string]any{"state": "open"}
}

// Perform reopens the issue.
func (a *ReopenIssue) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := perform(ctx, a.Kind(), a.Runner, a.validate, a.Repo, a.call, nil); err != nil {
		return logbook.ActionResult{}, err
	}
	return logbook.ActionResult{Number: a.Number}, nil
}

// DryRun renders the gh call.
func (a *ReopenIssue) DryRun(ctx context.Context) string {
	return dryCall(ctx, a.Runner, a.Repo, a.call)
}

// Target names the repository and the argument N.
func (a *ReopenIssue) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number))
}
