package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/witnessline"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

func newActionCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "action KIND ... [--dry-run]",
		Short: "perform an action in the world (git, GitHub) and record it",
		Long: `Perform an operation in the world and record it in the helm. The
intent is recorded before git or gh runs, the outcome after; a failure is
recorded too (see voyage show) and exits 3 with git's or gh's own message:
look before retrying. A guard rule's refusal is recorded and exits 4
(nothing runs; retrying will not help). What can be checked before
anything is recorded is checked there and exits 2, nothing recorded: bad
input, a missing role or method, a push git cannot resolve, a GitHub
action with no --repo in a repository whose origin names no GitHub
repository. --dry-run prints exactly what would run, or that same exit-2
error, and records nothing.

GitHub is reached through gh with the identity's own configuration
directory, $HELM_HOME/gh-config/IDENTITY/ (GH_CONFIG_DIR).`,
		Example: `  helm action commit --message "Fix null check in widget init"`,
	})
	for _, k := range a.main.kinds() {
		w := actionWords[k.Name]
		leaf := leafCmd(a, &cobra.Command{Short: k.Summary, Long: w.help}, &actionCommandLeaf{kind: k, params: cliParams(k)})
		leaf.Use = k.Name + " " + actionUsage(k, leaf.Flags()) + " [--dry-run]"
		if w.example != "" {
			leaf.Example = "  helm action " + w.example
		}
		for _, p := range cliParams(k) {
			if p.Enum != nil && p.arg == "" {
				fixedValues(leaf, p.flag, p.Enum...)
			}
		}
		c.AddCommand(leaf)
	}
	return c
}

// actionWords are how the command line spells the action kinds, beyond
// what actions.Kinds says of them (the library names no flag): the
// kind's longer help and an example, and for a parameter its flag, in
// its help the name of its value (the commit message, `MSG`), and, for a
// list, whether the arguments after N add to it. What a kind or a
// parameter lacks here, cliParams makes from the table: a new kind is a
// command all the same.
var actionWords = map[string]kindWords{
	"commit": {example: `commit --message "Fix null check in widget init"`, params: map[string]paramWords{
		"message": {short: "m", usage: "the commit message, `MSG`"},
	}},
	"push": {example: "push --branch fix-widget", help: `Push a branch to a remote: git push REMOTE BRANCH. BRANCH is what git takes
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
has none, and is refused. Without --remote, origin.`, params: map[string]paramWords{
		"branch": {usage: "the `BRANCH` (or refspec) to push (default the current branch)"},
		"remote": {usage: "the remote to push to, `NAME` (default origin)"},
	}},
	"create-pull-request": {example: `create-pull-request --branch fix-widget --title "Fix widget crash" --reviewer dyreby`, params: map[string]paramWords{
		"branch":    {usage: "the head `BRANCH`, pushed already (default the current branch)"},
		"title":     {usage: "the pull request's `TITLE`"},
		"body":      {usage: bodyUsage},
		"base":      {usage: "the `BRANCH` to merge into (default the repository's default branch)"},
		"reviewers": {flag: "reviewer", usage: "request a review from `LOGIN` (repeatable)"},
	}},
	"merge-pull-request": {example: "merge-pull-request 45 --merge-method squash", params: map[string]paramWords{
		"merge_method": {usage: "merge by `HOW`: merge, squash or rebase (default merge)"},
	}},
	"comment-pull-request": {example: `comment-pull-request 45 --body "Rebased on main."`, params: map[string]paramWords{
		"body": {usage: bodyUsage},
	}},
	"reply-pull-request": {example: `reply-pull-request 45 --comment 1234 --body "Fixed in abc1234."`, params: map[string]paramWords{
		"comment_id": {flag: "comment", usage: "the inline review comment's `ID` (see observe github-pr N --focus comments)"},
		"body":       {usage: bodyUsage},
	}},
	"request-review": {example: "request-review 45 --reviewer dyreby", params: map[string]paramWords{
		"reviewers": {flag: "reviewer", usage: "request a review from `LOGIN` or ORG/TEAM (repeatable)", rest: true},
	}},
	"create-issue": {example: `create-issue --title "Widget crashes on reload"`, params: map[string]paramWords{
		"title": {usage: "the issue's `TITLE`"},
		"body":  {usage: bodyUsage},
	}},
	"close-issue": {example: "close-issue 42"},
	"comment-issue": {example: `comment-issue 42 --body "Fixed by #45."`, params: map[string]paramWords{
		"body": {usage: bodyUsage},
	}},
}

const bodyUsage = "the `TEXT` to post"

// kindWords are how the command line spells one action kind.
type kindWords struct {
	help, example string
	params        map[string]paramWords // by the parameter's name
}

// paramWords are how the command line spells one parameter of an action.
type paramWords struct {
	flag  string // the flag, when not the parameter's name in kebab-case
	short string // its one-letter form
	usage string // its help, the value's name in backquotes
	rest  bool   // a list: the arguments after N add to it
}

