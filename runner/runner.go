// Package runner runs the two programs through which helm changes and reads
// the world outside a voyage: `gh` (GitHub) and `git`.
//
// Every gh call runs with the identity's own configuration directory,
// $HELM_HOME/gh-config/IDENTITY/ as GH_CONFIG_DIR, so two identities (a
// person and an agent) never share GitHub credentials. The identity is
// checked with logbook.ValidateIdentity first: it is a name, never a path.
//
// A failing call is an *ExitError carrying the command, its exit code and
// the program's own message. Token values (GH_TOKEN, GITHUB_TOKEN,
// GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN) and credentials embedded in
// URLs never appear in an error or a rendered command.
//
// GHCommand and GitCommand build the exact command a call would run without
// running it; their String method is what dry runs print.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/helmlog/helm/logbook"
)

var (
	// ErrNoHome is returned when a gh call is made without a Home.
	ErrNoHome = errors.New("no helm home set for the gh config directories")
	// ErrProgramNotFound is returned when gh or git is not installed.
	ErrProgramNotFound = errors.New("program not found")
)

// helmGHEnv is what helm sets on every gh call besides GH_CONFIG_DIR:
// never prompt, never check for updates, never colour the output.
var helmGHEnv = []string{
	"GH_PROMPT_DISABLED=1",
	"GH_NO_UPDATE_NOTIFIER=1",
	"NO_COLOR=1",
}

// helmGitEnv keeps git from asking for credentials on a terminal: helm runs
// unattended, and a prompt would hang an agent.
var helmGitEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
}

// tokenKeys are the environment variables whose values are secrets.
var tokenKeys = []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// Runner runs gh and git for one identity in one working directory. The
// zero value runs git in the process's directory; gh calls need Home and
// Identity.
type Runner struct {
	// Home is the helm home (HELM_HOME); gh-config/ lives under it.
	Home string
	// Identity names the gh configuration to use.
	Identity string
	// Dir is the working directory of every call; empty means the
	// process's working directory.
	Dir string
	// Env holds extra environment entries (KEY=VALUE) added to the
	// process's environment, e.g. GH_HOST and SSL_CERT_FILE in tests.
	// helm's own entries (GH_CONFIG_DIR, ...) are applied after these.
	Env []string
	// GHPath and GitPath are the programs to run; empty means "gh" and
	// "git" looked up in PATH.
	GHPath, GitPath string
	// Repository, when set (OWNER/NAME), is the
	// repository Repo returns instead of the one origin names.
	Repository string
	// PassEnv names variables of the process's environment that gh and
	// git see although the allow-list (AmbientEnv) drops them: what this
	// identity's own configuration asks for, such as GH_HOST, or a
	// GH_TOKEN that is this identity's.
	PassEnv []string
}

// Command is one fully built invocation: what would run, where, with which
// environment and input.
type Command struct {
	// Path is the program as it is invoked ("gh", "/usr/bin/git", ...).
	Path string
	// Args are the arguments after the program.
	Args []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env are the entries added to the inherited environment, in order.
	Env []string
	// Stdin is the standard input, if any.
	Stdin []byte

	tool string // "gh" or "git", for the install hint
}

// GHConfigDir returns the identity's gh configuration directory,
// $HELM_HOME/gh-config/IDENTITY. It validates the identity but does not
// create the directory.
func (r *Runner) GHConfigDir() (string, error) {
	if r.Home == "" {
		return "", ErrNoHome
	}
	if err := logbook.ValidateIdentity(r.Identity); err != nil {
		return "", fmt.Errorf("gh config directory of identity %q: %w", r.Identity, err)
	}
	return filepath.Join(r.Home, "gh-config", r.Identity), nil
}

