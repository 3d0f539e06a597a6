package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/runner"
)

// globals are the flags every command accepts, before or after its name.
type globals struct {
	home, store, voyage, as, role, method string
	json, help                            bool
	noPager, absolute                     bool
	jsonFields, jq                        string // --json=FIELDS, --jq EXPR (jsonfilter.go)
}

func (g *globals) define(fs *pflag.FlagSet) {
	fs.StringVar(&g.home, "home", "", "helm home `DIR` (env HELM_HOME, default ~/.helm); refused when another user owns it or can write it, unless HELM_SAFE_HOMES lists it")
	fs.StringVar(&g.store, "store", "", "keep the home's voyages in the JetStream server at `URL`, nats://HOST:PORT[/HOME] (env HELM_STORE, then config.toml; \"\": on this machine's disk, in the home, the default)")
	fs.StringVar(&g.voyage, "voyage", "", "voyage `ID` or unambiguous prefix (env HELM_VOYAGE; default: the one whose worktree you are in, else the only active one; for a read (log, show, verify, report...), else the one most recently written, said on stderr)")
	fs.StringVar(&g.as, "as", "", "act as `IDENTITY` (env HELM_IDENTITY, then the voyage's identity, then config.toml)")
	fs.StringVar(&g.role, "role", "", "`ROLE` recorded on entries: coder, reviewer, ... (env HELM_ROLE, then config.toml, then the role this identity last recorded in the voyage)")
	fs.StringVar(&g.method, "method", "", "`METHOD` recorded on entries: a model name, human, ... (env HELM_METHOD, then config.toml, then the method this identity last recorded in the voyage)")
	fs.Var(jsonFlag{on: &g.json, fields: &g.jsonFields}, "json", "machine-readable JSON output on stdout; --json=FIELDS keeps only those comma-separated fields of each object (--json=id,intent)")
	fs.Lookup("json").NoOptDefVal = jsonAll
	fs.Var(jqFlag{on: &g.json, expr: &g.jq}, "jq", "print what the jq program `EXPR` makes of the JSON output (implies --json; a string is printed as it is): --jq '.[].id'")
	fs.BoolVar(&g.noPager, "no-pager", false, "on a terminal, print long output (helm log) directly instead of through the pager (HELM_PAGER, PAGER, default less with LESS=FRX)")
	fs.BoolVar(&g.absolute, "absolute", false, "on a terminal, show times as RFC 3339 in UTC instead of \"2 minutes ago\" (output to a pipe always is)")
	fs.BoolVarP(&g.help, "help", "h", false, "show this help")
}

// app is one invocation: its streams, its global flags, and what they
// resolve to, computed once when first needed.
type app struct {
	main                  *Main
	args                  []string // the command line, without the program name
	stdin                 io.Reader
	stdout, stderr        io.Writer
	g                     globals
	cmd                   *cobra.Command // the command being run
	stdinUsed             bool
	home                  *helm.Home
	cfg                   *config
	pol                   *policy.Policy // the guard rules, once read (nil: none)
	polRead               bool
	voyages               []*helm.Voyage // opened, closed at the end
	stores                []io.Closer    // shared stores opened, closed at the end
	identitySrc, identity string
	// homeDirPath is the home, once homeDir resolved and judged it
	// (homeChecked), or homeErr why not.
	homeDirPath string
	homeErr     error
	homeChecked bool
	// readOpened is the voyage a read chose as the one most recently
	// written, opened to name it (readVoyageID); closed with voyages.
	readOpened *helm.Voyage
	// abandoned says a hook answered without waiting for its work, which
	// goes on with this app (hookRun.bounded): close leaves it alone.
	abandoned bool
}

func (a *app) close() {
	if a.abandoned {
		return // a hook's work that did not end in time still uses them
	}
	for _, v := range a.voyages {
		a.reportTornTails(v)
		v.Close()
	}
	for _, s := range a.stores {
		s.Close()
	}
}

// reportTornTails tells the user about the end of a log that a crashed
// writer left half-written: cut by this command's change, or found by a
// read and left for the next change to cut.
func (a *app) reportTornTails(v *helm.Voyage) {
	st := v.Storage()
	for _, c := range st.Cuts {
		fmt.Fprintf(a.stderr, "helm: voyage %s: cut a torn final write from its log (%d bytes at offset %d of %s): a crashed process's write that was never acknowledged; the bytes are saved in %s\n",
			v.ID(), c.Bytes, c.Offset, c.File, c.SavedTo)
	}
	if c := st.Torn; c != nil && len(st.Cuts) == 0 {
		fmt.Fprintf(a.stderr, "helm: voyage %s: its log ends in a torn write (%d bytes at offset %d of %s) that a crashed process left and never acknowledged; the next change to the voyage cuts it and saves the bytes beside the segment\n",
			v.ID(), c.Bytes, c.Offset, c.File)
	}
}

