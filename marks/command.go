package marks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("command", func() Mark { return &Command{} })
}

const (
	// DefaultCommandTimeout bounds a command when Env.CommandTimeout is
	// zero: long enough for a test suite, short enough that a hung program
	// does not hang the voyage.
	DefaultCommandTimeout = 2 * time.Minute
	// CommandOutputCap is how many bytes of each output stream a command
	// sighting keeps: its first and last halves around a
	// "… [truncated N bytes] …" marker. A megabyte holds any useful log
	// head and tail while keeping the artifact small.
	CommandOutputCap = 1 << 20
	// commandWaitDelay is how long after the program is killed (or exits)
	// helm waits for children still holding its output pipes open.
	commandWaitDelay = 2 * time.Second
)

// Command runs a program and records how it ended: exit code, standard
// output and error (each capped at CommandOutputCap), and duration. A
// non-zero exit is an observation all the same; so is a program that
// cannot start (the sighting's Error says why) or one killed at the
// timeout (TimedOut, with the timeout in TimeoutMS): the sighting's
// Failures list them. What the program started in its process group and
// left running when it ended is killed (on Unix).
//
// The program's environment is the process's without the variables whose
// names look secret (redact.StripEnv: GH_TOKEN, AWS_SECRET_ACCESS_KEY,
// MY_API_KEY, ...), save those Env.PassEnv names; it is never recorded.
type Command struct {
	// Dir is the working directory, cleaned; empty means Env.Dir. A
	// relative Dir resolves against Env.Dir.
	Dir string `json:"dir,omitempty"`
	Anchor
	// Program is run as exec.Command runs it: looked up in PATH unless it
	// contains a slash, in which case it is relative to Dir.
	Program string `json:"program"`
	// Args are the program's arguments, without the program itself.
	Args []string `json:"args,omitzero"`
}

// NewCommand returns a mark running argv[0] with the arguments argv[1:] in
// dir (empty for Env.Dir).
func NewCommand(dir string, argv ...string) (*Command, error) {
	const kind = "command"
	if err := checkArgv(argv); err != nil {
		return nil, err
	}
	m := &Command{Program: argv[0]}
	if dir != "" {
		d, err := cleanPath(kind, "dir", dir)
		if err != nil {
			return nil, err
		}
		m.Dir = d
	}
	if len(argv) > 1 {
		m.Args = append([]string(nil), argv[1:]...)
	}
	return m, nil
}

// checkArgv checks a program and its arguments: a program is named, and
// every word is valid UTF-8 (it is stored as text: JSON would alter other
// bytes, and the log would name a command other than the one run) without
// NUL bytes (no program can receive them).
func checkArgv(argv []string) error {
	const kind = "command"
	if len(argv) == 0 || argv[0] == "" {
		return invalidf(kind, "no program to run (give the program and its arguments, as in: go test ./...)")
	}
	for i, a := range argv {
		what := "program"
		if i > 0 {
			what = fmt.Sprintf("argument %d", i)
		}
		if strings.IndexByte(a, 0) >= 0 {
			return invalidf(kind, "%s %q contains a NUL byte", what, a)
		}
		if err := safetext.Check(fmt.Sprintf("%s %q", what, a), a); err != nil {
			return invalidf(kind, "%v", err)
		}
	}
	return nil
}

// Validate applies NewCommand's checks to m, which may have been decoded
// rather than constructed.
func (m *Command) Validate() error {
	if err := checkArgv(append([]string{m.Program}, m.Args...)); err != nil {
		return err
	}
	if m.Dir != "" {
		if _, err := cleanPath(m.Kind(), "dir", m.Dir); err != nil {
			return err
		}
	}
	return m.Anchor.validate(m.Kind())
}

// Kind returns "command".
func (*Command) Kind() string { return "command" }

// Key is `command:"DIR"` followed by the quoted program and arguments; an
// empty Dir and "." are one key.
func (m *Command) Key() string {
	var b strings.Builder
	b.WriteString("command:")
	b.WriteString(quote(keyPath(m.abs(m.Dir))))
	b.WriteString(" ")
	b.WriteString(quote(m.Program))
	for _, a := range m.Args {
		b.WriteString(" ")
		b.WriteString(quote(a))
	}
	return b.String()
}

