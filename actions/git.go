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
// git's own message. Given a witness (Witness, by the voyage that
// performs it), the commit carries it as a trailer (`--trailer LINE`),
// after any trailers of the message's own; a commit whose message does
// not end with it once made (a hook rewrote it) is an error with the
// commit's SHA. Result: SHA, and the witness written.
type Commit struct {
	Message string         `json:"message"`
	Runner  *runner.Runner `json:"-"`
	witness
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

func (a *Commit) args() []string {
	return append([]string{"commit", "-m", a.Message}, a.trailerArgs()...)
}

// Perform commits and returns the new commit's SHA.
func (a *Commit) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := a.validate(); err != nil {
		return logbook.ActionResult{}, err
	}
	if _, err := a.Runner.Git(ctx, committing(a.args()...)...); err != nil {
		return logbook.ActionResult{}, fmt.Errorf("commit: %w", err)
	}
	sha, err := revParse(ctx, a.Runner, "HEAD")
	if err != nil {
		return logbook.ActionResult{}, fmt.Errorf("commit: committed, but %w", err)
	}
	res := logbook.ActionResult{SHA: sha, Witness: a.line}
	if err := a.checkTrailer(ctx, a.Runner, sha); err != nil {
		return res, fmt.Errorf("commit: %w", err)
	}
	return res, nil
}

// DryRun renders the git command.
func (a *Commit) DryRun(context.Context) string { return dryGit(a.Runner, committing(a.args()...)...) }

// Push pushes to a remote (`git push REMOTE SPEC`; the remote defaults to
// origin, SPEC to the branch checked out). Result: Branch (the branch, or
// ref, updated on the remote) and the SHA pushed to it (none for a
// deletion).
//
// Branch is what git takes after the remote: a branch (fix-widget,
// heads/fix-widget, refs/heads/fix-widget), a tag, or any refspec
// (+SRC:DST, HEAD:main, :main to delete). What it means is git's to say,
// not helm's: Resolve asks git what the push would do (`git push
// --dry-run --porcelain`, which reads the remote and changes nothing) and
// records every ref it would create, update, force or delete, and where
// it would go, in Updates; guard rules match those (see Target). Perform
// then pushes exactly that — each destination ref from the object Resolve
// saw, forced only where Resolve found it forced — so the push cannot do
// more than the guard was shown. Nothing the repository's configuration
// names may carry it elsewhere: both runs name git-receive-pack and allow
// git's own transports only (no remote helper, no ext::), and the dry run
// runs no pre-push hook (Perform's push does). Force asks for a forced
// push where a plain one would be refused.
//
// With no Branch, Resolve fills in the branch checked out; a detached
// HEAD has no branch to push: ErrDetachedHead, an ErrInvalid. A push git
// cannot resolve (no such branch, a remote it cannot reach) is ErrInvalid
// too: nothing is recorded or run. One the remote would refuse (not a
// fast-forward) is resolved, refusal noted (RefUpdate.Refused): the guard
// still judges it, and git's refusal is then recorded as the action's
// failure.
type Push struct {
	Branch string `json:"branch"`
	Remote string `json:"remote,omitempty"`
	Force  bool   `json:"force,omitempty"`
	// Updates are the refs the push changes on the remote, as Resolve
	// found them: recorded with the intent, and what Perform pushes.
	Updates []RefUpdate    `json:"updates,omitempty"`
	Runner  *runner.Runner `json:"-"`
	// urls are where the push goes, as git said (Resolve); resolved
	// says Resolve ran on this value.
	urls     []string
	resolved bool
	// created says Perform made the branch on the remote, upToDate that
	// it found it where it pushed it (for Inverse).
	created, upToDate bool
}

// RefUpdate is one ref a push changes on a remote, as git resolved it
// before the push: the destination ref's full name, the object it will
// point to (New, empty for a deletion) and what it pointed to (Old, as
// git abbreviates it; empty for a new ref or a deletion), and whether the
// update creates the ref, forces it (not a fast-forward), deletes it, or
// changes nothing (UpToDate). Refused is why the remote would refuse it
// ("[rejected] (non-fast-forward)"): the push is still put to the guard
// rules, and, if they allow it, performed and recorded as failed.
type RefUpdate struct {
	Ref      string `json:"ref"`
	Old      string `json:"old,omitempty"`
	New      string `json:"new,omitempty"`
	Create   bool   `json:"create,omitempty"`
	Force    bool   `json:"force,omitempty"`
	Delete   bool   `json:"delete,omitempty"`
	UpToDate bool   `json:"up_to_date,omitempty"`
	Refused  string `json:"refused,omitempty"`
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
		if err := checkRefspec(a.Kind(), a.Branch); err != nil {
			return err
		}
	}
	if a.Remote != "" {
		return checkRef(a.Kind(), "remote", a.Remote)
	}
	return nil
}