// GHCommand builds the gh invocation for args with stdin as its input (nil
// for none) without running it.
func (r *Runner) GHCommand(stdin []byte, args ...string) (*Command, error) {
	dir, err := r.GHConfigDir()
	if err != nil {
		return nil, err
	}
	helm := append([]string{"GH_CONFIG_DIR=" + dir}, helmGHEnv...)
	env := append(withoutKeys(r.Env, helm), helm...)
	return &Command{Path: orDefault(r.GHPath, "gh"), Args: args, Dir: r.Dir, Env: env, Stdin: stdin, tool: "gh"}, nil
}

// GitCommand builds the git invocation for args without running it.
func (r *Runner) GitCommand(args ...string) *Command {
	env := append(withoutKeys(r.Env, helmGitEnv), helmGitEnv...)
	return &Command{Path: orDefault(r.GitPath, "git"), Args: args, Dir: r.Dir, Env: env, tool: "git"}
}

// GH runs gh with args and returns its standard output. It satisfies
// marks.GitHubRunner.
func (r *Runner) GH(ctx context.Context, args ...string) ([]byte, error) {
	return r.GHInput(ctx, nil, args...)
}

// GHInput runs gh with stdin as its standard input, as `gh api --input -`
// needs, and returns its standard output.
func (r *Runner) GHInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	c, err := r.GHCommand(stdin, args...)
	if err != nil {
		return nil, err
	}
	dir, _ := r.GHConfigDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the gh config directory of identity %s: %w", r.Identity, err)
	}
	out, err := r.Run(ctx, c)
	return out, r.loginError(err)
}

// Git runs git with args and returns its standard output.
func (r *Runner) Git(ctx context.Context, args ...string) ([]byte, error) {
	return r.Run(ctx, r.GitCommand(args...))
}

// Run runs c and returns its standard output. A non-zero exit is an
// *ExitError; a missing program wraps ErrProgramNotFound.
func (r *Runner) Run(ctx context.Context, c *Command) ([]byte, error) {
	s := r.scrubber(c.Env)
	path := c.Path
	if !strings.ContainsRune(path, filepath.Separator) {
		found, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w in PATH%s", path, ErrProgramNotFound, installHint(c.tool))
		}
		path = found
	}
	cmd := exec.CommandContext(ctx, path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(AmbientEnv(os.Environ(), r.PassEnv), c.Env...)
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	line := s.scrub(c.Line())
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && ctx.Err() == nil {
		return nil, &ExitError{
			Cmd:      line,
			ExitCode: exitErr.ExitCode(),
			Stderr:   s.scrub(strings.TrimSpace(stderr.String())),
			Stdout:   s.scrub(strings.TrimSpace(stdout.String())),
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", line, ctx.Err())
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w%s", line, ErrProgramNotFound, installHint(c.tool))
	}
	return nil, fmt.Errorf("%s: %s", line, s.scrub(err.Error()))
}

func installHint(tool string) string {
	switch tool {
	case "gh":
		return "; install the GitHub CLI (apt-get install gh, or see https://cli.github.com)"
	case "git":
		return "; install git (apt-get install git)"
	}
	return ""
}

// ExitError is a gh or git call that exited with a non-zero status. Its
// fields never hold a token.
type ExitError struct {
	// Cmd is the command line that ran, without the environment.
	Cmd string
	// ExitCode is the program's exit status.
	ExitCode int
	// Stderr is the program's own message on standard error, trimmed.
	Stderr string
	// Stdout is the program's standard output, trimmed. git prints some
	// refusals ("nothing to commit") there rather than on stderr, and gh
	// prints the API's JSON error body there.
	Stdout string
}

// Message is the program's own explanation: its stderr, or its stdout
// when stderr is empty.
func (e *ExitError) Message() string {
	if e.Stderr != "" {
		return e.Stderr
	}
	return e.Stdout
}

// Error reads "gh api repos/o/r/pulls/9: exit status 1: gh: Not Found (HTTP 404)".
func (e *ExitError) Error() string {
	msg := e.Message()
	if msg == "" {
		return fmt.Sprintf("%s: exit status %d", e.Cmd, e.ExitCode)
	}
	return fmt.Sprintf("%s: exit status %d: %s", e.Cmd, e.ExitCode, msg)
}

// Line renders the program and its arguments, shell-quoted, without the
// environment, directory or input.
func (c *Command) Line() string {
	parts := make([]string, 0, len(c.Args)+1)
	parts = append(parts, shellQuote(c.Path))
	for _, a := range c.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// String renders the command as a shell line that does exactly what
// running it does: the directory, the input, the environment entries helm
// adds (token values masked as ***) and the arguments, all shell-quoted.
func (c *Command) String() string {
	var b strings.Builder
	if c.Dir != "" {
		b.WriteString("cd " + shellQuote(c.Dir) + " && ")
	}
	if c.Stdin != nil {
		b.WriteString("printf '%s' " + shellQuote(string(c.Stdin)) + " | ")
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		if isTokenKey(k) {
			v = "***"
		}
		b.WriteString(k + "=" + shellQuote(v) + " ")
	}
	b.WriteString(c.Line())
	return scrubURLCredentials(b.String())
}

// withoutKeys returns env without the entries whose keys helm sets
// itself, so each key appears once, with helm's value.
func withoutKeys(env, helm []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(helm, func(h string) bool { return strings.HasPrefix(h, k+"=") }) {
			out = append(out, kv)
		}
	}
	return out
}

func isTokenKey(k string) bool {
	for _, t := range tokenKeys {
		if k == t {
			return true
		}
	}
	return false
}

// scrubber removes the token values visible to a call from text.
type scrubber struct{ secrets []string }

func (r *Runner) scrubber(extra []string) scrubber {
	var s scrubber
	add := func(kvs []string) {
		for _, kv := range kvs {
			k, v, ok := strings.Cut(kv, "=")
			if ok && isTokenKey(k) && v != "" {
				s.secrets = append(s.secrets, v)
			}
		}
	}
	add(os.Environ())
	add(extra)
	return s
}

func (s scrubber) scrub(text string) string {
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, "***")
	}
	return scrubURLCredentials(text)
}

