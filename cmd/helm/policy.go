package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/cmd/helm/internal/toolguard"
	"github.com/helmlog/helm/internal/regular"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

// systemPolicyPath is the system policy: rules every home's policy is
// stacked on and cannot loosen (policy.Stack). It is fixed at build time
// (-ldflags "-X main.systemPolicyPath=..."), never read from the
// environment or a flag: the recorded agent chooses both. Tests set it.
var systemPolicyPath = defaultSystemPolicy()

// policy reads the guard rules: the system policy (systemPolicyPath) when
// there is one, with the home's stacked on it — the file config.toml
// names, else $HELM_HOME/policy.toml when there is one. A file that does
// not parse is a usage error naming its line: a typo must not let
// everything through. A system policy that anyone but root can change is
// refused: a rule the agent can edit is no system rule.
func (a *app) policy(home string, cfg *config) (*policy.Policy, error) {
	if a.pol != nil || a.polRead {
		return a.pol, nil
	}
	sysPath := systemPolicyPath
	if a.main.systemPolicy != nil {
		sysPath = *a.main.systemPolicy
	}
	sys, err := loadSystemPolicy(sysPath)
	if err != nil {
		return nil, err
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
	p, err := loadPolicy(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		p, err = nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &usageError{Err: fmt.Errorf("policy %s (named in %s): %w", path, a.configPath(), err), Hint: "create the file, or remove policy from " + a.configPath()}
	case err != nil:
		return nil, &usageError{Err: fmt.Errorf("guard rules: %w", err), Hint: "fix the rule in " + path + `; each [[rule]] has a decision (allow, deny or confirm) and globs among action, identity, role, method, actor, repo, branch, args and ref, and force or delete (true or false)`}
	}
	// The system policy's rules alone may loosen helm's built-in ones
	// (policy.WithDefaults): the agent can write the home's.
	a.pol, a.polRead = policy.Stack(policy.System(sys), p), true
	return a.pol, nil
}

// loadPolicy reads and parses the policy file at path as policy.Load
// does, but only a regular file of at most maxHomeFile bytes: a policy.toml
// the agent made a FIFO would hold the hook until the host's timeout let
// the call go.
func loadPolicy(path string) (*policy.Policy, error) {
	data, err := regular.ReadAll(path, maxHomeFile)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return policy.Parse(data, path)
}

// loadSystemPolicy reads the system policy at path: nil when there is
// none (or no path), an error when it cannot be read, does not parse, or
// could be changed by someone other than root (systemPolicyTrusted).
func loadSystemPolicy(path string) (*policy.Policy, error) {
	if path == "" {
		return nil, nil
	}
	if err := systemPolicyTrusted(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	p, err := loadPolicy(path)
	if err != nil {
		return nil, &hinted{Err: fmt.Errorf("system guard rules: %w", err), Hint: "ask whoever keeps " + path + " (root) to fix it: helm runs no action while the system policy cannot be read"}
	}
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
recorded in the story as a refused entry naming the rule.

The same list decides a coding agent's tool calls (its hooks ask helm): a
rule with tool, command, path, host, event or until is a tool-call rule,
and decides tool calls only; a rule without them decides actions only.

  [[rule]]
  name = "no rm -rf"
  command = "rm -rf"        # rm -r -f, /bin/rm --recursive --force, sh -c '...'
  decision = "deny"

  [[rule]]
  name = "stay in the project"
  tool = "Read|Edit|Write|Bash"
  path = "outside-project"
  decision = "deny"

  [[rule]]
  name = "MCP tools ask"
  tool = "mcp__*"
  decision = "ask"

  [[rule]]
  name = "a bearing before stopping"
  event = "stop"
  until = "bearing-since-edit"   # or until = "tests-pass" with command = "go test"
  decision = "block"

A tool call is allowed, denied (the agent is shown the reason) or asked
(the host asks a person); when no rule matches, the host's own
permission flow holds. A command helm cannot know before it runs ($X -rf,
a sourced file) is denied or asked by any rule on commands. See
docs/guard.md.`,
		Example: `  helm policy check merge-pull-request --as bob --role coder --method claude -- 45
  helm policy check --tool Bash --command 'rm -fr build'
  helm policy check --tool Read --path /etc/passwd`,
	})
	c.AddCommand(leafCmd(a, &cobra.Command{
		Use:   "check KIND [--repo OWNER/NAME] [--branch B] [--remote NAME] [--force] [-- ARG...] | check --tool NAME [--command C] [--path P] [--url U]",
		Short: "say which rule would decide an action or a tool call, and why the others did not",
		Long: `Say which guard rule would decide an action of KIND (push,
merge-pull-request, ..., or observe-command for a command mark) performed
by the resolved identity, role and method (--as, --role, --method) on the
repository and branch given, with the arguments after -- (as the action
kind's arguments read: "45 --merge-method merge", or a command's program and
arguments). Every rule is listed up to the one that decides, each with the
field that did not match.

jettison and reduce (helm artifact jettison|reduce) are checked on the
voyage's status (--status, default the resolved voyage's), with helm's
built-in rules under the home's: an agent (a method other than human) may
not curate a closed voyage (completed, failed, cancelled) unless a rule of
the system policy allows it; the home's rules can only tighten that. A
rule's status field matches a status, or open or closed.

A push without --repo is resolved as helm action push resolves it, in the
working directory's repository: git says which refs it would create,
update, force or delete (git push --dry-run, which changes nothing) and
every repository the remote's URLs name, as configured and as rewritten;
each is checked, and the strictest decision holds.

With --tool, say which rule would decide a coding agent's tool call: the
tool NAME (Bash, Read, Edit, WebFetch, mcp__github__merge, ...) with its
shell command (--command, parsed as the shell would: every command it
runs is checked), the path it touches (--path) or the URL it fetches
(--url), in the working directory and the project (--project-dir, default
the working directory), as a call about to run or, with --event
permission, a permission request.`,
		Example: `  helm policy check merge-pull-request --as bob --role agent --method claude -- 45
  helm policy check push --branch main
  helm policy check observe-command -- rm -rf build
  helm policy check jettison --method claude --status completed
  helm policy check --tool Bash --command 'rm -fr build'
  helm policy check --tool Read --path /etc/passwd
  helm policy check --tool WebFetch --url https://x.example/`,
	}, &policyCheckCommand{}))
	return c
}

