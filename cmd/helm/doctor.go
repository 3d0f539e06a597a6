package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/logbook"
)

func newConfigCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "config",
		Short: "show every setting, its value and where the value came from",
		Long: `Show every setting helm resolves for a command run here: its value and
where it came from — a flag, the environment (HELM_...), config.toml in the
home, or helm's default — in the order helm looks. Reading never writes.

The identity a command acts as may also come from the voyage (its
identity, once started); config shows what is set before a voyage is
chosen. With --json, [{"name", "value", "source"}].`,
		Example: "  helm config\n  helm --home /tmp/h config --json\n  helm config --jq '.[] | select(.name == \"home\") | .source'",
	}, &configCmd{})
}

type configCmd struct{}

func (*configCmd) Flags(*pflag.FlagSet) {}

// setting is one line of helm config.
type setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"` // "flag --x", "env HELM_X", "config.toml", "default"
}

func (*configCmd) Run(_ context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "config takes no arguments")
	}
	settings, err := a.settings()
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, settings)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, s := range settings {
		v := s.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, printable(v), printable(s.Source))
	}
	return tw.Flush()
}

// settings resolves each setting as the commands do, saying from where.
func (a *app) settings() ([]setting, error) {
	home, err := a.homePath()
	if err != nil {
		return nil, err
	}
	homeSrc := "default (~/.helm)"
	switch {
	case a.g.home != "":
		homeSrc = "flag --home"
	case a.getenv("HELM_HOME") != "":
		homeSrc = "env HELM_HOME"
	}
	out := []setting{{Name: "home", Value: home, Source: homeSrc}}
	// config.toml is read only from a home helm trusts.
	cfg := &config{}
	cfgSrc := "config.toml"
	if _, err := a.homeDir(); err != nil {
		cfgSrc = "config.toml (not read: " + err.Error() + ")"
	} else if c, err := a.config(); err != nil {
		return nil, err
	} else {
		cfg = c
	}
	from := func(name, flag, flagVal, env, cfgVal, def string) setting {
		switch {
		case flagVal != "":
			return setting{name, flagVal, "flag --" + flag}
		case env != "" && a.getenv(env) != "":
			return setting{name, a.getenv(env), "env " + env}
		case cfgVal != "":
			return setting{name, cfgVal, cfgSrc}
		}
		return setting{name, "", def}
	}
	out = append(out,
		from("store", "store", a.g.store, "HELM_STORE", cfg.Store, "default (on this machine's disk, in the home)"),
		from("voyage", "voyage", a.g.voyage, "HELM_VOYAGE", "", "default (the voyage of this worktree, else the only active one)"),
		from("identity", "as", a.g.as, "HELM_IDENTITY", cfg.Identity, "default (none; a voyage's own identity once started)"),
		from("role", "role", a.g.role, "HELM_ROLE", cfg.Role, "default (none: give --role)"),
		from("method", "method", a.g.method, "HELM_METHOD", cfg.Method, "default (none: give --method)"),
	)
	policy := setting{"policy", filepath.Join(home, "policy.toml"), "default"}
	if cfg.Policy != "" {
		policy = setting{"policy", cfg.Policy, cfgSrc}
	}
	if _, err := os.Stat(policy.Value); errors.Is(err, os.ErrNotExist) {
		policy.Source += " (no such file: no guard rules)"
	}
	out = append(out, policy)
	pager := setting{"pager", "less (LESS=FRX)", "default"}
	switch {
	case a.getenv("HELM_PAGER") != "":
		pager = setting{"pager", a.getenv("HELM_PAGER"), "env HELM_PAGER"}
	case a.getenv("PAGER") != "":
		pager = setting{"pager", a.getenv("PAGER"), "env PAGER"}
	}
	if a.g.noPager {
		pager = setting{"pager", "", "flag --no-pager"}
	}
	colour := setting{"color", "on a terminal", "default"}
	if a.getenv("NO_COLOR") != "" {
		colour = setting{"color", "never", "env NO_COLOR"}
	}
	safe := setting{"safe_homes", a.getenv("HELM_SAFE_HOMES"), "env HELM_SAFE_HOMES"}
	if safe.Value == "" {
		safe.Source = "default (none: a home only its owner can write)"
	}
	out = append(out, pager, colour, safe)
	return out, nil
}

func newDoctorCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "doctor",
		Short: "check that helm can work here: git identity, logins, the home, the store, hooks",
		Long: `Check what helm needs, one line each: "ok", "note" (fine, but worth
knowing) or "FAIL" with what to do.

  git identity   git's user.name and user.email here (commits need them)
  home           the home is one helm trusts (only its owner can write it)
  store          the home's voyages can be listed (disk or JetStream)
  gh logins      each identity with a gh configuration has a token
  hooks          agent hooks installed here or for the user run a helm
                 that exists

Nothing is written and no network is used but the store's. Exit status:
0 when every check passes (notes included), 1 when any fails. With
--json, [{"check", "status", "detail", "try"}].`,
		Example: "  helm doctor\n  helm doctor --json",
	}, &doctorCmd{})
}

type doctorCmd struct{}

func (*doctorCmd) Flags(*pflag.FlagSet) {}

// check is one line of helm doctor.
type check struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, note, fail
	Detail string `json:"detail"`
	Try    string `json:"try,omitempty"`
}

func (*doctorCmd) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "doctor takes no arguments")
	}
	checks := []check{a.checkGitIdentity(ctx)}
	homeCheck, homeOK := a.checkHomeTrust()
	checks = append(checks, homeCheck)
	if homeOK {
		checks = append(checks, a.checkStore(ctx), a.checkLogins())
	}
	checks = append(checks, a.checkHooks()...)
	var failed []string
	for _, c := range checks {
		if c.Status == "fail" {
			failed = append(failed, c.Check)
		}
	}
	if a.g.json {
		if err := writeJSON(a.stdout, checks); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		for _, c := range checks {
			status := c.Status
			if status == "fail" {
				status = "FAIL"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Check, status, printable(c.Detail))
			if c.Try != "" {
				fmt.Fprintf(tw, "\t\tTry: %s\n", printable(c.Try))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("doctor: %s failed: %s (what to do is above)", plural(len(failed), "check"), strings.Join(failed, ", "))
	}
	return nil
}

func (a *app) checkGitIdentity(ctx context.Context) check {
	c := check{Check: "git identity"}
	get := func(key string) string {
		cmd := exec.CommandContext(ctx, "git", "config", "--get", key)
		cmd.Dir = a.main.Dir
		cmd.Env = append(os.Environ(), a.main.ExtraEnv...)
		if home := a.main.getenv("HOME"); home != "" {
			cmd.Env = append(cmd.Env, "HOME="+home)
		}
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := exec.LookPath("git"); err != nil {
		c.Status, c.Detail, c.Try = "fail", "git is not installed (helm runs it for commits and marks)", "install git"
		return c
	}
	name, email := get("user.name"), get("user.email")
	switch {
	case name == "" && email == "":
		c.Status, c.Detail = "fail", "git has no user.name and no user.email here: commits (helm action commit) fail"
		c.Try = `git config --global user.name "Your Name" && git config --global user.email you@example.com`
	case name == "":
		c.Status, c.Detail, c.Try = "fail", "git has no user.name here: commits fail", `git config --global user.name "Your Name"`
	case email == "":
		c.Status, c.Detail, c.Try = "fail", "git has no user.email here: commits fail", "git config --global user.email you@example.com"
	default:
		c.Status, c.Detail = "ok", name+" <"+email+">"
	}
	return c
}

func (a *app) checkHomeTrust() (check, bool) {
	c := check{Check: "home"}
	home, err := a.homeDir()
	if err != nil {
		c.Status, c.Detail, c.Try = "fail", exit1Message(err), tryLine(err)
		return c, false
	}
	if _, err := os.Stat(home); errors.Is(err, os.ErrNotExist) {
		c.Status, c.Detail = "note", home+" does not exist yet: the first helm voyage new creates it"
		return c, true
	}
	c.Status, c.Detail = "ok", home+" (only its owner can write it)"
	return c, true
}

func (a *app) checkStore(ctx context.Context) check {
	c := check{Check: "store"}
	home, _ := a.homeDir()
	if _, err := os.Stat(home); errors.Is(err, os.ErrNotExist) {
		c.Status, c.Detail = "note", "nothing to reach before the home exists"
		return c
	}
	h, err := a.openHome()
	if err != nil {
		c.Status, c.Detail, c.Try = "fail", exit1Message(err), tryLine(err)
		return c
	}
	list, err := h.List(ctx, nil)
	if err != nil {
		c.Status, c.Detail, c.Try = "fail", exit1Message(err), tryLine(err)
		return c
	}
	where := "on this machine's disk"
	if s, _ := a.storeURL(); s != "" {
		where = "at " + s
	}
	c.Status, c.Detail = "ok", fmt.Sprintf("%s %s", plural(len(list), "voyage"), where)
	return c
}

func (a *app) checkLogins() check {
	c := check{Check: "gh logins"}
	home, _ := a.homeDir()
	entries, err := os.ReadDir(filepath.Join(home, "gh-config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.Status, c.Detail = "fail", err.Error()
		return c
	}
	var ok, not []string
	for _, e := range entries {
		if !e.IsDir() || logbook.ValidateIdentity(e.Name()) != nil {
			continue
		}
		r, err := a.runner(e.Name(), "")
		if err != nil {
			not = append(not, e.Name())
			continue
		}
		logins, err := r.Logins()
		has := false
		for _, l := range logins {
			has = has || l.HasToken
		}
		if err != nil || !has {
			not = append(not, e.Name())
			continue
		}
		ok = append(ok, e.Name())
	}
	sort.Strings(ok)
	sort.Strings(not)
	switch {
	case len(not) > 0:
		c.Status, c.Detail, c.Try = "fail", "no token for "+strings.Join(not, ", "), "helm auth login --as "+not[0]
	case len(ok) == 0:
		c.Status, c.Detail = "note", "no identity is logged in to GitHub (needed only for GitHub marks and actions)"
		c.Try = "helm auth login --as IDENTITY"
	default:
		c.Status, c.Detail = "ok", "a token for "+strings.Join(ok, ", ")+" (helm auth status asks GitHub)"
	}
	return c
}

func (a *app) checkHooks() []check {
	var out []check
	installed := false
	for _, h := range hookHosts {
		for _, scope := range []string{"project", "user"} {
			path, err := a.settingsPath(h, scope)
			if err != nil {
				continue
			}
			name := "hooks " + h.name + " (" + scope + ")"
			f, err := readSettings(path)
			if err != nil {
				out = append(out, check{Check: name, Status: "fail", Detail: settingsError(path, err).Error()})
				continue
			}
			if !f.exists {
				continue
			}
			var s claudecode.Status
			if s, err = h.installed(f.data); err != nil {
				out = append(out, check{Check: name, Status: "fail", Detail: settingsError(path, err).Error()})
				continue
			}
			if len(s.Events) == 0 {
				continue
			}
			installed = true
			c := check{Check: name, Status: "ok", Detail: fmt.Sprintf("installed on %s in %s", plural(len(s.Events), "event"), path)}
			for _, p := range s.Programs {
				if !programExists(p) {
					c.Status, c.Detail = "fail", "the hook runs "+p+", which does not exist ("+path+")"
				}
			}
			if c.Status == "ok" && len(s.Missing) > 0 {
				c.Status, c.Detail = "fail", "missing on "+strings.Join(s.Missing, ", ")+" ("+path+")"
			}
			if c.Status == "fail" {
				c.Try = "helm hook install " + h.name + " --" + scope
			}
			out = append(out, c)
		}
	}
	if !installed {
		out = append(out, check{Check: "hooks", Status: "note", Detail: "no agent hooks installed here or for the user", Try: "helm hook install claude-code"})
	}
	return out
}

// exit1Message is what a check's error says, as ReportError says it.
func exit1Message(err error) string { return strings.TrimPrefix(err.Error(), "helm: ") }