// cliParam is a parameter of an action as the command line takes it.
type cliParam struct {
	actions.Param
	paramWords
	arg string // the positional argument that gives it (N), in place of a flag
}

// cliParams are the parameters of k as the command line takes them: as
// actionWords spell them, else the flag is the name in kebab-case and
// its help the parameter's doc naming its value (the title,
// `TITLE`). The number a kind acts on (a pull request's, an issue's) is
// its first argument, N, as for observe github-pr.
func cliParams(k actions.Kind) []cliParam {
	var out []cliParam
	for _, p := range k.Params {
		c := cliParam{Param: p, paramWords: actionWords[k.Name].params[p.Name]}
		c.flag = cmp.Or(c.flag, strings.ReplaceAll(p.Name, "_", "-"))
		if c.usage == "" {
			c.usage = p.Doc
			if p.Type != actions.Bool {
				c.usage += ", `" + strings.ToUpper(c.flag) + "`"
			}
		}
		if p.Name == "number" && p.Type == actions.Int {
			c.arg = "N"
		}
		out = append(out, c)
	}
	return out
}

// actionUsage is what follows the kind in its usage line, made from its
// parameters as fs (the command's flags) spells them: the positional
// arguments, then the flags it needs, then the others in brackets.
func actionUsage(k actions.Kind, fs *pflag.FlagSet) string {
	var args, needed, optional []string
	for _, p := range cliParams(k) {
		if p.arg != "" {
			args = append(args, p.arg)
			if !p.Required {
				args[len(args)-1] = "[" + p.arg + "]"
			}
			continue
		}
		f := fs.Lookup(p.flag)
		s := "--" + f.Name
		if name := valueName(p, f); name != "" {
			s += " " + name
		}
		switch {
		case p.Required && p.Type == actions.List:
			needed = append(needed, s+"...")
		case p.Required:
			needed = append(needed, s)
		case p.Type == actions.List:
			optional = append(optional, "["+s+"]...")
		default:
			optional = append(optional, "["+s+"]")
		}
	}
	if k.GitHub {
		optional = append(optional, "[--repo OWNER/NAME]")
	}
	return strings.Join(slices.Concat(args, needed, optional), " ")
}

// valueName is how the usage names the value of p's flag f: its values
// when they are few, else the name its help gives it; "" for a bool.
func valueName(p cliParam, f *pflag.Flag) string {
	if p.Enum != nil {
		return strings.Join(p.Enum, "|")
	}
	name, _ := pflag.UnquoteUsage(f)
	if p.Type == actions.Bool {
		return ""
	}
	return name
}

// actionCommandLeaf performs one action kind.
type actionCommandLeaf struct {
	kind   actions.Kind
	params []cliParam
	repo   string
	performing
}

// Flags defines a flag for each parameter the positional arguments do
// not give, then --repo for a GitHub action, then how to perform it.
func (c *actionCommandLeaf) Flags(fs *pflag.FlagSet) {
	for _, p := range c.params {
		if p.arg != "" {
			continue
		}
		switch p.Type {
		case actions.String:
			fs.StringP(p.flag, p.short, "", p.usage)
		case actions.Int:
			fs.Int64P(p.flag, p.short, 0, p.usage)
		case actions.Bool:
			fs.BoolP(p.flag, p.short, false, p.usage)
		case actions.List:
			fs.StringArrayP(p.flag, p.short, nil, p.usage)
		default:
			panic(fmt.Sprintf("action %s: parameter %s of type %d", c.kind.Name, p.Name, p.Type))
		}
	}
	if c.kind.GitHub {
		fs.StringVar(&c.repo, "repo", "", "the repository, as `OWNER/NAME` (default: the one the origin remote names)")
	}
	c.performing.flags(fs)
}

