package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/runner"
)

// performer is an action the CLI can perform or show.
type performer interface {
	helm.Action
	DryRun() string
}

// resolver is an action with parameters that default to the state of the
// world, filled in by Resolve (actions.Push: the current branch).
type resolver interface {
	Resolve(ctx context.Context) error
}

// actionKind is how the CLI spells one action kind.
type actionKind struct {
	name, summary, args, example string
	help                         string // more about it, for --help
	github                       bool   // talks to GitHub: takes --repo
	flags                        func(fs *pflag.FlagSet, f *actionFlags)
	build                        func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error)
}

// actionFlags holds the flags of every action kind.
type actionFlags struct {
	message, branch, remote, title, body, base, mergeMethod, repo string
	reviewers                                                     []string
	comment                                                       int64
	force                                                         bool
}

func bodyFlag(fs *pflag.FlagSet, f *actionFlags) {
	fs.StringVar(&f.body, "body", "", "the `TEXT` to post")
}

func noArgs(a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "%s: unexpected arguments %q (quote text given to flags)", commandName(a.cmd), args)
	}
	return nil
}

var actionKinds = []*actionKind{
	{
		name: "commit", summary: "commit the staged changes (git commit -m)",
		args: "--message MSG", example: `commit --message "Fix null check in widget init"`,
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringVarP(&f.message, "message", "m", "", "the commit message, `MSG`")
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			if err := noArgs(a, args); err != nil {
				return nil, err
			}
			return actions.NewCommit(r, actions.Commit{Message: f.message})
		},
	},
	{
		name: "push", summary: "push a branch (git push origin BRANCH)",
		args: "[--branch BRANCH] [--remote NAME] [--force]", example: "push --branch fix-widget",
		help: `Push a branch to a remote: git push REMOTE BRANCH. BRANCH is what git takes
there: a branch, a tag, or a refspec (+SRC:DST, HEAD:main, :main deletes
main). Before the intent is recorded, helm asks git what the push would do
(git push --dry-run, which changes nothing): every ref it would create,
update, force or delete, and where it would go (the remote's URL and push
URL as configured and as rewritten by insteadOf/pushInsteadOf). Guard rules
match those, not the text typed; the intent records them, and the push then
does exactly that, each ref pinned to the commit git showed. A push git
cannot resolve, or that the remote would refuse (not a fast-forward,
without --force), exits 2 with nothing recorded or pushed. Without
--branch, the branch checked out in the working directory; a detached HEAD
has none, and is refused. Without --remote, origin.`,
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringVar(&f.branch, "branch", "", "the `BRANCH` (or refspec) to push (default the current branch)")
			fs.StringVar(&f.remote, "remote", "", "the remote to push to, `NAME` (default origin)")
			fs.BoolVar(&f.force, "force", false, "push even where it is not a fast-forward (guard rules see a forced update)")
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			if err := noArgs(a, args); err != nil {
				return nil, err
			}
			return actions.NewPush(r, actions.Push{Branch: f.branch, Remote: f.remote, Force: f.force})
		},
	},
	{
		name: "create-pull-request", summary: "open a pull request, and request reviews",
		args: "--title T [--branch B] [--body TEXT] [--base B] [--reviewer R]...", github: true,
		example: `create-pull-request --branch fix-widget --title "Fix widget crash" --reviewer dyreby`,
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringVar(&f.branch, "branch", "", "the head `BRANCH`, pushed already (default the current branch)")
			fs.StringVar(&f.title, "title", "", "the pull request's `TITLE`")
			bodyFlag(fs, f)
			fs.StringVar(&f.base, "base", "", "the `BRANCH` to merge into (default the repository's default branch)")
			fs.StringArrayVar(&f.reviewers, "reviewer", nil, "request a review from `LOGIN` (repeatable)")
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			if err := noArgs(a, args); err != nil {
				return nil, err
			}
			return actions.NewCreatePullRequest(r, actions.CreatePullRequest{Branch: f.branch, Title: f.title, Body: f.body, Base: f.base, Reviewers: splitList(f.reviewers)})
		},
	},
	{
		name: "merge-pull-request", summary: "merge a pull request",
		args: "N [--merge-method merge|squash|rebase]", github: true, example: "merge-pull-request 45 --merge-method squash",
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringVar(&f.mergeMethod, "merge-method", "", "merge by `HOW`: merge, squash or rebase (default merge)")
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			return actions.NewMergePullRequest(r, actions.MergePullRequest{Number: n, Method: f.mergeMethod})
		},
	},
	{
		name: "comment-pull-request", summary: "comment on a pull request's conversation",
		args: "N --body TEXT", github: true, example: `comment-pull-request 45 --body "Rebased on main."`,
		flags: bodyFlag,
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			return actions.NewCommentPullRequest(r, actions.CommentPullRequest{Number: n, Body: f.body})
		},
	},
	{
		name: "reply-pull-request", summary: "reply to an inline review comment",
		args: "N --comment ID --body TEXT", github: true, example: `reply-pull-request 45 --comment 1234 --body "Fixed in abc1234."`,
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.Int64Var(&f.comment, "comment", 0, "the inline review comment's `ID` (see observe github-pr N --focus comments)")
			bodyFlag(fs, f)
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			if f.comment <= 0 {
				return nil, usageErrorf(a.cmd, "reply-pull-request: --comment ID is required (a positive inline comment id)")
			}
			return actions.NewReplyPullRequest(r, actions.ReplyPullRequest{Number: n, CommentID: f.comment, Body: f.body})
		},
	},
	{
		name: "request-review", summary: "request reviews on a pull request",
		args: "N --reviewer R...", github: true, example: "request-review 45 --reviewer dyreby",
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringArrayVar(&f.reviewers, "reviewer", nil, "request a review from `LOGIN` or ORG/TEAM (repeatable)")
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			if len(args) > 1 {
				// request-review 45 alice bob: reviewers given as arguments.
				f.reviewers = append(f.reviewers, args[1:]...)
				args = args[:1]
			}
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			return actions.NewRequestReview(r, actions.RequestReview{Number: n, Reviewers: splitList(f.reviewers)})
		},
	},
	{
		name: "create-issue", summary: "open an issue",
		args: "--title T [--body TEXT]", github: true, example: `create-issue --title "Widget crashes on reload"`,
		flags: func(fs *pflag.FlagSet, f *actionFlags) {
			fs.StringVar(&f.title, "title", "", "the issue's `TITLE`")
			bodyFlag(fs, f)
		},
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			if err := noArgs(a, args); err != nil {
				return nil, err
			}
			return actions.NewCreateIssue(r, actions.CreateIssue{Title: f.title, Body: f.body})
		},
	},
	{
		name: "close-issue", summary: "close an issue",
		args: "N", github: true, example: "close-issue 42",
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			return actions.NewCloseIssue(r, actions.CloseIssue{Number: n})
		},
	},
	{
		name: "comment-issue", summary: "comment on an issue",
		args: "N --body TEXT", github: true, example: `comment-issue 42 --body "Fixed by #45."`,
		flags: bodyFlag,
		build: func(a *app, r *runner.Runner, f *actionFlags, args []string) (performer, error) {
			n, err := numberArg(a, args, "N")
			if err != nil {
				return nil, err
			}
			return actions.NewCommentIssue(r, actions.CommentIssue{Number: n, Body: f.body})
		},
	},
}