// String renders "Command: go test ./..." with " (in DIR)" when a directory
// was given; arguments holding spaces or quotes are quoted.
func (m *Command) String() string {
	words := make([]string, 0, 1+len(m.Args))
	for _, w := range append([]string{m.Program}, m.Args...) {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\") {
			w = quote(w)
		}
		words = append(words, w)
	}
	s := "Command: " + shorten(strings.Join(words, " "), 100)
	if m.Dir != "" && m.Dir != "." {
		s += " (in " + m.Dir + ")"
	}
	return s
}

// Observe runs the program. It returns an error only when ctx is done
// before the program finishes; every other outcome is in the sighting.
// With Env.Progress set, the program's output is copied there as it comes,
// besides being captured.
func (m *Command) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	timeout := DefaultCommandTimeout
	if env != nil && env.CommandTimeout > 0 {
		timeout = env.CommandTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, m.Program, m.Args...)
	cmd.Dir = env.resolve(m.abs(m.Dir))
	var pass []string
	if env != nil {
		pass = env.PassEnv
	}
	cmd.Env = redact.StripEnv(os.Environ(), pass)
	stdout := &capBuffer{limit: CommandOutputCap}
	stderr := &capBuffer{limit: CommandOutputCap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if env != nil && env.Progress != nil {
		p := &progress{w: env.Progress}
		cmd.Stdout, cmd.Stderr = &tee{capture: stdout, progress: p}, &tee{capture: stderr, progress: p}
	}
	cmd.WaitDelay = commandWaitDelay
	killProcessGroup(cmd)

	s := &sighting.Command{TimeoutMS: timeout.Milliseconds()}
	// exec would blame the program for a directory it cannot enter
	// ("fork/exec /usr/bin/go: no such file or directory"): look first.
	if reason := dirProblem(cmd.Dir); reason != "" {
		s.Dir, s.DirError = keyPath(m.Dir), reason
		s.Error = fmt.Sprintf("directory %s: %s", s.Dir, reason)
		return s, nil
	}
	start := time.Now()
	err := cmd.Run()
	s.DurationMS = time.Since(start).Milliseconds()
	killLeftovers(cmd)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("command %s: %w", m.Program, ctx.Err())
	}
	s.Stdout, s.StdoutTruncatedBytes = stdout.String(), stdout.dropped
	s.Stderr, s.StderrTruncatedBytes = stderr.String(), stderr.dropped

	var exitErr *exec.ExitError
	switch {
	case runCtx.Err() != nil:
		s.TimedOut = true
		s.Error = fmt.Sprintf("killed after the %s timeout", timeout)
	case err == nil || errors.As(err, &exitErr) && exitErr.Exited():
		code := cmd.ProcessState.ExitCode()
		s.ExitCode = &code
	case errors.As(err, &exitErr):
		s.Error = exitErr.Error() // killed by a signal, such as "signal: killed"
		if sig, ok := strings.CutPrefix(s.Error, "signal: "); ok {
			s.Signal = sig
		}
	case errors.Is(err, exec.ErrWaitDelay):
		code := cmd.ProcessState.ExitCode()
		s.ExitCode = &code
		s.Error = "output pipes still open after exit (a background child kept them)"
	default:
		s.Error = err.Error() // could not start
	}
	return s, nil
}

// dirProblem says why dir cannot be a program's working directory ("no
// such file or directory", "not a directory"), or "" when it can as far as
// a look tells.
func dirProblem(dir string) string {
	if dir == "" {
		return ""
	}
	info, err := os.Stat(dir)
	switch {
	case err != nil:
		return errorMessage(err)
	case !info.IsDir():
		return "not a directory"
	}
	return ""
}

// tee captures a stream and copies it to the progress writer too.
type tee struct {
	capture  *capBuffer
	progress *progress
}

func (t *tee) Write(p []byte) (int, error) {
	t.progress.write(p)
	return t.capture.Write(p)
}

// progress is Env.Progress as both output streams share it: one write at
// a time, and a writer that fails (a closed terminal) is given up on
// without failing the program or its capture.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	failed bool
}

func (p *progress) write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return
	}
	if _, err := p.w.Write(b); err != nil {
		p.failed = true
	}
}