var urlCredentials = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@`) })

// scrubURLCredentials masks user:password@ in URLs, where git remotes
// sometimes carry a token.
func scrubURLCredentials(text string) string {
	return urlCredentials().ReplaceAllString(text, "${1}***@")
}

var shellSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

func shellQuote(s string) string {
	if s != "" && shellSafe().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ambientAllowed are the variables of helm's own environment that reach
// gh and git: what a program needs to run (PATH, HOME, locale, temporary
// directory, terminal), to reach a server (proxies, CA certificates, the
// SSH agent) and to find git's configuration — and nothing that carries
// a credential. Entries ending in "*" are prefixes.
var ambientAllowed = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ", "TERM", "COLORTERM",
	"LANG", "LANGUAGE", "LC_*",
	"TMPDIR", "TMP", "TEMP",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GIT_SSH", "GIT_SSH_COMMAND",
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GNUPGHOME",
	// Windows.
	"SYSTEMROOT", "SystemRoot", "WINDIR", "windir", "COMSPEC", "ComSpec", "PATHEXT",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "ProgramData", "HOMEDRIVE", "HOMEPATH",
}

// AmbientEnv returns the entries of env (KEY=VALUE, as os.Environ gives
// them) that gh and git may see: those ambientAllowed names, and those
// pass names. Everything else is dropped — an ambient GH_TOKEN,
// GITHUB_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN or GH_HOST
// among them, so that each identity talks to GitHub with its own
// configuration only (GH_CONFIG_DIR), never with credentials it happens
// to share with the process.
func AmbientEnv(env []string, pass []string) []string {
	var out []string
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if slices.Contains(pass, k) || allowedAmbient(k) {
			out = append(out, kv)
		}
	}
	return out
}

func allowedAmbient(k string) bool {
	for _, a := range ambientAllowed {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(k, p) {
				return true
			}
		} else if k == a {
			return true
		}
	}
	return false
}
