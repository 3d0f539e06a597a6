package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/agent/gemini"
	"github.com/helmlog/helm/agent/udiff"
	"github.com/helmlog/helm/logbook"
)

// hookHost is an agent host whose hooks helm installs: where its
// settings live and how they are edited.
type hookHost struct {
	name      string // claude-code
	dir       string // .claude: the settings are DIR/settings.json
	install   func(doc []byte, command string) ([]byte, error)
	uninstall func(doc []byte) ([]byte, error)
	installed func(doc []byte) (claudecode.Status, error)
	command   func(argv []string) string
}

var hookHosts = []hookHost{
	{"claude-code", ".claude", claudecode.Install, claudecode.Uninstall, claudecode.Installed, claudecode.Command},
	{"gemini-cli", ".gemini", gemini.Install, gemini.Uninstall, gemini.Installed, gemini.Command},
}

func findHookHost(c *cobra.Command, args []string) (hookHost, error) {
	var names []string
	for _, h := range hookHosts {
		names = append(names, h.name)
	}
	if len(args) != 1 {
		return hookHost{}, usageErrorf(c, "%s: one agent host expected (one of: %s), got %q", commandName(c), strings.Join(names, ", "), args)
	}
	for _, h := range hookHosts {
		if h.name == args[0] {
			return h, nil
		}
	}
	return hookHost{}, usageErrorf(c, "%s: unknown agent host %q (one of: %s)", commandName(c), args[0], strings.Join(names, ", "))
}

func newHookCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook COMMAND",
		Short: "add helm to an agent host's hooks (Claude Code, Gemini CLI)",
		Long: `Agent hosts such as Claude Code and Gemini CLI run a command at each of their
hook events: a prompt, a tool call, a permission request, the end of a turn.
"helm hook install" adds helm's hook to the host's settings.json, so that a
session is recorded as a voyage and its tool calls pass helm's guard rules.

The hook command names the identity, role and method the session is
recorded under (--as, --role, --method when installing): the agent cannot
choose them, and it is never recorded as human.`,
		Example: `  helm hook install claude-code --as claude-1
  helm hook status`,
	}
	group(a, c)
	c.AddCommand(
		leafCmd(a, &cobra.Command{
			Use:   "install HOST [--project|--user] [--dry-run]",
			Short: "add helm's hooks to an agent host's settings",
			Long: `Add helm's hook to every event helm reads in HOST's settings (claude-code:
.claude/settings.json; gemini-cli: .gemini/settings.json), in the project
(the git top directory of the working directory, else the working
directory; the default) or the user's home (--user). Everything else in the
file stays as it was; helm's own entries are replaced, so installing twice
changes nothing. The file and its directory are made when absent (the file
0600); an existing file keeps its mode; a symlink's target is written.
The file is replaced atomically.

The hook command is this helm binary's absolute path with "hook HOST" and
the identity (--as, HELM_IDENTITY, then config.toml's identity), role
(--role, default coder) and method (--method, default the host's name;
human is refused), and --home when one is given.`,
			Example: `  helm hook install claude-code --as john-agent
  helm hook install gemini-cli --user --role reviewer --dry-run`,
		}, &hookInstallCmd{}),
		leafCmd(a, &cobra.Command{
			Use:     "uninstall HOST [--project|--user] [--dry-run]",
			Short:   "remove helm's hooks from an agent host's settings",
			Long:    `Remove helm's hook entries (and nothing else) from HOST's settings.`,
			Example: `  helm hook uninstall claude-code`,
		}, &hookUninstallCmd{}),
		leafCmd(a, &cobra.Command{
			Use:   "status",
			Short: "show where helm's hooks are installed",
			Long: `Show, for each agent host and for the project and the user, whether helm's
hooks are installed, on which events, with which command, and whether that
command's program exists.`,
			Example: `  helm hook status --json`,
		}, &hookStatusCmd{}),
	)
	c.AddCommand(newHookRunCmds(a)...)
	return c
}

// hookScope is --project or --user.
type hookScope struct{ project, user bool }

func (s *hookScope) define(fs *pflag.FlagSet) {
	fs.BoolVar(&s.project, "project", false, "the project's settings (the git top directory's; the default)")
	fs.BoolVar(&s.user, "user", false, "the user's settings, in the home directory")
}

func (s *hookScope) name(c *cobra.Command) (string, error) {
	if s.project && s.user {
		return "", usageErrorf(c, "%s: --project and --user exclude each other", commandName(c))
	}
	if s.user {
		return "user", nil
	}
	return "project", nil
}

// settingsPath is HOST's settings file in scope.
func (a *app) settingsPath(h hookHost, scope string) (string, error) {
	if scope == "user" {
		home := a.getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", &hinted{Err: fmt.Errorf("find the user's %s settings: %w", h.name, err), Hint: "set HOME, or use --project"}
			}
		}
		return filepath.Join(home, h.dir, "settings.json"), nil
	}
	return filepath.Join(a.projectDir(), h.dir, "settings.json"), nil
}

