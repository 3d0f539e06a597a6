package actions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// Commit records the staged changes as a commit in the runner's working
// directory (`git commit -m MESSAGE`). Nothing staged is an error carrying
// git's own message. Result: SHA.
type Commit struct {
	Message string         `json:"message"`
	Runner  *runner.Runner `json:"-"`
}

// NewCommit returns the commit action a describes, performed with r
// (a's Runner is set to r).
func NewCommit(r *runner.Runner, a Commit) (*Commit, error) {
	a.Runner = r
	return validated(&a)
}

func (a *Commit) validate() error {
	if err := needRunner(a.Kind(), a.Runner); err != nil {
		return err
	}
	return checkText(a.Kind(), "commit message", a.Message)
}

// Kind returns "commit".
func (*Commit) Kind() string { return "commit" }

func (a *Commit) args() []string { return []string{"commit", "-m", a.Message} }

// Perform commits and returns the new commit's SHA.
func (a *Commit) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := a.validate(); err != nil {
		return logbook.ActionResult{}, err
	}
	if _, err := a.Runner.Git(ctx, a.args()...); err != nil {
		return logbook.ActionResult{}, fmt.Errorf("commit: %w", err)
	}
	sha, err := revParse(ctx, a.Runner, "HEAD")
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("commit: committed, but %w", err)
	}
	return logbook.ActionResult{SHA: sha}, nil
}

// DryRun renders the git command.
func (a *Commit) DryRun() string { return dryGit(a.Runner, a.args()...) }

// Push pushes a local branch to a remote (`git push REMOTE BRANCH`; the
// remote defaults to origin, the branch to the one checked out). Result:
// Branch and the SHA pushed.
//
// With no Branch, Resolve (or Perform) asks git for the current branch
// (`git rev-parse --abbrev-ref HEAD`) and fills it in; call Resolve before
// the action is recorded, so that its parameters name the branch pushed.
// A detached HEAD has no branch to push: ErrDetachedHead, an ErrInvalid.
type Push struct {
	Branch string         `json:"branch"`
	Remote string         `json:"remote,omitempty"`
	Runner *runner.Runner `json:"-"`
	// created says Perform made the branch on the remote, upToDate that
	// it found it where it pushed it (for Inverse).
	created, upToDate bool
}

// NewPush returns the push action a describes, performed with r
// (a's Runner is set to r). Remote "" means origin; Branch "" the branch
// checked out when the action is resolved or performed.
func NewPush(r *runner.Runner, a Push) (*Push, error) {
	a.Runner = r
	return validated(&a)
}

func (a *Push) validate() error {
	if err := needRunner(a.Kind(), a.Runner); err != nil {
		return err
	}
	if a.Branch != "" {
		if err := checkRef(a.Kind(), "branch", a.Branch); err != nil {
			return err
		}
	}
	if a.Remote != "" {
		return checkRef(a.Kind(), "remote", a.Remote)
	}
	return nil
}

// Kind returns "push".
func (*Push) Kind() string { return "push" }

// Resolve fills in the branch, when none was given, with the one checked
// out in the runner's working directory. It reads the repository and
// changes nothing.
func (a *Push) Resolve(ctx context.Context) error {
	if err := a.validate(); err != nil {
		return err
	}
	return resolveBranch(ctx, a.Kind(), a.Runner, &a.Branch)
}

// resolveBranch sets *branch, when empty, to the branch checked out in
// r's working directory. A branch named as git reads it is named as the
// branch it updates: HEAD and @ are the branch checked out, and
// refs/heads/NAME is NAME (guard rules match the branch, and the result
// reads refs/heads/ of it).
func resolveBranch(ctx context.Context, kind string, r *runner.Runner, branch *string) error {
	switch *branch {
	case "", "HEAD", "@":
	default:
		if name, ok := strings.CutPrefix(*branch, "refs/heads/"); ok {
			if err := checkRef(kind, "branch", name); err != nil {
				return err
			}
			*branch = name
		}
		return nil
	}
	b, err := currentBranch(ctx, r)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if err := checkRef(kind, "current branch", b); err != nil {
		return err
	}
	*branch = b
	return nil
}

