package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/sighting"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// harness runs helm in-process with its own home, working directory,
// environment, clock and ids, so tests run in parallel.
type harness struct {
	t    *testing.T
	Home string
	Dir  string
	Env  map[string]string
	// ExtraEnv is passed to gh and git (Main.ExtraEnv).
	ExtraEnv []string
	// Stdin is the next run's standard input.
	Stdin string
	// SystemPolicy is the system policy's path ("" for none: a machine's
	// /etc/helm/policy.toml is not the test's).
	SystemPolicy string
	// ActionKinds, when set, are the action kinds in place of
	// actions.Kinds() (Main.actionKinds).
	ActionKinds []actions.Kind

	mu  sync.Mutex
	now time.Time
	ids int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{
		t: t, Home: filepath.Join(root, "helm-home"), Dir: filepath.Join(root, "work"),
		now: time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC),
	}
	require.NoError(t, os.MkdirAll(h.Dir, 0o755))
	h.Env = map[string]string{"HELM_HOME": h.Home, "HOME": filepath.Join(root, "user-home")}
	return h
}

// at sets the clock to 17:MM on 2026-02-26 (DESIGN.md's example day).
func (h *harness) at(min int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = time.Date(2026, 2, 26, 17, min, 0, 0, time.UTC)
}

func (h *harness) main() *Main {
	return &Main{
		Getenv:       func(k string) string { return h.Env[k] },
		Dir:          h.Dir,
		ExtraEnv:     h.ExtraEnv,
		systemPolicy: &h.SystemPolicy,
		actionKinds:  h.ActionKinds,
		Options: &helm.Options{
			NoSync: true,
			Clock: func() time.Time {
				h.mu.Lock()
				defer h.mu.Unlock()
				return h.now
			},
			NewID: func() uuid.UUID {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.ids++
				return uuid.MustParse(fmt.Sprintf("a3b%05x-0000-4000-8000-%012d", h.ids, h.ids))
			},
		},
	}
}

// result is what one run printed and how it ended.
type result struct {
	Stdout, Stderr string
	Code           int
	Err            error
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// run runs helm with args and reports the error as main does.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	stdin := strings.NewReader(h.Stdin)
	h.Stdin = ""
	err := h.main().Run(context.Background(), args, stdin, &stdout, &stderr)
	code := ReportError(&stderr, err)
	return result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code, Err: err}
}

// ok runs helm and requires success.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, 0, r.Code, "helm %s\n%s", strings.Join(args, " "), r)
	return r.Stdout
}

// fails runs helm and requires exit status code.
func (h *harness) fails(code int, args ...string) result {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, code, r.Code, "helm %s\n%s", strings.Join(args, " "), r)
	require.True(h.t, strings.HasPrefix(r.Stderr, "helm: ") || strings.HasPrefix(r.Stderr, `{"error":`),
		"errors start with helm: (or are a JSON object, under --json): %q", r.Stderr)
	return r
}

// start starts a voyage as john-agent with role coder, method human set in
// the environment, and returns its id.
func (h *harness) start(intent string, extra ...string) string {
	h.t.Helper()
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "human"
	args := append([]string{"voyage", "new", "--as", "john-agent"}, extra...)
	id := strings.TrimSpace(h.ok(append(args, intent)...))
	require.Len(h.t, id, 36)
	return id
}

func (h *harness) writeFile(name, content string) {
	h.t.Helper()
	path := filepath.Join(h.Dir, name)
	require.NoError(h.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(h.t, os.WriteFile(path, []byte(content), 0o644))
}

// commandTree builds the command tree as a run does.
func commandTree(h *harness) *cobra.Command {
	return newRootCmd(&app{main: h.main()}, nil)
}

func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var visit func(path []string, c *cobra.Command)
	visit = func(path []string, c *cobra.Command) {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string(nil), path...), flag)
			out := h.ok(args...)
			assert.Contains(t, out, "Usage: helm ", "helm %v", args)
			assert.Contains(t, out, "Example:\n  helm", "helm %v", args)
			assert.Contains(t, out, "--voyage ID", "global flags are listed: helm %v", args)
		}
		// help COMMAND... says the same as COMMAND --help.
		if len(path) > 0 {
			assert.Equal(t, h.ok(append(path, "--help")...), h.ok(append([]string{"help"}, path...)...))
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				visit(append(append([]string(nil), path...), s.Name()), s)
			}
		}
	}
	visit(nil, commandTree(h))
}

func TestHelpListsEveryDesignCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{
		{"voyage", "new"}, {"voyage", "list"}, {"voyage", "show"}, {"voyage", "verify"},
		{"observe", "file-contents"}, {"observe", "directory-tree"}, {"observe", "rust-project"},
		{"observe", "go-project"}, {"observe", "github-pr"}, {"observe", "github-issue"},
		{"observe", "github-repo"}, {"observe", "context"}, {"observe", "command"}, {"observe", "web"},
		{"slate", "list"}, {"slate", "erase", "rust-project"}, {"slate", "clear"},
		{"bearing"}, {"bearing", "challenge"},
		{"action", "commit"}, {"action", "push"}, {"action", "create-pull-request"},
		{"action", "merge-pull-request"}, {"action", "comment-pull-request"},
		{"action", "reply-pull-request"}, {"action", "request-review"},
		{"action", "create-issue"}, {"action", "close-issue"}, {"action", "comment-issue"},
		{"complete"}, {"log"}, {"undo"},
	} {
		out := h.ok(append(args, "--help")...)
		assert.Contains(t, out, "Usage: helm "+strings.Join(args, " "), "helm %v --help", args)
	}
	assert.Contains(t, h.ok("action", "commit", "--help"), "--dry-run")
	assert.Contains(t, h.ok("observe", "rust-project", "--help"), "--out FILE")
	assert.Contains(t, h.ok("voyage", "list", "--help"), `(default "active")`)
}

func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("usage")
	tests := []struct {
		name string
		args []string
		want string // in stderr
		try  string // the Try: line
	}{
		{"unknown command", []string{"sail"}, `unknown command "sail"`, "Try: helm --help"},
		{"did you mean", []string{"obsrve", "context", "hi"}, `unknown command "obsrve" for helm; did you mean "observe"?`, "Try: helm observe context hi"},
		{"group without command", []string{"voyage"}, "voyage: missing command", "Try: helm voyage --help"},
		{"unknown subcommand", []string{"observe", "telescope"}, `unknown command "telescope"`, "Try: helm observe --help"},
		{"unknown flag", []string{"log", "--colour"}, "helm: log: unknown flag: --colour\n", "Try: helm log --help"},
		{"bool flag of another command", []string{"log", "--dry-run"}, "unknown flag: --dry-run", "Try: helm log --help"},
		{"missing flag value", []string{"voyage", "list", "--status"}, "flag needs an argument", "Try: helm voyage list --help"},
		{"missing intent", []string{"voyage", "new", "--as", "x"}, "INTENT", "Try: helm voyage new --help"},
		{"bad status", []string{"voyage", "list", "--status", "sunk"}, "status \"sunk\"", ""},
		{"bad kind", []string{"voyage", "new", "--as", "x", "--kind", "piracy", "loot"}, `kind "piracy"`, ""},
		{"bad number", []string{"observe", "github-pr", "forty-five", "--repo", "o/r"}, "positive number", "Try: helm observe github-pr --help"},
		{"missing path", []string{"observe", "rust-project"}, "helm: observe rust-project: missing PATH\n", "Try: helm observe rust-project --help"},
		{"file-contents without files", []string{"observe", "file-contents"}, "--read FILE", ""},
		{"bad url", []string{"observe", "web", "ftp://example.com"}, "invalid mark", ""},
		{"missing reading", []string{"bearing"}, "--reading TEXT is required", "Try: helm bearing --help"},
		{"missing commit message", []string{"action", "commit"}, "helm: action commit: --message MSG is required\n", "Try: helm action commit --help"},
		{"empty commit message", []string{"action", "commit", "--message", " "}, "invalid action", "Try: helm action commit --help"},
		{"bad outcome", []string{"complete", "--outcome", "sunk"}, `outcome "sunk"`, ""},
		{"help for unknown", []string{"help", "sail"}, `unknown command "sail"`, ""},
		{"help for a typo", []string{"help", "voyage", "lst"}, `did you mean "list"?`, "Try: helm voyage --help"},
		{"unknown shell", []string{"completion", "tcsh"}, `unknown shell "tcsh"`, "Try: helm completion --help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.fails(2, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			if tt.try != "" {
				assert.Contains(t, r.Stderr, "\n"+tt.try+"\n")
			}
			assert.Empty(t, r.Stdout, "errors go to stderr only")
		})
	}
}

func TestGlobalFlagsBeforeOrAfterCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	delete(h.Env, "HELM_HOME")
	home := filepath.Join(t.TempDir(), "elsewhere")
	for _, args := range [][]string{
		{"--home", home, "--as", "ann", "voyage", "new", "one"},
		{"voyage", "--home", home, "new", "--as", "ann", "two"},
		{"voyage", "new", "three", "--home=" + home, "--as=ann"},
		{"--json", "--home", home, "voyage", "new", "--as", "ann", "four"},
	} {
		h.ok(args...)
	}
	list := h.ok("voyage", "list", "--home", home, "--json")
	for _, intent := range []string{"one", "two", "three", "four"} {
		assert.Contains(t, list, `"intent": "`+intent+`"`)
	}
	// A command's own flag before the command word is accepted too.
	h.ok("--home", home, "--status", "all", "voyage", "list")
}

// TestFlagsAgreeAcrossCommands: the command-word scan (cobra's, helped
// by hintValueless) needs every flag of one name to agree on whether it
// takes a value.
func TestFlagsAgreeAcrossCommands(t *testing.T) {
	t.Parallel()
	takesValue := map[string]bool{}
	walk(commandTree(newHarness(t)), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			v := f.NoOptDefVal == ""
			// The CLI contract names both `log --evidence` (a switch) and
			// `judge --evidence N,...`; each is given after its command's
			// words, where the leaf parses it.
			if f.Name == "evidence" {
				return
			}
			if prev, ok := takesValue[f.Name]; ok {
				assert.Equal(t, prev, v, "flag --%s of %s", f.Name, c.CommandPath())
			}
			takesValue[f.Name] = v
		})
	})
}

// TestValuelessFlagBeforeCommandWord: a leaf's boolean flag given before
// the command words does not swallow the next word as its value.
func TestValuelessFlagBeforeCommandWord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("flags first")
	for _, args := range [][]string{
		{"action", "--dry-run", "commit", "-m", "x"},
		{"--dry-run", "action", "commit", "-m", "x"},
	} {
		assert.Contains(t, h.ok(args...), "Dry run for voyage a3b00001", "helm %v", args)
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"usage", &usageError{Err: errors.New("x")}, 2},
		{"invalid", fmt.Errorf("start: %w", helm.ErrInvalid), 2},
		{"missing who", helm.ErrMissingWho, 2},
		{"no voyage", helm.ErrNoVoyage, 2},
		{"ambiguous", &helm.AmbiguousError{Prefix: "a", Candidates: []string{"a1", "a2"}}, 2},
		{"no such bearing", helm.ErrNoSuchBearing, 2},
		{"not on slate", helm.ErrNotOnSlate, 2},
		{"invalid mark", fmt.Errorf("x: %w", marks.ErrInvalid), 2},
		{"invalid action", fmt.Errorf("x: %w", actions.ErrInvalid), 2},
		{"empty slate", helm.ErrEmptySlate, 1},
		{"completed", &helm.VoyageError{Op: "observe", Voyage: "v", Err: helm.ErrVoyageCompleted}, 1},
		{"action failed, recorded", &helm.VoyageError{Op: "perform commit", Voyage: "v", Err: &helm.ActionError{Kind: "commit", Err: &runner.ExitError{Cmd: "git commit", ExitCode: 1}}}, 3},
		{"action failed, outcome not recorded", &helm.VoyageError{Op: "perform push", Voyage: "v", Err: &helm.ActionError{Kind: "push", Err: errors.New("disk full")},
			Hint: hint.Hint{Kind: hint.CheckWorld}}, 1},
		{"action performed, outcome not recorded", &helm.VoyageError{Op: "perform push", Voyage: "v", Err: errors.New("disk full"), Hint: hint.Hint{Kind: hint.CheckWorld}}, 1},
		{"observed, but it failed", &observedFailures{Failures: []sighting.Failure{{Kind: sighting.FailureMissing, Message: "a could not be read"}}}, 3},
		{"interrupted after observing a failure", &interruptedError{Err: &observedFailures{}}, 130},
		{"damaged", &damagedError{Voyage: "v"}, 1},
		{"other", errors.New("disk full"), 1},
		{"cancelled, not by a signal", context.Canceled, 1},
		{"interrupted", &interruptedError{Err: fmt.Errorf("observe: %w", context.Canceled)}, 130},
		{"interrupted while failing", &interruptedError{Err: helm.ErrInvalid}, 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ExitCode(tt.err))
		})
	}
}