func (a *app) getenv(key string) string { return strings.TrimSpace(a.main.getenv(key)) }

// homeDir resolves the home (homePath) and judges it once: a home that a
// user other than the one running helm can change is refused before
// anything in it is read (safehome.go).
func (a *app) homeDir() (string, error) {
	if !a.homeChecked {
		a.homeChecked = true
		a.homeDirPath, a.homeErr = a.homePath()
		if a.homeErr == nil {
			a.homeErr = a.checkHome(a.homeDirPath)
		}
	}
	return a.homeDirPath, a.homeErr
}

// homePath resolves the home: --home, then HELM_HOME, then ~/.helm.
func (a *app) homePath() (string, error) {
	if a.g.home != "" {
		return a.abs(a.g.home), nil
	}
	if d := a.getenv("HELM_HOME"); d != "" {
		return a.abs(d), nil
	}
	home := a.getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", &hinted{Err: fmt.Errorf("find the helm home: no home directory for ~/.helm: %v", err), Hint: "--home DIR or HELM_HOME=DIR"}
		}
	}
	return filepath.Join(home, ".helm"), nil
}

// abs resolves a path given on the command line against the working
// directory.
func (a *app) abs(p string) string {
	if filepath.IsAbs(p) || a.main.Dir == "" {
		return p
	}
	return filepath.Join(a.main.Dir, p)
}

// openHome opens the helm home.
func (a *app) openHome() (*helm.Home, error) {
	if a.home != nil {
		return a.home, nil
	}
	dir, opts, err := a.homeOptions()
	if err != nil {
		return nil, err
	}
	h, err := a.openStore(dir, opts)
	if err != nil {
		return nil, err
	}
	a.home = h
	return h, nil
}

// homeOptions resolves the home's directory and the options it is
// opened with: the test's, config.toml's redaction, the guard rules.
func (a *app) homeOptions() (string, *helm.Options, error) {
	dir, err := a.homeDir()
	if err != nil {
		return "", nil, err
	}
	var opts helm.Options
	if a.main.Options != nil {
		opts = *a.main.Options
	}
	cfg, err := a.config()
	if err != nil {
		return "", nil, err
	}
	opts.Redaction.ExtraEnv = append(opts.Redaction.ExtraEnv, cfg.Redact.Env...)
	for _, p := range cfg.Redact.Patterns {
		opts.Redaction.Patterns = append(opts.Redaction.Patterns, redact.Pattern{Name: p.Name, Regexp: p.Regexp})
	}
	if opts.Policy, err = a.policy(dir, cfg); err != nil {
		return "", nil, err
	}
	return dir, &opts, nil
}

// voyageID resolves the voyage: --voyage, then HELM_VOYAGE (each a full id
// or an unambiguous prefix), else the only active voyage.
func (a *app) voyageID(ctx context.Context) (string, error) {
	return a.voyageIDAmong(ctx, helm.ListActive, "active", nil)
}

// openVoyageAmong is openVoyage choosing, without --voyage or
// HELM_VOYAGE, the only voyage of those filter lists that pick keeps (nil
// keeps all); what names them in messages.
func (a *app) openVoyageAmong(ctx context.Context, filter helm.StatusFilter, what string, pick func(helm.VoyageInfo) bool) (*helm.Voyage, error) {
	id, err := a.voyageIDAmong(ctx, filter, what, pick)
	if err != nil {
		return nil, err
	}
	v, err := a.home.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	a.voyages = append(a.voyages, v)
	return v, nil
}

// voyageIDAmong is voyageID among the voyages filter lists that pick
// keeps: --voyage, then HELM_VOYAGE, then the voyage whose worktree the
// working directory is in, then the only one of them.
func (a *app) voyageIDAmong(ctx context.Context, filter helm.StatusFilter, what string, pick func(helm.VoyageInfo) bool) (string, error) {
	id, _, err := a.chooseVoyage(ctx, filter, what, pick)
	return id, err
}

