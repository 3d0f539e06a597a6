package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ErrNotLoggedIn is gh failing because the identity has no credentials
// for the host (or they were refused): its gh configuration needs a
// login. The error is a *NotLoggedInError.
var ErrNotLoggedIn = errors.New("not logged in to GitHub")

// NotLoggedInError is gh refusing to work for an identity without a
// login: it names the identity and its gh configuration directory, which
// is where the login belongs (gh's own advice, to run its login, would
// log in the default configuration, not this one, and is left out).
type NotLoggedInError struct {
	Identity  string
	ConfigDir string
	Err       *ExitError
}

func (e *NotLoggedInError) Error() string {
	msg := fmt.Sprintf("%s: identity %s is not logged in to GitHub (its gh configuration is %s)", e.Err.Cmd, e.Identity, e.ConfigDir)
	if m := e.Err.Message(); m != "" {
		msg += ": " + m
	}
	return msg
}

func (e *NotLoggedInError) Unwrap() []error { return []error{ErrNotLoggedIn, e.Err} }

// ghLoginAdvice are gh's lines telling the user to log in its default
// way, and notLoggedIn what gh says when a login is missing or refused.
var (
	ghLoginAdvice = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^.*(gh auth login|populate the GH_TOKEN|GH_ENTERPRISE_TOKEN environment variable).*\n?`)
	})
	notLoggedIn = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`gh auth login|HTTP 401|Bad credentials|not logged (in)?to any GitHub hosts|authentication token`)
	})
)

// loginError turns gh's failure for want of a login into a
// *NotLoggedInError; other errors are returned as they are.
func (r *Runner) loginError(err error) error {
	var xe *ExitError
	if !errors.As(err, &xe) || !notLoggedIn().MatchString(xe.Stderr+"\n"+xe.Stdout) {
		return err
	}
	dir, _ := r.GHConfigDir()
	trimmed := *xe
	trimmed.Stderr = strings.TrimSpace(ghLoginAdvice().ReplaceAllString(xe.Stderr, ""))
	return &NotLoggedInError{Identity: r.Identity, ConfigDir: dir, Err: &trimmed}
}

// GHAttached runs gh for the identity with the caller's standard input,
// output and error, and prompts allowed: `gh auth login`, which may ask
// questions or read a token from stdin, runs this way. It returns gh's
// exit as an error (*exec.ExitError) when it fails.
func (r *Runner) GHAttached(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args ...string) error {
	c, err := r.GHCommand(nil, args...)
	if err != nil {
		return err
	}
	dir, _ := r.GHConfigDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the gh config directory of identity %s: %w", r.Identity, err)
	}
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return fmt.Errorf("%s: %w in PATH%s", c.Path, ErrProgramNotFound, installHint("gh"))
	}
	cmd := exec.CommandContext(ctx, path, c.Args...)
	cmd.Dir = c.Dir
	env := slices.DeleteFunc(append(AmbientEnv(os.Environ(), r.PassEnv), c.Env...), func(kv string) bool {
		return strings.HasPrefix(kv, "GH_PROMPT_DISABLED=")
	})
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	return cmd.Run()
}

// HostLogin is one host an identity is logged in to, as its gh
// configuration (hosts.yml) records it. The token is never read out.
type HostLogin struct {
	Host     string `json:"host"`
	User     string `json:"user,omitempty"`
	HasToken bool   `json:"has_token"`
}

// Logins returns the hosts the identity's gh configuration holds a login
// for, in the order of its hosts.yml; none when it has no configuration.
func (r *Runner) Logins() ([]HostLogin, error) {
	dir, err := r.GHConfigDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "hosts.yml")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	var out []HostLogin
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		h := HostLogin{Host: m[i].Value}
		if v := m[i+1]; v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				switch v.Content[j].Value {
				case "user":
					h.User = v.Content[j+1].Value
				case "oauth_token":
					h.HasToken = v.Content[j+1].Value != ""
				}
			}
		}
		out = append(out, h)
	}
	return out, nil
}