func TestReportErrorShowsProgramMessage(t *testing.T) {
	t.Parallel()
	err := &helm.VoyageError{Op: "perform commit", Voyage: "a3b0fc12-0000-4000-8000-000000000001", Err: &helm.ActionError{
		Kind: "commit",
		Err:  fmt.Errorf("commit: %w", &runner.ExitError{Cmd: "git commit -m x", ExitCode: 1, Stdout: "nothing to commit, working tree clean"}),
	}}
	var buf bytes.Buffer
	assert.Equal(t, 3, ReportError(&buf, err), "recorded as a failed action")
	assert.Equal(t, "helm: commit failed on voyage a3b0fc12 (recorded as a failed action): git commit -m x exited with status 1\nnothing to commit, working tree clean\n", buf.String())
}

// TestReportErrorShowsAProgramsTabsAsWritten: git indents its advice and
// file lists with tabs; they reach the terminal as tabs, not as \t,
// while an escape in the same message is still made visible.
func TestReportErrorShowsAProgramsTabsAsWritten(t *testing.T) {
	t.Parallel()
	err := &helm.VoyageError{Op: "perform push", Voyage: "a3b0fc12-0000-4000-8000-000000000001", Err: &helm.ActionError{
		Kind: "push",
		Err:  fmt.Errorf("push: %w", &runner.ExitError{Cmd: "git push", ExitCode: 1, Stderr: "error: failed to push\nhint:\tpull first\x1b[2K"}),
	}}
	var buf bytes.Buffer
	assert.Equal(t, 3, ReportError(&buf, err))
	assert.Contains(t, buf.String(), "\nerror: failed to push\nhint:\tpull first\\x1b[2K\n")
	assert.NotContains(t, buf.String(), `\t`)
}

func TestReportErrorSaysWhatAnObservationFoundFailed(t *testing.T) {
	t.Parallel()
	err := &observedFailures{Failures: []sighting.Failure{
		{Kind: sighting.FailureMissing, Path: "gone\x1b[2K.rs", Message: "gone\x1b[2K.rs could not be read: no such file or directory"},
		{Kind: sighting.FailureExitStatus, ExitCode: 2, Message: "the command exited with status 2"},
	}}
	var buf bytes.Buffer
	assert.Equal(t, 3, ReportError(&buf, err))
	assert.Equal(t, "helm: observed, but gone\\x1b[2K.rs could not be read: no such file or directory\nhelm: observed, but the command exited with status 2\n", buf.String())
}

func itoa(n int) string { return fmt.Sprint(n) }

// writeHome writes a file in the helm home (config.toml, ...).
func (h *harness) writeHome(name, content string) {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(h.Home, 0o700))
	require.NoError(h.t, os.WriteFile(filepath.Join(h.Home, name), []byte(content), 0o600))
}