// chooseVoyage is voyageIDAmong, also saying why it chose the voyage.
func (a *app) chooseVoyage(ctx context.Context, filter helm.StatusFilter, what string, pick func(helm.VoyageInfo) bool) (id, why string, err error) {
	h, err := a.openHome()
	if err != nil {
		return "", "", err
	}
	if id, why, err := a.namedVoyage(ctx, h); id != "" || err != nil {
		return id, why, err
	}
	active, err := h.List(ctx, &helm.ListOptions{Status: filter})
	if err != nil {
		return "", "", err
	}
	if pick != nil {
		active = slices.DeleteFunc(active, func(i helm.VoyageInfo) bool { return !pick(i) })
	}
	if v, ok := a.worktreeVoyage(active); ok {
		return v.ID, "the working directory is in its worktree " + v.Worktree, nil
	}
	id, err = a.onlyVoyage(ctx, h, active, what)
	return id, "the only " + what + " voyage", err
}

// namedVoyage resolves the voyage --voyage, else HELM_VOYAGE names (a
// full id or an unambiguous prefix); "" when neither names one.
func (a *app) namedVoyage(ctx context.Context, h *helm.Home) (id, why string, err error) {
	for _, src := range []struct{ name, val string }{{"--voyage", a.g.voyage}, {"HELM_VOYAGE", a.getenv("HELM_VOYAGE")}} {
		if src.val == "" {
			continue
		}
		id, err := resolveVoyage(ctx, h, src.name, src.val)
		return id, "given by " + src.name, err
	}
	return "", "", nil
}

// resolveVoyage resolves val, a voyage's id or an unambiguous prefix of
// it, that what (--voyage, a tool's voyage) gave.
func resolveVoyage(ctx context.Context, h *helm.Home, what, val string) (string, error) {
	id, err := h.Resolve(ctx, val)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, val, err)
	}
	return id, nil
}

// worktreeVoyage returns the voyage among list whose worktree (not
// removed) holds the working directory: the innermost, when worktrees
// nest.
func (a *app) worktreeVoyage(list []helm.VoyageInfo) (helm.VoyageInfo, bool) {
	wd := a.main.Dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return helm.VoyageInfo{}, false
		}
	}
	wd = realPath(wd)
	var best helm.VoyageInfo
	for _, v := range list {
		if v.Worktree == "" || !v.WorktreeRemoved.IsZero() {
			continue
		}
		wt := realPath(v.Worktree)
		if (wd == wt || strings.HasPrefix(wd, wt+string(filepath.Separator))) && len(wt) > len(best.Worktree) {
			best = v
			best.Worktree = wt
		}
	}
	return best, best.ID != ""
}