// checkRefspec rejects what git would read as an option, and text no
// refspec holds (white space, control characters); git judges the rest.
func checkRefspec(kind, s string) error {
	if strings.HasPrefix(s, "-") || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return invalidf(kind, "branch %q is not a valid name or refspec", s)
	}
	return nil
}

// Kind returns "push".
func (*Push) Kind() string { return "push" }

func (a *Push) remote() string {
	if a.Remote == "" {
		return "origin"
	}
	return a.Remote
}

// Resolve fills in the branch, when none was given, with the one checked
// out in the runner's working directory, and asks git what the push
// would do (Updates). It reads the repository and the remote, and
// changes nothing. Once it has succeeded, Resolve does nothing: the push
// stays the one it found (a Push decoded from recorded parameters is
// resolved anew).
func (a *Push) Resolve(ctx context.Context) error {
	if a.resolved {
		return nil
	}
	if err := a.validate(); err != nil {
		return err
	}
	if err := resolveBranch(ctx, a.Kind(), a.Runner, &a.Branch, false); err != nil {
		return err
	}
	args := []string{"push", "--dry-run", "--porcelain", "--no-verify", receivePack}
	if a.Force {
		args = append(args, "--force")
	}
	out, err := a.git(ctx, append(args, a.remote(), a.Branch)...)
	report := porcelain(string(out))
	if err != nil {
		var ee *runner.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("push: find what pushing %s to %s would do: %w", a.Branch, a.remote(), err)
		}
		report = porcelain(ee.Stdout)
		if len(report.refs) == 0 {
			return invalidf(a.Kind(), "git cannot tell what pushing %s to %s would do, so nothing was pushed (check that the branch exists and that the remote %s answers): %v", a.Branch, a.remote(), a.remote(), err)
		}
	}
	if len(report.refs) == 0 {
		return invalidf(a.Kind(), "pushing %s to %s would change no ref on the remote: name a branch, or a refspec with a destination", a.Branch, a.remote())
	}
	var updates []RefUpdate
	for _, r := range report.refs {
		u := RefUpdate{Ref: r.to, Create: r.flag == '*', Force: r.flag == '+', Delete: r.flag == '-', UpToDate: r.flag == '=', Refused: r.summary}
		if r.flag != '!' {
			u.Refused = ""
		}
		if !u.Delete {
			// The object itself, not the commit it names: an annotated
			// tag is pushed as the tag object it is.
			out, err := a.Runner.Git(ctx, "rev-parse", "--verify", "--end-of-options", r.from)
			if err != nil {
				return fmt.Errorf("push: cannot read %s: %w", r.from, err)
			}
			u.New = strings.TrimSpace(string(out))
		}
		if old, _, ok := strings.Cut(r.summary, ".."); ok && !u.Create && u.Refused == "" {
			u.Old = old
		}
		updates = mergeUpdate(updates, u)
	}
	a.Updates, a.urls, a.resolved = updates, report.urls, true
	return nil
}

// mergeUpdate adds u to updates, or merges it into the update of the same
// ref another push URL reported: forced or created where any URL is.
func mergeUpdate(updates []RefUpdate, u RefUpdate) []RefUpdate {
	for i := range updates {
		if e := &updates[i]; e.Ref == u.Ref {
			e.Force, e.Create, e.Delete = e.Force || u.Force, e.Create || u.Create, e.Delete || u.Delete
			e.UpToDate = e.UpToDate && u.UpToDate
			if e.Refused == "" {
				e.Refused = u.Refused
			}
			return updates
		}
	}
	return append(updates, u)
}