// currentBranch returns the branch checked out in the runner's working
// directory (`git rev-parse --abbrev-ref HEAD`); a detached HEAD is
// ErrDetachedHead.
func currentBranch(ctx context.Context, r *runner.Runner) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil {
		return "", fmt.Errorf("find the current branch: %w", err)
	}
	branch := strings.TrimSpace(string(out))
	if branch == "HEAD" {
		at := ""
		if sha, err := revParse(ctx, r, "HEAD"); err == nil && len(sha) >= 7 {
			at = " (at " + sha[:7] + ")"
		}
		return "", fmt.Errorf("%w: %w%s: no branch is checked out; name the branch", ErrInvalid, ErrDetachedHead, at)
	}
	return branch, nil
}

func (a *Push) args() []string {
	remote := a.Remote
	if remote == "" {
		remote = "origin"
	}
	branch := a.Branch
	if branch == "" {
		branch = "<current-branch>"
	}
	return []string{"push", remote, branch}
}

// runArgs is what Perform runs: the push, told to report each ref it
// updates on standard output (--porcelain), so that it says whether the
// branch was new on the remote.
func (a *Push) runArgs() []string {
	return slices.Insert(a.args(), 1, "--porcelain")
}

// Perform pushes and returns the branch and the commit it points to.
func (a *Push) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := a.Resolve(ctx); err != nil {
		return logbook.ActionResult{}, err
	}
	out, err := a.Runner.Git(ctx, a.runArgs()...)
	if err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) {
			if refused := porcelain(ee.Stdout).refused; refused != "" {
				return logbook.ActionResult{}, fmt.Errorf("push: %s: %w", refused, err)
			}
		}
		return logbook.ActionResult{}, fmt.Errorf("push: %w", err)
	}
	report := porcelain(string(out))
	a.created, a.upToDate = report.created, report.upToDate
	sha, err := revParse(ctx, a.Runner, "refs/heads/"+a.Branch)
	if err != nil {
		return logbook.ActionResult{Branch: a.Branch}, fmt.Errorf("push: pushed, but %w", err)
	}
	return logbook.ActionResult{Branch: a.Branch, SHA: sha}, nil
}

// DryRun renders the git command. Without a branch (not resolved yet), it
// shows the lookup of the current branch and the placeholder
// <current-branch>.
func (a *Push) DryRun() string {
	if a.Branch == "" {
		return dryGit(a.Runner, "rev-parse", "--abbrev-ref", "HEAD") + "\n" + dryGit(a.Runner, a.runArgs()...)
	}
	return dryGit(a.Runner, a.runArgs()...)
}

// pushReport is what `git push --porcelain` reports of the refs pushed,
// one line each, "FLAG<tab>FROM:TO<tab>SUMMARY": whether one was new on
// the remote (flag "*"), whether every one was up to date there already
// (flag "="), and why the remote refused one (flag "!": "[rejected]
// (non-fast-forward)").
type pushReport struct {
	created, upToDate bool
	refused           string
}

func porcelain(out string) pushReport {
	var r pushReport
	seen, allSame := false, true
	for line := range strings.Lines(out) {
		flag, rest, ok := strings.Cut(strings.TrimRight(line, "\r\n"), "\t")
		if !ok || len(flag) != 1 {
			continue
		}
		seen = true
		allSame = allSame && flag == "="
		_, summary, _ := strings.Cut(rest, "\t")
		switch flag {
		case "*":
			r.created = true
		case "!":
			r.refused = strings.TrimSpace(summary)
		}
	}
	r.upToDate = seen && allSame
	return r
}

func revParse(ctx context.Context, r *runner.Runner, ref string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}
