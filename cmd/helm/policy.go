package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/policy"
)

// policy reads the guard rules: the file config.toml names, else
// $HELM_HOME/policy.toml when there is one. A file that does not parse is
// a usage error naming its line: a typo must not let everything through.
func (a *app) policy(home string, cfg *config) (*policy.Policy, error) {
	if a.pol != nil || a.polRead {
		return a.pol, nil
	}
	path, named := cfg.Policy, true
	if path == "" {
		path, named = filepath.Join(home, "policy.toml"), false
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(home, path) // relative to the home, as config.toml is in it
	}
	if err := a.trustFile(path, "the guard rules"); err != nil {
		return nil, err
	}
	p, err := policy.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		p, err = nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &usageError{Err: fmt.Errorf("policy %s (named in %s): %w", path, a.configPath(), err), Hint: "create the file, or remove policy from " + a.configPath()}
	case err != nil:
		return nil, &usageError{Err: fmt.Errorf("guard rules: %w", err), Hint: "fix the rule in " + path + `; each [[rule]] has a decision (allow, deny or confirm) and globs among action, identity, role, method, actor, repo, branch and args`}
	}
	a.pol, a.polRead = p, true
	return p, nil
}

func newPolicyCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "policy check ...",
		Short: "explain the guard rules",
		Long: `The guard rules are ordered [[rule]] tables in $HELM_HOME/policy.toml (or
the file policy in config.toml names). The first rule whose every given
field matches decides: allow, deny, or confirm (the action runs only with
--yes); when none matches, the action is allowed. A refused action is
recorded in the story as a refused entry naming the rule.`,
		Example: `  helm policy check merge-pull-request --as bob --role coder --method claude -- 45`,
	})
	c.AddCommand(leafCmd(a, &cobra.Command{
		Use:   "check KIND [--repo OWNER/NAME] [--branch B] [-- ARG...]",
		Short: "say which rule would decide an action, and why the others did not",
		Long: `Say which guard rule would decide an action of KIND (push,
merge-pull-request, ..., or observe-command for a command mark) performed
by the resolved identity, role and method (--as, --role, --method) on the
repository and branch given, with the arguments after -- (as the action
kind's arguments read: "45 --merge-method merge", or a command's program and
arguments). Every rule is listed up to the one that decides, each with the
field that did not match.`,
		Example: `  helm policy check merge-pull-request --as bob --role agent --method claude -- 45
  helm policy check push --branch main
  helm policy check observe-command -- rm -rf build`,
	}, &policyCheckCommand{}))
	return c
}

type policyCheckCommand struct{ repo, branch string }

func (c *policyCheckCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.repo, "repo", "", "the repository acted on, `OWNER/NAME`")
	fs.StringVar(&c.branch, "branch", "", "the branch acted on, `B`")
}

// policyCheck is the --json form of policy check.
type policyCheck struct {
	Policy   string          `json:"policy"`
	Request  policy.Request  `json:"request"`
	Actor    string          `json:"actor"`
	Decision policy.Decision `json:"decision"`
	Rule     string          `json:"rule,omitempty"`
	Trace    []string        `json:"trace"`
}

func (c *policyCheckCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf(a.cmd, "policy check: the action KIND is required (push, merge-pull-request, observe-command, ...)")
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	p, err := a.policy(h.Dir(), cfg)
	if err != nil {
		return err
	}
	identity, err := a.resolveIdentity(a.voyageIdentity(ctx))
	if err != nil {
		return err
	}
	role, method, err := a.resolveRoleMethod(false)
	if err != nil {
		return err
	}
	req := helm.PolicyRequest(args[0], helm.ActionTarget{Repo: c.repo, Branch: c.branch, Args: args[1:]},
		helm.Who{Identity: identity, Role: role, Method: method})
	verdict := p.Check(req)
	out := policyCheck{Policy: "(none)", Request: req, Actor: req.Actor(), Decision: verdict.Decision, Rule: verdict.RuleName(), Trace: []string{}}
	if p != nil {
		out.Policy = p.Source
		for _, t := range p.Explain(req) {
			out.Trace = append(out.Trace, t.String())
		}
	}
	if a.g.json {
		return writeJSON(a.stdout, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Policy: %s\n", printable(out.Policy))
	fmt.Fprintf(&b, "Action: %s by %s (role %s, method %s, actor %s)", printable(req.Action), printable(identity),
		printable(orNone(role)), printable(orNone(method)), req.Actor())
	if req.Repo != "" || req.Branch != "" {
		fmt.Fprintf(&b, " on %s %s", printable(orNone(req.Repo)), printable(orNone(req.Branch)))
	}
	if len(req.Args) > 0 {
		fmt.Fprintf(&b, ", args %q", strings.Join(req.Args, " "))
	}
	b.WriteString("\n")
	for _, t := range out.Trace {
		fmt.Fprintf(&b, "  %s\n", printable(t))
	}
	fmt.Fprintf(&b, "Decision: %s\n", printable(verdict.String()))
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// voyageIdentity is the resolved voyage's identity when one resolves,
// else empty: policy check runs with or without a voyage.
func (a *app) voyageIdentity(ctx context.Context) string {
	v, err := a.openVoyage(ctx)
	if err != nil {
		return ""
	}
	return v.Info().Identity
}