// resolveBranch sets *branch, when empty, HEAD or @, to the branch
// checked out in r's working directory. With trimRefs, a branch named
// refs/heads/NAME is named NAME (a pull request's head).
func resolveBranch(ctx context.Context, kind string, r *runner.Runner, branch *string, trimRefs bool) error {
	switch *branch {
	case "", "HEAD", "@":
	default:
		if name, ok := strings.CutPrefix(*branch, "refs/heads/"); ok && trimRefs {
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

// receivePack names the program git runs at the remote's end itself:
// remote.NAME.receivepack, which the repository's configuration may set
// to any command (for a local remote, one run here that may open any
// repository), would let a push go elsewhere than the URL the guard is
// shown.
const receivePack = "--receive-pack=git-receive-pack"

// pushProtocols are the transports a push may use
// (GIT_ALLOW_PROTOCOL, which overrides protocol.*.allow in any
// configuration): a remote helper (ext::COMMAND, NAME::URL runs
// git-remote-NAME) is a program that may take the push to any
// repository, whatever URL the guard is shown.
const pushProtocols = "GIT_ALLOW_PROTOCOL=file:git:http:https:ssh"

// git runs a push with the transports restricted to pushProtocols.
func (a *Push) git(ctx context.Context, args ...string) ([]byte, error) {
	r := *a.Runner
	r.Env = append(slices.Clip(r.Env), pushProtocols)
	return r.Git(ctx, args...)
}

// runArgs is what Perform runs once resolved: each update as a refspec
// pinned to the object Resolve saw (+ where it was forced), told to
// report each ref on standard output (--porcelain).
func (a *Push) runArgs() []string {
	args := []string{"push", "--porcelain", receivePack, a.remote()}
	for _, u := range a.Updates {
		switch {
		case u.Delete:
			args = append(args, ":"+u.Ref)
		case u.Force:
			args = append(args, "+"+u.New+":"+u.Ref)
		default:
			args = append(args, u.New+":"+u.Ref)
		}
	}
	return args
}

// Perform pushes what Resolve found (resolving first when it has not)
// and returns the ref pushed and the commit it now points to. A push
// that changed any ref on the remote is performed, even if another of
// its push URLs refused it; one that changed none is an error carrying
// git's reason.
func (a *Push) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if err := a.Resolve(ctx); err != nil {
		return logbook.ActionResult{}, err
	}
	res := a.result()
	out, err := a.git(ctx, a.runArgs()...)
	report := porcelain(string(out))
	if err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) {
			report = porcelain(ee.Stdout)
		}
		if !report.changed() {
			if report.refused != "" {
				return logbook.ActionResult{}, fmt.Errorf("push: %s: %w", report.refused, err)
			}
			return logbook.ActionResult{}, fmt.Errorf("push: %w", err)
		}
	}
	a.created, a.upToDate = report.created, report.upToDate
	return res, nil
}

// result is the push's result: its first update's ref (a branch by its
// short name) and the object pushed there.
func (a *Push) result() logbook.ActionResult {
	if len(a.Updates) == 0 {
		return logbook.ActionResult{Branch: a.Branch}
	}
	u := a.Updates[0]
	return logbook.ActionResult{Branch: strings.TrimPrefix(u.Ref, "refs/heads/"), SHA: u.New}
}

// DryRun renders the git command: once resolved, the push pinned to what
// Resolve found; before, the push as asked.
func (a *Push) DryRun(context.Context) string {
	if a.Updates != nil {
		return dryGit(a.Runner, a.runArgs()...)
	}
	args := []string{"push", "--porcelain"}
	if a.Force {
		args = append(args, "--force")
	}
	branch := a.Branch
	if branch == "" {
		return dryGit(a.Runner, "rev-parse", "--abbrev-ref", "HEAD") + "\n" + dryGit(a.Runner, append(args, a.remote(), "<current-branch>")...)
	}
	return dryGit(a.Runner, append(args, a.remote(), branch)...)
}

// pushReport is what `git push --porcelain` reports, one block per URL
// pushed to: "To URL", then a line per ref, "FLAG<tab>FROM:TO<tab>SUMMARY"
// (flag " " a fast-forward, "+" forced, "-" deleted, "*" new, "=" up to
// date, "!" refused), then "Done".
type pushReport struct {
	urls []string
	refs []refLine
	// created says a ref was new on the remote, upToDate that every one
	// was up to date there already; refused is why the remote refused
	// one ("[rejected] (non-fast-forward)").
	created, upToDate bool
	refused           string
}

type refLine struct {
	flag              byte
	from, to, summary string
}

// changed reports that the push changed a ref on the remote.
func (r pushReport) changed() bool {
	for _, l := range r.refs {
		if l.flag != '!' && l.flag != '=' {
			return true
		}
	}
	return false
}

func porcelain(out string) pushReport {
	var r pushReport
	allSame := true
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if u, ok := strings.CutPrefix(line, "To "); ok {
			r.urls = append(r.urls, u)
			continue
		}
		flag, rest, ok := strings.Cut(line, "\t")
		if !ok || len(flag) != 1 {
			continue
		}
		refs, summary, _ := strings.Cut(rest, "\t")
		from, to, ok := strings.Cut(refs, ":")
		if !ok {
			continue
		}
		l := refLine{flag: flag[0], from: from, to: to, summary: strings.TrimSpace(summary)}
		r.refs = append(r.refs, l)
		allSame = allSame && l.flag == '='
		switch l.flag {
		case '*':
			r.created = true
		case '!':
			r.refused = l.summary
		}
	}
	r.upToDate = len(r.refs) > 0 && allSame
	return r
}

func revParse(ctx context.Context, r *runner.Runner, ref string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}
