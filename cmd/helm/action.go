package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/runner"
)

// performer is an action the CLI can perform or show.
type performer = actions.Action

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
	for _, k := range a.main.kinds() {
		leaf := leafCmd(a, &cobra.Command{
			Short:   k.Summary,
			Long:    k.Help,
			Example: "  helm action " + k.Example,
		}, &actionCommandLeaf{kind: k})
		leaf.Use = k.Name + " " + actionUsage(k, leaf.Flags()) + " [--dry-run]"
		for _, p := range k.Params {
			if p.Enum != nil && p.Arg == "" {
				fixedValues(leaf, p.FlagName(), p.Enum...)
			}
		}
		c.AddCommand(leaf)
	}
	return c
}

// actionUsage is what follows the kind in its usage line, made from its
// parameters as fs (the command's flags) spells them: the positional
// arguments, then the flags it needs, then the others in brackets.
func actionUsage(k actions.Kind, fs *pflag.FlagSet) string {
	var args, needed, optional []string
	for _, p := range k.Params {
		if p.Arg != "" {
			args = append(args, p.Arg)
			if !p.Required {
				args[len(args)-1] = "[" + p.Arg + "]"
			}
			continue
		}
		f := fs.Lookup(p.FlagName())
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
func valueName(p actions.Param, f *pflag.Flag) string {
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
	kind actions.Kind
	repo string
	performing
}

// Flags defines a flag for each parameter the positional arguments do
// not give, then --repo for a GitHub action, then how to perform it.
func (c *actionCommandLeaf) Flags(fs *pflag.FlagSet) {
	for _, p := range c.kind.Params {
		if p.Arg != "" {
			continue
		}
		usage := cmp.Or(p.FlagDoc, p.Doc)
		switch p.Type {
		case actions.String:
			fs.StringP(p.FlagName(), p.Short, "", usage)
		case actions.Int:
			fs.Int64P(p.FlagName(), p.Short, 0, usage)
		case actions.Bool:
			fs.BoolP(p.FlagName(), p.Short, false, usage)
		case actions.List:
			fs.StringArrayP(p.FlagName(), p.Short, nil, usage)
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
// Rest list takes those left over). One the kind needs and the line
// lacks is bad usage.
func (c *actionCommandLeaf) values(a *app, args []string) (actions.Values, error) {
	fs := a.cmd.Flags()
	v := actions.Values{}
	var positional []actions.Param
	var rest *actions.Param
	for _, p := range c.kind.Params {
		if p.Arg != "" {
			positional = append(positional, p)
			continue
		}
		if p.Rest {
			rest = &p
		}
		f := fs.Lookup(p.FlagName())
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
		return nil, usageErrorf(a.cmd, "%s: %d arguments expected (%s), got %d: %q", name, len(positional), argNames(positional), len(args), args)
	}
	for i, p := range positional {
		if i >= len(args) {
			if p.Required {
				return nil, usageErrorf(a.cmd, "%s: missing %s", name, p.Arg)
			}
			break
		}
		switch p.Type {
		case actions.Int:
			n, err := parseNumber(a, args[i], p.Arg)
			if err != nil {
				return nil, err
			}
			v[p.Name] = int64(n)
		case actions.String:
			v[p.Name] = args[i]
		default:
			panic(fmt.Sprintf("action %s: positional parameter %s of type %d", c.kind.Name, p.Name, p.Type))
		}
	}
	for _, p := range c.kind.Params {
		if _, given := v[p.Name]; p.Required && !given {
			f := fs.Lookup(p.FlagName())
			return nil, usageErrorf(a.cmd, "%s: --%s %s is required", name, f.Name, valueName(p, f))
		}
	}
	return v, nil
}

// argNames names the positional arguments params give: "N NAME".
func argNames(params []actions.Param) string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Arg
	}
	return strings.Join(names, " ")
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
	e, err := v.PerformWith(ctx, act, who, helm.PerformOptions{AllowSecret: p.allowSecret, Why: p.why, Confirmed: p.yes, Undoes: undoes})
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