// values are the parameters the command line gives: the flags given, and
// the positional arguments, in the order of the parameters they give (a
// rest list takes those left over). One the kind needs and the line
// lacks is bad usage.
func (c *actionCommandLeaf) values(a *app, args []string) (actions.Values, error) {
	fs := a.cmd.Flags()
	v := actions.Values{}
	var positional []cliParam
	var rest *cliParam
	for _, p := range c.params {
		if p.arg != "" {
			positional = append(positional, p)
			continue
		}
		if p.rest {
			rest = &p
		}
		f := fs.Lookup(p.flag)
		if !f.Changed {
			continue
		}
		var err error
		switch p.Type {
		case actions.String:
			v[p.Name], err = fs.GetString(f.Name)
		case actions.Int:
			v[p.Name], err = fs.GetInt64(f.Name)
		case actions.Bool:
			v[p.Name], err = fs.GetBool(f.Name)
		case actions.List:
			v[p.Name], err = fs.GetStringArray(f.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	name := commandName(a.cmd)
	switch {
	case len(args) > len(positional) && rest != nil:
		v[rest.Name] = append(v.List(rest.Name), args[len(positional):]...)
		args = args[:len(positional)]
	case len(args) > 0 && len(positional) == 0:
		return nil, usageErrorf(a.cmd, "%s: unexpected arguments %q (quote text given to flags)", name, args)
	case len(args) > len(positional):
		return nil, usageErrorf(a.cmd, "%s: one %s expected, got %d arguments: %q", name, positional[0].arg, len(args), args)
	}
	for i, p := range positional {
		if i >= len(args) {
			if p.Required {
				return nil, usageErrorf(a.cmd, "%s: missing %s", name, p.arg)
			}
			break
		}
		n, err := parseNumber(a, args[i], p.arg)
		if err != nil {
			return nil, err
		}
		v[p.Name] = int64(n)
	}
	for _, p := range c.params {
		if _, given := v[p.Name]; p.Required && !given {
			f := fs.Lookup(p.flag)
			return nil, usageErrorf(a.cmd, "%s: --%s %s is required", name, f.Name, valueName(p, f))
		}
	}
	return v, nil
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
func (p *performing) perform(ctx context.Context, a *app, v *helm.Voyage, who logbook.Who, act actions.Action, undoes int) error {
	var e logbook.Entry
	var err error
	if p.dryRun {
		// The dry run refuses what the real run would refuse before
		// running or recording anything (exit 2): a Helm-Voyage line, a
		// secret in the parameters unless allowed.
		err = p.dryRunRefusal(a, v, act)
		if err == nil {
			if a.g.json {
				return writeJSON(a.stdout, view.DryRun{Voyage: v.ID(), Kind: act.Kind(), DryRun: act.DryRun(ctx)})
			}
			out := strings.TrimRight(act.DryRun(ctx), "\n")
			_, err := fmt.Fprintf(a.stdout, "Dry run for voyage %s: nothing is run or recorded. Would run:\n%s\n", short(v.ID()), indent(block(out, "")))
			return err
		}
	} else {
		e, err = v.Perform(ctx, act, who, &helm.PerformOptions{AllowSecret: p.allowSecret, Why: p.why, Confirmed: p.yes, Undoes: undoes})
	}
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
	_, err = fmt.Fprintf(a.stdout, "Action %d performed for voyage %s\n  %s\n", e.N, short(v.ID()), printable(logbook.DescribeAction(e.Action)))
	return err
}

// dryRunRefusal is the real run's checks of act's parameters, for its
// dry run: a Helm-Voyage line naming the voyage or that does not parse
// (helm.ErrInvalid), then a secret the home's redaction finds when
// --allow-secret is not given (helm.ErrSecret).
func (p *performing) dryRunRefusal(a *app, v *helm.Voyage, act actions.Action) error {
	params, err := json.Marshal(act)
	if err != nil {
		return err
	}
	if _, ok := act.(helm.Witnessed); ok {
		why, err := witnessline.Refusal(params, v.ID())
		if err == nil && why != "" {
			err = fmt.Errorf("%w: %s", helm.ErrInvalid, why)
		}
		if err != nil {
			return &hinted{Err: fmt.Errorf("dry run of %s on voyage %s: %w", act.Kind(), v.ID(), err),
				Hint: "take the " + chain.TrailerKey + " line out (or quote it, \"> ...\"): helm adds the one line naming the voyage itself"}
		}
	}
	if p.allowSecret {
		return nil
	}
	if _, n, err := a.home.Redact(string(params)); err != nil || n > 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("dry run of %s on voyage %s: %w: nothing would be run or recorded", act.Kind(), v.ID(), helm.ErrSecret)
	}
	return nil
}

func (c *actionCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	// The runner is filled in once the identity is known; building the
	// action first reports bad input before the voyage is opened.
	params, err := c.values(a, args)
	if err != nil {
		return err
	}
	r := &runner.Runner{}
	act, err := c.kind.Build(r, params)
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
	rr, err := a.runner(who.Identity, c.repo)
	if err != nil {
		return err
	}
	*r = *rr
	// A GitHub action needs a GitHub repository: --repo, else the one
	// the origin remote names. Without one it could only fail once its
	// intent was recorded (exit 3); it is refused now, nothing recorded,
	// and so is its dry run.
	if c.kind.GitHub {
		if _, err := r.Repo(ctx); err != nil {
			return &usageError{
				Err:  fmt.Errorf("%s: %w: no GitHub repository to act on; nothing was recorded", c.kind.Name, err),
				Hint: "helm " + commandLine(a.args) + " --repo OWNER/NAME, or git remote set-url origin https://github.com/OWNER/NAME",
			}
		}
	}
	// Parameters that default to the state of the world (push's current
	// branch) are resolved now, so that the dry run shows, and the intent
	// records, what will run.
	if res, ok := act.(actions.Resolver); ok {
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

// kinds are the action kinds helm performs: actions.Kinds, unless a test
// set others.
func (m *Main) kinds() []actions.Kind {
	if m.actionKinds != nil {
		return m.actionKinds
	}
	return actions.Kinds()
}
