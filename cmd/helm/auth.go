package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

func newAuthCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "auth login|status ...",
		Short: "log identities in to GitHub, each with its own gh configuration",
		Long: `Every identity talks to GitHub through gh with a configuration of its own,
$HELM_HOME/gh-config/IDENTITY (GH_CONFIG_DIR), so two identities never share
credentials. Tokens in helm's environment (GH_TOKEN, GITHUB_TOKEN,
GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN) and GH_HOST do not reach gh
unless config.toml passes them to one identity:

  [identities.john-agent]
  pass_env = ["GH_HOST", "GH_TOKEN"]`,
		Example: "  helm auth login --as john-agent --with-token < token.txt\n  helm auth status",
	})
	c.AddCommand(
		leafCmd(a, &cobra.Command{
			Use:   "login [--with-token] [--hostname HOST] [-- GH-AUTH-LOGIN-FLAGS...]",
			Short: "log an identity in to GitHub (gh auth login, in its own configuration)",
			Long: `Run gh auth login for the identity (--as, HELM_IDENTITY, or identity in
config.toml) with its own gh configuration. --with-token reads the token
from standard input; flags after -- go to gh auth login as they are.`,
			Example: "  helm auth login --as john-agent --with-token < token.txt\n  helm auth login --as reviewer-bot -- --web",
		}, &authLoginCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "status",
			Short: "show which identities are logged in to which hosts",
			Long: `Show, for every identity with a gh configuration (or the one --as names),
the hosts it is logged in to and as whom. Tokens are never printed.

Exit status, as gh auth status's: 0 when every identity shown is logged in
(a host accepted its token); 1 when one is not, or when no identity has a
gh configuration at all ("nobody is logged in"): the error names them.`,
			Example: "  helm auth status\n  helm auth status --as john-agent --json",
		}, &authStatusCommand{}),
	)
	return c
}

// authLoginCommand runs gh auth login for one identity.
type authLoginCommand struct {
	withToken bool
	hostname  string
}

func (c *authLoginCommand) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.withToken, "with-token", false, "read the token from standard input")
	fs.StringVar(&c.hostname, "hostname", "", "the GitHub `HOST` to log in to (default github.com, or GH_HOST when passed to the identity)")
}

func (c *authLoginCommand) Run(ctx context.Context, a *app, args []string) error {
	if n := a.cmd.ArgsLenAtDash(); n > 0 || (n < 0 && len(args) > 0) {
		return usageErrorf(a.cmd, "auth login: unexpected arguments %q (flags for gh auth login go after --)", args)
	}
	identity, err := a.resolveIdentity("")
	if err != nil {
		return err
	}
	r, err := a.runner(identity, "")
	if err != nil {
		return err
	}
	gh := []string{"auth", "login"}
	if c.withToken {
		gh = append(gh, "--with-token")
	}
	if c.hostname != "" {
		gh = append(gh, "--hostname", c.hostname)
	}
	gh = append(gh, args...)
	if err := r.GHAttached(ctx, a.stdin, a.stdout, a.stderr, gh...); err != nil {
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return fmt.Errorf("gh auth login for identity %s failed (exit status %d; gh's message is above)", identity, xe.ExitCode())
		}
		return err
	}
	dir, _ := r.GHConfigDir()
	_, err = fmt.Fprintf(a.stdout, "Identity %s logged in (gh configuration %s)\n", printable(identity), printable(dir))
	return err
}

// authStatusCommand lists the identities' logins.
type authStatusCommand struct{}

func (*authStatusCommand) Flags(*pflag.FlagSet) {}

// authStatus is one identity in `auth status --json`.
type authStatus struct {
	Identity  string       `json:"identity"`
	ConfigDir string       `json:"config_dir"`
	Hosts     []helmLogins `json:"hosts"`
}

type helmLogins struct {
	Host     string `json:"host"`
	User     string `json:"user,omitempty"`
	HasToken bool   `json:"has_token"`
	// Checked says what the host answered when asked who the token is:
	// "ok", "refused", or "unchecked: WHY".
	Checked string `json:"checked,omitempty"`
}