// projectDir is the git top directory of the working directory, else
// the working directory.
func (a *app) projectDir() string {
	dir := a.main.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			return top
		}
	}
	return dir
}

// settingsFile is a settings file as read: its bytes, mode, and the file
// that is written (a symlink's target).
type settingsFile struct {
	path, target string
	data         []byte
	mode         fs.FileMode
	exists       bool
}

func readSettings(path string) (*settingsFile, error) {
	f := &settingsFile{path: path, target: path, mode: 0o600}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, &hinted{Err: fmt.Errorf("read %s: a symlink to a missing file: %w", path, err), Hint: "point the link at a file, or remove it"}
		}
		f.target = t
	}
	fi, err := os.Stat(f.target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, &hinted{Err: fmt.Errorf("read %s: not a regular file", path), Hint: "move it away"}
	}
	if f.data, err = os.ReadFile(f.target); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.mode, f.exists = fi.Mode().Perm(), true
	return f, nil
}

// write replaces the file with data atomically: a temporary file in the
// same directory, synced, then renamed over it.
func (f *settingsFile) write(data []byte) error {
	dir := filepath.Dir(f.target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	tmp, err := os.CreateTemp(dir, ".settings.json.helm-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is none
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(f.mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.target)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename, durable where the system allows
		d.Close()
	}
	return nil
}

// settingsError makes a settings file that is not JSON a usage error
// naming the file and the place.
func settingsError(path string, err error) error {
	var se *claudecode.SyntaxError
	if errors.As(err, &se) {
		return &usageError{Err: fmt.Errorf("%s:%d:%d: %s", path, se.Line, se.Column, se.Msg), Hint: "fix the file (it must be one JSON object, without comments), then run the command again"}
	}
	return fmt.Errorf("%s: %w", path, err)
}

type hookInstallCmd struct {
	scope  hookScope
	dryRun bool
}

func (l *hookInstallCmd) Flags(fs *pflag.FlagSet) {
	l.scope.define(fs)
	fs.BoolVar(&l.dryRun, "dry-run", false, "print the change to the file as a diff; write nothing")
}

func (l *hookInstallCmd) Run(_ context.Context, a *app, args []string) error {
	h, err := findHookHost(a.cmd, args)
	if err != nil {
		return err
	}
	scope, err := l.scope.name(a.cmd)
	if err != nil {
		return err
	}
	argv, err := a.hookArgv(h)
	if err != nil {
		return err
	}
	command := h.command(argv)
	path, err := a.settingsPath(h, scope)
	if err != nil {
		return err
	}
	return editSettings(a, h, scope, path, l.dryRun, "installed", func(doc []byte) ([]byte, error) { return h.install(doc, command) })
}

// hookArgv is the hook command's words: this binary, "hook HOST", the
// identity, role and method, and the home when one is given.
func (a *app) hookArgv(h hookHost) ([]string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("find helm's own path for the hook command: %w", err)
	}
	id := a.g.as
	if id == "" {
		id = a.getenv("HELM_IDENTITY")
	}
	if id == "" {
		cfg, err := a.config()
		if err != nil {
			return nil, err
		}
		id = cfg.Identity
	}
	if id == "" {
		return nil, &usageError{Err: fmt.Errorf("hook install: no identity to record %s's sessions under", h.name), Hint: "helm hook install " + h.name + " --as NAME (or identity = \"NAME\" in " + a.configPath() + ")"}
	}
	if err := logbook.ValidateIdentity(id); err != nil {
		return nil, usageErrorf(a.cmd, "hook install: --as: %v", err)
	}
	role := a.g.role
	if role == "" {
		role = "coder"
	}
	method := a.g.method
	if method == "" {
		method = h.name
	}
	if strings.EqualFold(strings.TrimSpace(method), "human") {
		return nil, usageErrorf(a.cmd, "hook install: --method human: a hooked agent is never human; name the agent (the default is %s)", h.name)
	}
	argv := []string{exe, "hook", h.name, "--as", id, "--role", role, "--method", method}
	if a.g.home != "" || a.getenv("HELM_HOME") != "" {
		home, err := a.homePath()
		if err != nil {
			return nil, err
		}
		if home, err = filepath.Abs(home); err != nil {
			return nil, fmt.Errorf("hook install: resolve the home: %w", err)
		}
		argv = append(argv, "--home", home)
	}
	return argv, nil
}