// realPath is p with its symbolic links resolved, or p cleaned when
// they cannot be.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// onlyVoyage returns the one voyage of active, else a usage error
// listing them (what names them).
func (a *app) onlyVoyage(ctx context.Context, h *helm.Home, active []helm.VoyageInfo, what string) (string, error) {
	switch len(active) {
	case 1:
		return active[0].ID, nil
	case 0:
		hint := `helm voyage new "INTENT" to start one, or --voyage ID for another (helm voyage list --status all)`
		if what != "active" {
			hint = "--voyage ID for another (helm voyage list --status all)"
		} else if open, err := h.List(ctx, &helm.ListOptions{Status: helm.ListOpen}); err == nil && len(open) > 0 {
			// Paused voyages: one of them may be the one meant.
			p := open[0]
			hint = fmt.Sprintf("voyage %s (%s) is %s: helm --voyage %s voyage resume, to go on with it; or %s", short(p.ID), printable(p.Intent), p.Status, short(p.ID), hint)
		}
		return "", &usageError{
			Err:  fmt.Errorf("%w: no %s voyage in %s, and neither --voyage nor HELM_VOYAGE names one", helm.ErrNoVoyage, what, homeName(h)),
			Hint: hint,
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s voyages; choose one with --voyage ID (or HELM_VOYAGE=ID):", len(active), what)
	for _, v := range active {
		fmt.Fprintf(&b, "\n  %s  %s", v.ID, v.Intent)
	}
	return "", &usageError{Err: errors.New(b.String()), Hint: "helm --voyage " + short(active[0].ID) + " " + commandLine(a.args)}
}

// openVoyage opens the resolved voyage; it is closed when the command ends.
func (a *app) openVoyage(ctx context.Context) (*helm.Voyage, error) {
	return a.openVoyageAmong(ctx, helm.ListActive, "active", nil)
}

// activeVoyage opens the resolved voyage and checks that it is active, so
// nothing in the world is touched for a voyage that cannot record it; then
// it resolves who acts on it (entry as for who).
func (a *app) activeVoyage(ctx context.Context, entry bool) (*helm.Voyage, logbook.Who, error) {
	v, err := a.openVoyage(ctx)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	if err := view.TakesChanges(v); err != nil {
		return nil, logbook.Who{}, err
	}
	who, err := a.who(ctx, v, entry)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	return v, who, nil
}

// resolveIdentity: --as, then HELM_IDENTITY, then the voyage's current
// identity (voyageIdentity: the last handoff's, else the one it started
// with; empty when there is no voyage yet), then config.toml. A
// config.toml cannot take a handed-off voyage back: the voyage's
// identity comes before it.
func (a *app) resolveIdentity(voyageIdentity string) (string, error) {
	cfg, err := a.config()
	if err != nil {
		return "", err
	}
	for _, src := range []struct{ name, val string }{
		{"--as", strings.TrimSpace(a.g.as)},
		{"HELM_IDENTITY", a.getenv("HELM_IDENTITY")},
		{"the voyage's identity", voyageIdentity},
		{"identity in " + a.configPath(), cfg.Identity},
	} {
		if src.val == "" {
			continue
		}
		if err := logbook.ValidateIdentity(src.val); err != nil {
			hint := "an identity is a plain name such as john-agent: set " + src.name + " to one"
			if src.name == "--as" {
				hint = "helm " + commandLine(replaceFlag(a.args, "as", "NAME"))
			}
			return "", &usageError{Err: fmt.Errorf("%s: %w: %v", src.name, helm.ErrInvalid, err), Hint: hint}
		}
		a.identity, a.identitySrc = src.val, src.name
		return src.val, nil
	}
	return "", &usageError{
		Err:  fmt.Errorf("%w: no identity: none of --as, HELM_IDENTITY or identity in %s is set", helm.ErrMissingWho, a.configPath()),
		Hint: "helm " + commandLine(a.args) + " --as NAME, or HELM_IDENTITY=NAME, or identity = \"NAME\" in " + a.configPath(),
	}
}

// resolveRoleMethod returns the role (--role, HELM_ROLE, config) and the
// method (--method, HELM_METHOD, config); with required, an unresolved one
// is an error naming all its sources.
func (a *app) resolveRoleMethod(required bool) (role, method string, err error) {
	return a.resolveRoleMethodRemembered(required, logbook.Who{})
}

// resolveRoleMethodRemembered is resolveRoleMethod with, after the
// config, the role and method remembered (the voyage's own record of
// what its identity last acted as, rememberedWho).
func (a *app) resolveRoleMethodRemembered(required bool, remembered logbook.Who) (role, method string, err error) {
	cfg, err := a.config()
	if err != nil {
		return "", "", err
	}
	pick := func(flag, env, conf string) string {
		for _, v := range []string{strings.TrimSpace(flag), a.getenv(env), conf} {
			if v != "" {
				return v
			}
		}
		return ""
	}
	role = cmp.Or(pick(a.g.role, "HELM_ROLE", cfg.Role), remembered.Role)
	method = cmp.Or(pick(a.g.method, "HELM_METHOD", cfg.Method), remembered.Method)
	if !required {
		return role, method, nil
	}
	var missing, flags, envs, keys []string
	if role == "" {
		missing = append(missing, "role: none of --role, HELM_ROLE or role in "+a.configPath()+" is set")
		flags, envs, keys = append(flags, "--role coder"), append(envs, "HELM_ROLE"), append(keys, "role")
	}
	if method == "" {
		missing = append(missing, "method: none of --method, HELM_METHOD or method in "+a.configPath()+" is set")
		// helm mcp records an agent's work: its example is an agent's
		// method, never human.
		example := "human"
		if a.cmd != nil && a.cmd.Name() == "mcp" {
			example = "claude-code"
		}
		flags, envs, keys = append(flags, "--method "+example), append(envs, "HELM_METHOD"), append(keys, "method")
	}
	if len(missing) > 0 {
		return "", "", &usageError{
			Err: fmt.Errorf("%w: every logbook entry records who took it; no %s", helm.ErrMissingWho, strings.Join(missing, "; no ")),
			Hint: fmt.Sprintf("helm %s %s, or set %s, or %s in %s", commandLine(a.args), strings.Join(flags, " "), strings.Join(envs, " and "),
				strings.Join(keys, " and "), a.configPath()),
		}
	}
	return role, method, nil
}

// who resolves who acts on voyage v; entry says the change is a logbook
// entry (bearing, challenge, action), which needs a role and a method.
//
// The role and method are --role / --method, then HELM_ROLE /
// HELM_METHOD, then config.toml, then what this identity last acted as
// in this voyage (rememberedWho): a role and method given once, at
// voyage new or on any entry, need not be repeated.
func (a *app) who(ctx context.Context, v *helm.Voyage, entry bool) (logbook.Who, error) {
	id, err := a.resolveIdentity(v.Info().CurrentIdentity)
	if err != nil {
		return logbook.Who{}, err
	}
	// The voyage is read only for what flags, environment and config
	// leave out: a long voyage is not scanned when they say it all.
	var remembered logbook.Who
	if role, method, err := a.resolveRoleMethod(false); err != nil {
		return logbook.Who{}, err
	} else if role == "" || method == "" {
		if remembered, err = rememberedWho(ctx, v, id); err != nil {
			return logbook.Who{}, err
		}
	}
	role, method, err := a.resolveRoleMethodRemembered(entry, remembered)
	if err != nil {
		return logbook.Who{}, err
	}
	return logbook.Who{Identity: id, Role: role, Method: method}, nil
}

// rememberedWho is the role and method identity last recorded in v: on
// its latest logbook entry or change of status (the start, a completion,
// a resumption), whichever came later in the log. It reads the voyage's
// log, never writes to remember; zero when identity recorded neither.
//
// The log, not the views: the views may come from the voyage's snapshot,
// a cache the recorded agent can rewrite with every checksum right, and a
// snapshot that said an agent's entries were a person's (method human)
// would have helm record its next ones so, which the built-in curation
// and handoff rules would then take for a person's. The records are
// read from the end, a page at a time, in the order they were written
// (not by their times): the latest one is usually among the last.
func rememberedWho(ctx context.Context, v *helm.Voyage, identity string) (logbook.Who, error) {
	const page = 256
	for end := v.Info().Seq; end > 0; {
		from := uint64(1)
		if end > page {
			from = end - page + 1
		}
		var found *logbook.Who
		for e, err := range v.Events(ctx, from) {
			if err != nil {
				return logbook.Who{}, err
			}
			if e.Seq > end {
				break
			}
			if remembersWho[e.Type] && e.Who.Identity == identity && (e.Who.Role != "" || e.Who.Method != "") {
				w := e.Who
				found = &w
			}
		}
		if found != nil {
			return *found, nil
		}
		end = from - 1
	}
	return logbook.Who{}, nil
}

// remembersWho are the events whose who rememberedWho takes: the changes
// of status, and those that record a logbook entry.
var remembersWho = map[projection.Type]bool{
	projection.VoyageStarted: true, projection.VoyageCompleted: true, projection.VoyageResumed: true,
	projection.BearingTaken: true, projection.ReadingChallenged: true, projection.ActionIntended: true,
	projection.ActionRefused: true, projection.NoteAdded: true, projection.Judged: true,
	projection.StepRecorded: true, projection.IdentityHandedOff: true,
}

// whoStarts resolves who starts a voyage (new, fork, salvage): no
// voyage's identity to fall back on, and a role and method that may be
// left out.
func (a *app) whoStarts() (logbook.Who, error) {
	id, err := a.resolveIdentity("")
	if err != nil {
		return logbook.Who{}, err
	}
	role, method, err := a.resolveRoleMethod(false)
	if err != nil {
		return logbook.Who{}, err
	}
	return logbook.Who{Identity: id, Role: role, Method: method}, nil
}

// runner returns the gh/git runner for identity in the working directory.
func (a *app) runner(identity, repo string) (*runner.Runner, error) {
	home, err := a.homeDir()
	if err != nil {
		return nil, err
	}
	var pass []string
	if identity != "" {
		cfg, err := a.config()
		if err != nil {
			return nil, err
		}
		pass = cfg.Identities[identity].PassEnv
	}
	return &runner.Runner{Home: home, Identity: identity, Dir: a.main.Dir, Env: a.main.ExtraEnv, Repository: repo, PassEnv: pass}, nil
}

// readInput reads a file named on the command line, "-" meaning stdin
// (which can be read once).
func (a *app) readInput(name string) ([]byte, error) {
	if name == "-" {
		if a.stdinUsed {
			return nil, &usageError{Err: errors.New("standard input (-) can be read only once"), Hint: "write the observations to files"}
		}
		a.stdinUsed = true
		if a.stdin == nil {
			return nil, nil
		}
		return io.ReadAll(a.stdin)
	}
	return a.readFile(name)
}

// readFile reads a file named on the command line (or in a tool's
// arguments), relative to the working directory.
func (a *app) readFile(name string) ([]byte, error) {
	data, err := os.ReadFile(a.abs(name))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named as the user gave it
		}
		return nil, &usageError{Err: fmt.Errorf("read %s: %w", name, err), Hint: "helm observe KIND ... --out FILE, to write one", Tool: "name a file helm observe KIND ... --out FILE wrote"}
	}
	return data, nil
}