func (*authStatusCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "auth status takes no arguments (choose the identity with --as)")
	}
	home, err := a.homeDir()
	if err != nil {
		return err
	}
	var ids []string
	if a.g.as != "" {
		if err := logbook.ValidateIdentity(a.g.as); err != nil {
			return &usageError{Err: fmt.Errorf("--as: %w: %v", helm.ErrInvalid, err), Hint: "helm " + commandLine(replaceFlag(a.args, "as", "NAME"))}
		}
		ids = []string{a.g.as}
	} else {
		entries, err := os.ReadDir(filepath.Join(home, "gh-config"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if e.IsDir() && logbook.ValidateIdentity(e.Name()) == nil {
				ids = append(ids, e.Name())
			}
		}
		sort.Strings(ids)
	}
	out := []authStatus{}
	for _, id := range ids {
		r, err := a.runner(id, "")
		if err != nil {
			return err
		}
		logins, err := r.Logins()
		if err != nil {
			return err
		}
		dir, _ := r.GHConfigDir()
		st := authStatus{Identity: id, ConfigDir: dir, Hosts: []helmLogins{}}
		for _, l := range logins {
			h := helmLogins{Host: l.Host, User: l.User, HasToken: l.HasToken}
			if l.HasToken {
				// Ask the host who the token is: the login works, or not.
				// GH_HOST rather than --hostname, which takes no port.
				rh := *r
				rh.Env = append(slices.DeleteFunc(slices.Clone(r.Env), func(kv string) bool { return strings.HasPrefix(kv, "GH_HOST=") }), "GH_HOST="+l.Host)
				out, err := rh.GH(ctx, "api", "user", "--jq", ".login")
				switch {
				case err == nil:
					h.User, h.Checked = strings.TrimSpace(string(out)), "ok"
				case errors.Is(err, runner.ErrNotLoggedIn):
					h.Checked = "refused"
				default:
					h.Checked = "unchecked: " + err.Error()
				}
			}
			st.Hosts = append(st.Hosts, h)
		}
		out = append(out, st)
	}
	if a.g.json {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
		return notLoggedIn(out, home)
	}
	if len(out) == 0 {
		fmt.Fprintf(a.stdout, "No identity has a gh configuration in %s.\n", printable(filepath.Join(home, "gh-config")))
		return notLoggedIn(out, home)
	}
	for _, st := range out {
		if len(st.Hosts) == 0 {
			fmt.Fprintf(a.stdout, "%s: not logged in (%s)\n", printable(st.Identity), printable(st.ConfigDir))
			continue
		}
		for _, h := range st.Hosts {
			switch {
			case !h.HasToken:
				fmt.Fprintf(a.stdout, "%s: %s has no token (%s)\n", printable(st.Identity), printable(h.Host), printable(st.ConfigDir))
			case h.Checked == "ok":
				fmt.Fprintf(a.stdout, "%s: logged in to %s as %s\n", printable(st.Identity), printable(h.Host), printable(h.User))
			case h.Checked == "refused":
				fmt.Fprintf(a.stdout, "%s: %s refuses the stored token: log in again\n", printable(st.Identity), printable(h.Host))
			default:
				fmt.Fprintf(a.stdout, "%s: token stored for %s, %s\n", printable(st.Identity), printable(h.Host), printable(h.Checked))
			}
		}
	}
	return notLoggedIn(out, home)
}

// notLoggedIn is auth status's verdict, as gh auth status's: nil when
// every identity listed is logged in (its host accepted its token), an
// error naming those that are not (exit 1) otherwise, or when none is
// listed at all.
func notLoggedIn(out []authStatus, home string) error {
	if len(out) == 0 {
		return &hinted{Err: fmt.Errorf("auth status: nobody is logged in: no identity has a gh configuration in %s", filepath.Join(home, "gh-config")),
			Hint: "helm auth login --as IDENTITY"}
	}
	var not []string
	for _, st := range out {
		ok := false
		for _, h := range st.Hosts {
			ok = ok || h.Checked == "ok"
		}
		if !ok {
			not = append(not, st.Identity)
		}
	}
	switch len(not) {
	case 0:
		return nil
	case 1:
		return &hinted{Err: fmt.Errorf("auth status: identity %s is not logged in (no host accepted a token of it)", not[0]),
			Hint: "helm auth login --as " + not[0]}
	}
	return &hinted{Err: fmt.Errorf("auth status: %d identities are not logged in (no host accepted a token of theirs): %s", len(not), strings.Join(not, ", ")),
		Hint: "helm auth login --as " + not[0]}
}