// editSettings reads path, edits it, and writes it back (or prints the
// diff with dryRun).
func editSettings(a *app, h hookHost, scope, path string, dryRun bool, done string, edit func([]byte) ([]byte, error)) error {
	f, err := readSettings(path)
	if err != nil {
		return err
	}
	if !f.exists && done == "uninstalled" {
		return a.reportEdit(h, scope, f, false, done)
	}
	out, err := edit(f.data)
	if err != nil {
		return settingsError(path, err)
	}
	changed := string(out) != string(f.data)
	if dryRun {
		if a.g.json {
			return writeJSON(a.stdout, map[string]any{"host": h.name, "scope": scope, "path": path, "changed": changed, "diff": udiff.Unified(path, string(f.data), string(out))})
		}
		_, err := fmt.Fprint(a.stdout, udiff.Unified(path, string(f.data), string(out)))
		return err
	}
	if changed {
		if err := f.write(out); err != nil {
			return err
		}
	}
	return a.reportEdit(h, scope, f, changed, done)
}

func (a *app) reportEdit(h hookHost, scope string, f *settingsFile, changed bool, done string) error {
	if a.g.json {
		return writeJSON(a.stdout, map[string]any{"host": h.name, "scope": scope, "path": f.path, "target": f.target, "changed": changed})
	}
	where := f.path
	if f.target != f.path {
		where += " (a link to " + f.target + ")"
	}
	if !changed {
		_, err := fmt.Fprintf(a.stdout, "%s: nothing to change in %s\n", h.name, printable(where))
		return err
	}
	_, err := fmt.Fprintf(a.stdout, "%s: %s helm's hooks in %s\n", h.name, done, printable(where))
	return err
}

type hookUninstallCmd struct {
	scope  hookScope
	dryRun bool
}

func (l *hookUninstallCmd) Flags(fs *pflag.FlagSet) {
	l.scope.define(fs)
	fs.BoolVar(&l.dryRun, "dry-run", false, "print the change to the file as a diff; write nothing")
}

func (l *hookUninstallCmd) Run(_ context.Context, a *app, args []string) error {
	h, err := findHookHost(a.cmd, args)
	if err != nil {
		return err
	}
	scope, err := l.scope.name(a.cmd)
	if err != nil {
		return err
	}
	path, err := a.settingsPath(h, scope)
	if err != nil {
		return err
	}
	return editSettings(a, h, scope, path, l.dryRun, "uninstalled", h.uninstall)
}

type hookStatusCmd struct{}

func (hookStatusCmd) Flags(*pflag.FlagSet) {}

// hookStatus is one settings file's share of helm's hooks.
type hookStatus struct {
	Host      string   `json:"host"`
	Scope     string   `json:"scope"`
	Path      string   `json:"path"`
	Exists    bool     `json:"exists"`
	Installed bool     `json:"installed"`
	Events    []string `json:"events"`
	Missing   []string `json:"missing"`
	Commands  []string `json:"commands"`
	// Programs says, for each command, whether its program exists.
	Programs []bool `json:"programs_exist"`
	Error    string `json:"error,omitempty"`
}

func (hookStatusCmd) Run(_ context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "hook status: no arguments expected, got %q", args)
	}
	var all []hookStatus
	for _, h := range hookHosts {
		for _, scope := range []string{"project", "user"} {
			path, err := a.settingsPath(h, scope)
			if err != nil {
				return err
			}
			st := hookStatus{Host: h.name, Scope: scope, Path: path, Events: []string{}, Missing: []string{}, Commands: []string{}, Programs: []bool{}}
			f, err := readSettings(path)
			if err == nil {
				st.Exists = f.exists
				var s claudecode.Status
				if s, err = h.installed(f.data); err == nil {
					st.Events, st.Missing, st.Commands = s.Events, s.Missing, s.Commands
					st.Installed = len(s.Events) > 0
					for _, p := range s.Programs {
						st.Programs = append(st.Programs, programExists(p))
					}
				}
			}
			if err != nil {
				st.Error = settingsError(path, err).Error()
			}
			all = append(all, st)
		}
	}
	if a.g.json {
		return writeJSON(a.stdout, all)
	}
	var b strings.Builder
	for _, st := range all {
		fmt.Fprintf(&b, "%s (%s) %s: ", st.Host, st.Scope, printable(st.Path))
		switch {
		case st.Error != "":
			fmt.Fprintf(&b, "unreadable: %s\n", printable(st.Error))
			continue
		case !st.Exists:
			b.WriteString("no file\n")
			continue
		case !st.Installed:
			b.WriteString("not installed\n")
			continue
		case len(st.Missing) == 0:
			fmt.Fprintf(&b, "installed on all %s\n", plural(len(st.Events), "event"))
		default:
			fmt.Fprintf(&b, "installed on %s; missing on %s\n", strings.Join(st.Events, ", "), strings.Join(st.Missing, ", "))
		}
		for i, c := range st.Commands {
			state := ""
			if !st.Programs[i] {
				state = " (its program is missing: run helm hook install again)"
			}
			fmt.Fprintf(&b, "  command: %s%s\n", printable(c), state)
		}
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}

// programExists says the program of a helm hook command exists.
func programExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}