// replaceFlag returns args with the value of the long flag --name (given
// as "--name V" or "--name=V") replaced by value, for a Try: line that
// corrects it; args without the flag get it at the end.
func replaceFlag(args []string, name, value string) []string {
	out := append([]string(nil), args...)
	for i, s := range out {
		if s == "--" {
			break
		}
		switch {
		case s == "--"+name && i+1 < len(out):
			out[i+1] = value
			return out
		case strings.HasPrefix(s, "--"+name+"="):
			out[i] = "--" + name + "=" + value
			return out
		}
	}
	return append(out, "--"+name, value)
}

// readVoyageID resolves the voyage a read (log, voyage show, verify,
// report, export, stats...) tells of: VOYAGE (arg, which must agree with
// --voyage), else --voyage, else HELM_VOYAGE, else the voyage whose
// worktree the working directory is in, else the only active voyage,
// else the one most recently written (its last event's time, as the
// home's listing knows it from what writers recorded: nothing is
// written to find out), which is said on stderr since nothing named it.
// So after helm complete, a bare helm log tells the voyage just
// completed.
func (a *app) readVoyageID(ctx context.Context, arg string) (string, error) {
	if arg != "" {
		return a.voyageIDArg(ctx, arg)
	}
	h, err := a.openHome()
	if err != nil {
		return "", err
	}
	if id, _, err := a.namedVoyage(ctx, h); id != "" || err != nil {
		return id, err
	}
	all, err := h.List(ctx, &helm.ListOptions{Status: helm.ListAll})
	if err != nil {
		return "", err
	}
	if v, ok := a.worktreeVoyage(all); ok {
		return v.ID, nil
	}
	var active []helm.VoyageInfo
	for _, v := range all {
		if v.Status == logbook.StatusActive {
			active = append(active, v)
		}
	}
	if len(active) == 1 {
		return active[0].ID, nil
	}
	if len(all) == 0 {
		return "", &usageError{
			Err:  fmt.Errorf("%w: no voyage in %s yet, and neither VOYAGE, --voyage nor HELM_VOYAGE names one", helm.ErrNoVoyage, homeName(h)),
			Hint: `helm voyage new "INTENT" to start one`,
		}
	}
	last := slices.MaxFunc(all, func(x, y helm.VoyageInfo) int {
		return cmp.Or(x.LastAt.Compare(y.LastAt), x.Created.Compare(y.Created), strings.Compare(x.ID, y.ID))
	})
	among := "no voyage is active"
	if len(active) > 1 {
		among = fmt.Sprintf("%d voyages are active", len(active))
	}
	// The listing may come from the home index, a cache the recorded
	// agent can rewrite: the voyage is named by what its own record says
	// (its intent), so that the line names the voyage the read tells,
	// whatever the index claimed of it. A voyage that cannot be opened
	// is named as listed; the read then says why it cannot be read.
	intent := last.Intent
	if v, err := h.Voyage(ctx, last.ID); err == nil {
		intent = v.Info().Intent
		a.voyages = append(a.voyages, v)
		a.readOpened = v
	}
	fmt.Fprintf(a.stderr, "helm: voyage %s (%s): the one most recently written, as %s; name another as VOYAGE or with --voyage ID (helm voyage list --status all)\n",
		short(last.ID), printable(intent), among)
	return last.ID, nil
}

// openReadVoyage opens the voyage readVoyageID resolves; it is closed
// when the command ends.
func (a *app) openReadVoyage(ctx context.Context, arg string) (*helm.Voyage, error) {
	id, err := a.readVoyageID(ctx, arg)
	if err != nil {
		return nil, err
	}
	if v := a.readOpened; v != nil && v.ID() == id {
		return v, nil // opened to name it
	}
	v, err := a.home.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	a.voyages = append(a.voyages, v)
	return v, nil
}