// splitList accepts "a,b" as well as repeated flags.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func newActionCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "action KIND ... [--dry-run]",
		Short: "perform an action in the world (git, GitHub) and record it",
		Long: `Perform an operation in the world and record it in the helm. The
intent is recorded before git or gh runs, the outcome after; a failure is
recorded too (see voyage show) and exits 1 with git's or gh's own message.
--dry-run prints exactly what would run and records nothing.

GitHub is reached through gh with the identity's own configuration
directory, $HELM_HOME/gh-config/IDENTITY/ (GH_CONFIG_DIR).`,
		Example: `  helm action commit --message "Fix null check in widget init"`,
	})
	for _, k := range actionKinds {
		use := k.name + " " + k.args
		if k.github {
			use += " [--repo OWNER/NAME]"
		}
		leaf := leafCmd(a, &cobra.Command{
			Use:     use + " [--dry-run]",
			Short:   k.summary,
			Long:    k.help,
			Example: "  helm action " + k.example,
		}, &actionCommandLeaf{kind: k})
		if k.name == "merge-pull-request" {
			fixedValues(leaf, "merge-method", "merge", "squash", "rebase")
		}
		c.AddCommand(leaf)
	}
	return c
}

// actionCommandLeaf performs one action kind.
type actionCommandLeaf struct {
	kind *actionKind
	f    actionFlags
	performing
}