type policyCheckCommand struct {
	repo, branch, remote, status string
	force                        bool
	// A tool call's.
	tool, command, path, url, event, project string
}

func (c *policyCheckCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.tool, "tool", "", "check a tool call of the tool `NAME` (Bash, Read, WebFetch, mcp__...) rather than an action")
	fs.StringVar(&c.command, "command", "", "with --tool: the shell command `C` it runs")
	fs.StringVar(&c.path, "path", "", "with --tool: the path `P` it reads or writes")
	fs.StringVar(&c.url, "url", "", "with --tool: the URL `U` it fetches")
	fs.StringVar(&c.event, "event", "tool", "with --tool: `tool` (a call about to run) or permission (a permission request)")
	fs.StringVar(&c.project, "project-dir", "", "with --tool: the project's top directory `DIR`, for outside-project (default the working directory)")
	fs.StringVar(&c.repo, "repo", "", "the repository acted on, `OWNER/NAME`")
	fs.StringVar(&c.branch, "branch", "", "the branch acted on, `B` (for a push: what helm action push --branch takes)")
	fs.StringVar(&c.remote, "remote", "", "for a push: the remote, `NAME` (default origin)")
	fs.BoolVar(&c.force, "force", false, "for a push: a forced push")
	fs.StringVar(&c.status, "status", "", "for jettison and reduce: the curated voyage's status `S` (completed, failed, ...; default the voyage's)")
}