func (c *actionCommandLeaf) Flags(fs *pflag.FlagSet) {
	if c.kind.flags != nil {
		c.kind.flags(fs, &c.f)
	}
	if c.kind.github {
		fs.StringVar(&c.f.repo, "repo", "", "the repository, as `OWNER/NAME` (default: the one the origin remote names)")
	}
	c.performing.flags(fs)
}

// performing is how an action is performed from the command line (helm
// action, helm undo): shown by --dry-run, or performed with a rationale
// and a person's confirmation.
type performing struct {
	dryRun      bool
	allowSecret bool
	why         string
	yes         bool
}

func (p *performing) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&p.dryRun, "dry-run", false, "print exactly what would run; run and record nothing")
	fs.StringVar(&p.why, "why", "", "the rationale for the action, `TEXT`, shown with it in the story")
	fs.BoolVar(&p.yes, "yes", false, "confirm an action that a guard rule lets run only when a person agrees")
	fs.BoolVar(&p.allowSecret, "allow-secret", false, "perform it although its parameters hold a secret (the log records them redacted)")
}

// perform shows act (--dry-run) or performs it on v, undoing entry
// undoes when that is not 0, and prints the entry recorded.
func (p *performing) perform(ctx context.Context, a *app, v *helm.Voyage, who helm.Who, act performer, undoes int) error {
	if p.dryRun {
		if a.g.json {
			return writeJSON(a.stdout, actionDryRun{Voyage: v.ID(), Kind: act.Kind(), DryRun: act.DryRun()})
		}
		out := strings.TrimRight(act.DryRun(), "\n")
		_, err := fmt.Fprintf(a.stdout, "Dry run for voyage %s: nothing is run or recorded. Would run:\n%s\n", short(v.ID()), indent(block(out, "")))
		return err
	}
	e, err := v.Perform(ctx, act, who, &helm.PerformOptions{AllowSecret: p.allowSecret, Why: p.why, Confirmed: p.yes, Undoes: undoes})
	if errors.Is(err, helm.ErrSecret) {
		// The line is the user's, the secret in it shown as its marker.
		args := make([]string, len(a.args))
		for i, arg := range a.args {
			args[i], _, _ = a.home.Redact(arg)
		}
		return &hinted{Err: err, Hint: "helm " + commandLine(args) + " --allow-secret, or take the secret out"}
	}
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, e)
	}
	_, err = fmt.Fprintf(a.stdout, "Action %d performed for voyage %s\n  %s\n", e.N, short(v.ID()), printable(helm.DescribeAction(e.Action)))
	return err
}

// actionDryRun is the --json form of a dry run.
type actionDryRun struct {
	Voyage string `json:"voyage"`
	Kind   string `json:"kind"`
	DryRun string `json:"dry_run"`
}

func (c *actionCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	// The runner is filled in once the identity is known; building the
	// action first reports bad input before the voyage is opened.
	r := &runner.Runner{}
	act, err := c.kind.build(a, r, &c.f, args)
	if errors.Is(err, actions.ErrInvalid) {
		return &usageError{Err: err, Hint: "helm " + commandWords(a.cmd) + "--help"}
	}
	if err != nil {
		return err
	}
	v, who, err := a.activeVoyage(ctx, true)
	if err != nil {
		return err
	}
	rr, err := a.runner(who.Identity, c.f.repo)
	if err != nil {
		return err
	}
	*r = *rr
	// Parameters that default to the state of the world (push's current
	// branch) are resolved now, so that the dry run shows, and the intent
	// records, what will run.
	if res, ok := act.(resolver); ok {
		if err := res.Resolve(ctx); err != nil {
			if errors.Is(err, actions.ErrDetachedHead) {
				return &hinted{Err: err, Hint: "helm " + commandLine(a.args) + " --branch BRANCH, or git switch BRANCH first"}
			}
			return err
		}
	}
	return c.perform(ctx, a, v, who, act, 0)
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}