// voyageStatus is the resolved voyage's status when one resolves, else
// empty.
func (a *app) voyageStatus(ctx context.Context) string {
	v, err := a.openVoyage(ctx)
	if err != nil {
		return ""
	}
	return string(v.Info().Status)
}

// policyCheck is the --json form of policy check. Request is the first
// of Requests (an action that reaches several repositories or refs makes
// one request each); Trace explains the request that decided.
type policyCheck struct {
	Policy   string           `json:"policy"`
	Digest   string           `json:"digest,omitempty"`
	Request  policy.Request   `json:"request"`
	Requests []policy.Request `json:"requests"`
	Actor    string           `json:"actor"`
	Decision policy.Decision  `json:"decision"`
	Rule     string           `json:"rule,omitempty"`
	// Reason is, for a tool call, what the agent would be shown.
	Reason string   `json:"reason,omitempty"`
	Trace  []string `json:"trace"`
}

func (c *policyCheckCommand) Run(ctx context.Context, a *app, args []string) error {
	if c.tool != "" {
		return c.runTool(ctx, a, args)
	}
	if c.command != "" || c.path != "" || c.url != "" || c.project != "" || a.cmd.Flags().Changed("event") {
		return usageErrorf(a.cmd, "policy check: --command, --path, --url, --event and --project-dir describe a tool call: give its --tool")
	}
	if len(args) == 0 {
		return usageErrorf(a.cmd, "policy check: the action KIND is required (push, merge-pull-request, observe-command, ...), or --tool NAME for a tool call")
	}
	p, who, err := a.policyAndWho(ctx)
	if err != nil {
		return err
	}
	digest := p.Digest()
	status := c.status
	// A handoff and a curation are checked with helm's built-in rules
	// under the policy's (a curation on the voyage's status: helm
	// artifact jettison), as the library checks them; no built-in rule
	// names another action.
	if args[0] == policy.Handoff || args[0] == "jettison" || args[0] == "reduce" {
		p = policy.WithDefaults(p)
	}
	if curation := args[0] == "jettison" || args[0] == "reduce"; curation {
		if status == "" {
			status = a.voyageStatus(ctx)
		}
		statuses := []string{"active", "blocked", "partial", "completed", "failed", "cancelled"}
		if status != "" && !slices.Contains(statuses, status) {
			return usageErrorf(a.cmd, "policy check: --status %q is not a voyage's status (one of %s)", status, strings.Join(statuses, ", "))
		}
	} else if status != "" {
		return usageErrorf(a.cmd, "policy check: --status is the status of the voyage curated, for jettison and reduce")
	}
	target := logbook.ActionTarget{Repo: c.repo, Branch: c.branch, Args: args[1:]}
	if args[0] == "push" {
		if c.repo == "" {
			if target, err = c.resolvePush(ctx, a, who.Identity); err != nil {
				return err
			}
		} else {
			target = c.pushTarget()
		}
	}
	reqs := helm.PolicyRequests(args[0], target, who)
	for i := range reqs {
		reqs[i].Status = status
	}
	verdict := p.CheckAll(reqs)
	decider := reqs[0]
	for _, r := range reqs {
		if p.Check(r).Decision == verdict.Decision {
			decider = r
			break
		}
	}
	out := policyCheck{Policy: "(none)", Digest: digest, Request: reqs[0], Requests: reqs, Actor: reqs[0].Actor(), Decision: verdict.Decision, Rule: verdict.RuleName(), Trace: []string{}}
	if p != nil {
		out.Policy = p.Source
	}
	for _, t := range p.Explain(decider) {
		out.Trace = append(out.Trace, t.String())
	}
	if a.g.json {
		return writeJSON(a.stdout, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Policy: %s\n", printable(out.Policy))
	for _, req := range reqs {
		fmt.Fprintf(&b, "Action: %s by %s (role %s, method %s, actor %s)", printable(req.Action), printable(who.Identity),
			printable(orNone(who.Role)), printable(orNone(who.Method)), req.Actor())
		if req.Repo != "" || req.Branch != "" {
			fmt.Fprintf(&b, " on %s %s", printable(orNone(req.Repo)), printable(orNone(req.Branch)))
		}
		if req.Ref != "" {
			fmt.Fprintf(&b, ", ref %s", printable(req.Ref))
			if req.Force {
				b.WriteString(" (forced)")
			}
			if req.Delete {
				b.WriteString(" (deleted)")
			}
		}
		if len(req.Args) > 0 {
			fmt.Fprintf(&b, ", args %q", strings.Join(req.Args, " "))
		}
		if req.Status != "" {
			fmt.Fprintf(&b, ", voyage %s", printable(req.Status))
		}
		b.WriteString("\n")
	}
	for _, t := range out.Trace {
		fmt.Fprintf(&b, "  %s\n", printable(t))
	}
	fmt.Fprintf(&b, "Decision: %s\n", printable(verdict.String()))
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// resolvePush resolves a push as helm action push would, in the working
// directory, for the guard rules.
// pushTarget is the push named by --repo, --branch and --force, checked
// without git: --branch read as the refspec helm action push takes, the
// ref it names on the remote as git would name it (a branch unless it
// says refs/...), forced when --force or a + says so (git alone can tell
// a + that is a fast-forward; the check takes the stricter reading), a
// deletion when it names no source. Its arguments are REMOTE SPEC, as the
// guard sees them.
func (c *policyCheckCommand) pushTarget() logbook.ActionTarget {
	remote := c.remote
	if remote == "" {
		remote = "origin"
	}
	t := logbook.ActionTarget{Repo: c.repo, Branch: c.branch, Args: []string{remote, c.branch}}
	if c.branch == "" {
		return t
	}
	spec, plus := strings.CutPrefix(c.branch, "+")
	src, dst, hasDst := strings.Cut(spec, ":")
	if !hasDst {
		dst = src
	}
	ref := dst
	switch {
	case strings.HasPrefix(dst, "refs/"):
	case strings.HasPrefix(dst, "heads/"), strings.HasPrefix(dst, "tags/"):
		ref = "refs/" + dst
	default:
		ref = "refs/heads/" + dst
	}
	t.Refs = []logbook.RefUpdate{{Ref: ref, Force: c.force || plus, Delete: hasDst && src == ""}}
	return t
}

func (c *policyCheckCommand) resolvePush(ctx context.Context, a *app, identity string) (logbook.ActionTarget, error) {
	r, err := a.runner(identity, "")
	if err != nil {
		return logbook.ActionTarget{}, err
	}
	push, err := actions.NewPush(r, actions.Push{Branch: c.branch, Remote: c.remote, Force: c.force})
	if err == nil {
		var t logbook.ActionTarget
		if t, err = push.Target(ctx); err == nil {
			return t, nil
		}
	}
	if errors.Is(err, actions.ErrInvalid) {
		return logbook.ActionTarget{}, &usageError{Err: err, Hint: "give --repo and --branch to check a push without asking git"}
	}
	return logbook.ActionTarget{}, err
}

// voyageIdentity is the resolved voyage's identity when one resolves,
// else empty: policy check runs with or without a voyage.
func (a *app) voyageIdentity(ctx context.Context) string {
	v, err := a.openVoyage(ctx)
	if err != nil {
		return ""
	}
	return v.Info().CurrentIdentity
}

// runTool explains the decision on a tool call, built from the flags as
// an agent's host would report it.
func (c *policyCheckCommand) runTool(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "policy check --tool takes no KIND or arguments: describe the call with --command, --path or --url")
	}
	if c.repo != "" || c.branch != "" || c.remote != "" || c.force {
		return usageErrorf(a.cmd, "policy check --tool: --repo, --branch, --remote and --force describe an action, not a tool call")
	}
	kind := agent.PreTool
	switch c.event {
	case "tool":
	case "permission":
		kind = agent.Permission
	default:
		return usageErrorf(a.cmd, "policy check --tool: --event is tool or permission, not %q", c.event)
	}
	p, who, err := a.policyAndWho(ctx)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("policy check: working directory: %w", err)
	}
	input := map[string]string{}
	if c.command != "" {
		input["command"] = c.command
	}
	if c.path != "" {
		input["file_path"], input["path"], input["notebook_path"] = c.path, c.path, c.path
	}
	if c.url != "" {
		input["url"] = c.url
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	ev := agent.Event{Kind: kind, Cwd: wd, Project: c.project, Tool: &agent.ToolCall{Name: c.tool, Input: raw}}
	reqs, err := toolguard.Requests(ev, who, "")
	if err != nil {
		return &usageError{Err: fmt.Errorf("policy check: %w", err), Hint: "give the call's --command (Bash), --path (Read, Edit, Write) or --url (WebFetch)"}
	}
	d, _ := toolguard.Decide(p, ev, who, "")
	verdict := p.CheckAll(reqs)
	decider := reqs[0]
	for _, r := range reqs {
		if v := p.Check(r); v.Decision == verdict.Decision && v.Rule == verdict.Rule {
			decider = r
			break
		}
	}
	out := policyCheck{Policy: "(none)", Digest: p.Digest(), Request: decider, Requests: reqs, Actor: decider.Actor(),
		Decision: verdict.Decision, Rule: verdict.RuleName(), Reason: d.Reason, Trace: []string{}}
	if verdict.Rule == nil {
		out.Decision = ""
	}
	if p != nil {
		out.Policy = p.Source
		for _, t := range p.Explain(decider) {
			out.Trace = append(out.Trace, t.String())
		}
	}
	if a.g.json {
		return writeJSON(a.stdout, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Policy: %s\n", printable(out.Policy))
	fmt.Fprintf(&b, "Tool call: %s by %s (role %s, method %s, actor %s), event %s\n", printable(c.tool), printable(who.Identity),
		printable(orNone(who.Role)), printable(orNone(who.Method)), decider.Actor(), printable(decider.Event))
	for _, r := range reqs {
		var parts []string
		for _, argv := range r.Commands {
			parts = append(parts, "command "+strconv.Quote(showArgv(argv)))
		}
		for _, p := range r.Paths {
			parts = append(parts, "path "+strconv.Quote(showArgv([]string{p})))
		}
		for _, h := range r.Hosts {
			parts = append(parts, "host "+strconv.Quote(showArgv([]string{h})))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "  %s\n", printable(strings.Join(parts, ", ")))
		}
	}
	for _, t := range out.Trace {
		fmt.Fprintf(&b, "  %s\n", printable(t))
	}
	if verdict.Rule == nil {
		b.WriteString("Decision: none: no rule matched; the agent's host decides as it would without helm\n")
	} else {
		fmt.Fprintf(&b, "Decision: %s\n", printable(verdict.String()))
	}
	if d.Reason != "" && d.Reason != verdict.String()+" of helm's guard rules" {
		fmt.Fprintf(&b, "Reason: %s\n", printable(d.Reason))
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// showArgv renders an argv, a word known only when it runs as
// <unknown: ...>.
func showArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if why, ok := policy.Unknown(w); ok {
			w = "<unknown: " + why + ">"
		}
		words[i] = w
	}
	return strings.Join(words, " ")
}

// policyAndWho reads the guard rules the home runs under,
// and who a check is for: what policy check needs for an action and for
// a tool call alike.
func (a *app) policyAndWho(ctx context.Context) (*policy.Policy, logbook.Who, error) {
	h, err := a.openHome()
	if err != nil {
		return nil, logbook.Who{}, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, logbook.Who{}, err
	}
	p, err := a.policy(h.Dir(), cfg)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	identity, err := a.resolveIdentity(a.voyageIdentity(ctx))
	if err != nil {
		return nil, logbook.Who{}, err
	}
	role, method, err := a.resolveRoleMethod(false)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	return p, logbook.Who{Identity: identity, Role: role, Method: method}, nil
}
