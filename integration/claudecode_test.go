package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// claudeCodeVersion is the Claude Code CLI .ci/run installs from npm
// (@anthropic-ai/claude-code), the one these tests, the stand-in and the
// goldens under testdata/claudecode were written against.
const claudeCodeVersion = "2.1.332"

// findClaudeCode returns the Claude Code program: $HELM_CLAUDE_CODE (CI
// sets it, and then a missing one is a failure). Unset, the test is
// skipped, saying how to run it.
func findClaudeCode(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM_CLAUDE_CODE")
	if p == "" {
		t.Skip("HELM_CLAUDE_CODE is not set: the Claude Code tests are skipped. To run them: npm install --prefix DIR @anthropic-ai/claude-code@" +
			claudeCodeVersion + " && HELM_CLAUDE_CODE=DIR/node_modules/.bin/claude go test -run ClaudeCode ./... (in integration/)")
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("HELM_CLAUDE_CODE=%s is not a program (%v): install Claude Code with npm install --prefix DIR @anthropic-ai/claude-code@%s and point it at DIR/node_modules/.bin/claude", p, err, claudeCodeVersion)
	}
	out, err := exec.Command(p, "--version").Output()
	require.NoError(t, err, "%s --version", p)
	require.True(t, strings.HasPrefix(string(out), claudeCodeVersion+" "),
		"HELM_CLAUDE_CODE=%s is Claude Code %q, these tests were written against %s: install that version (npm install --prefix DIR @anthropic-ai/claude-code@%s)",
		p, strings.TrimSpace(string(out)), claudeCodeVersion, claudeCodeVersion)
	return p
}

// claudeRunTimeout bounds one run of claude -p: the scripted session
// takes seconds; a hang (a prompt nobody answers, a request the stand-in
// cannot serve) fails the test instead of holding CI.
const claudeRunTimeout = 3 * time.Minute

// claudeSession is a project directory, a home of its own and a model
// stand-in: the world one scripted Claude Code session runs in.
type claudeSession struct {
	t       *testing.T
	program string
	root    string // holds the rest
	home    string // HOME: Claude Code's ~/.claude (settings, transcripts) lives here
	tmp     string // TMPDIR
	project string // the working directory (cwd of the session)
	model   *modelServer
	// egress stands as the HTTP(S) proxy of every run: a request that
	// is not for the stand-in on loopback reaches it, is refused and
	// recorded, so a test sees any traffic Claude Code tries beyond it.
	egress *egressRecorder
	// extraEnv is added to every run's environment (and so the hooks').
	extraEnv []string
}

// claudeResult is what claude -p --output-format json prints (the fields
// the tests read).
type claudeResult struct {
	Type              string  `json:"type"`
	Subtype           string  `json:"subtype"`
	IsError           bool    `json:"is_error"`
	Result            string  `json:"result"`
	NumTurns          int     `json:"num_turns"`
	SessionID         string  `json:"session_id"`
	TotalCostUSD      float64 `json:"total_cost_usd"`
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolUseID string         `json:"tool_use_id"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
	Usage map[string]any  `json:"usage"`
	Raw   json.RawMessage `json:"-"`
}

// newClaudeSession makes the directories and starts the stand-in with
// the script for its project.
func newClaudeSession(t *testing.T, program string, script func(project string) []modelTurn) *claudeSession {
	t.Helper()
	root := t.TempDir()
	s := &claudeSession{
		t:       t,
		program: program,
		root:    root,
		home:    filepath.Join(root, "home"),
		tmp:     filepath.Join(root, "tmp"),
		project: filepath.Join(root, "project"),
	}
	for _, d := range []string{s.home, s.tmp, s.project} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	s.model = newModelServer(t, script(s.project))
	s.egress = newEgressRecorder(t)
	return s
}

// env is the whole environment of a claude run: nothing of the test
// process's own but PATH, so no setting, key or proxy of the machine
// leaks in. Claude Code 2.1.332 honours each of these (its binary names
// them): no update check, telemetry, error reports or other traffic
// beyond the model endpoint.
func (s *claudeSession) env() []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.home,
		"TMPDIR=" + s.tmp,
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"ANTHROPIC_BASE_URL=" + s.model.URL(),
		"HTTPS_PROXY=" + s.egress.URL(), "HTTP_PROXY=" + s.egress.URL(),
		"https_proxy=" + s.egress.URL(), "http_proxy=" + s.egress.URL(),
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"ANTHROPIC_API_KEY=sk-ant-stand-in",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}, s.extraEnv...)
}

// The tools the session pre-approves: PreToolUse hooks still run first.
const claudeAllowedTools = "Bash,Read,Edit,Write,Agent"

// run runs claude -p prompt with args in the project and returns its
// result.
func (s *claudeSession) run(prompt string, args ...string) claudeResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), claudeRunTimeout)
	defer cancel()
	all := append([]string{"-p", prompt, "--output-format", "json", "--allowedTools", claudeAllowedTools}, args...)
	cmd := exec.CommandContext(ctx, s.program, all...)
	cmd.Dir = s.project
	cmd.Env = s.env()
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	s.t.Logf("claude -p %q %s: %v in %s\nstdout: %s\nstderr: %s", prompt, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), stdout.String(), stderr.String())
	if ctx.Err() != nil {
		s.t.Fatalf("claude -p did not finish within %s: the stand-in received %d requests", claudeRunTimeout, len(s.model.Requests()))
	}
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		require.NoError(s.t, err)
	}
	var res claudeResult
	require.NoError(s.t, json.Unmarshal(stdout.Bytes(), &res), "claude -p prints one JSON result: %s", stdout.String())
	res.Raw = append(json.RawMessage(nil), stdout.Bytes()...)
	require.NoError(s.t, err, "claude -p exits 0: %s", stderr.String())
	return res
}

// egressRecorder is a proxy that lets nothing through and records what
// was asked of it (CONNECT host:port, or the URL of a plain request).
type egressRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newEgressRecorder(t *testing.T) *egressRecorder {
	e := &egressRecorder{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, r.Method+" "+r.Host+r.URL.Path)
		e.mu.Unlock()
		http.Error(w, "no traffic beyond the model stand-in in this test", http.StatusForbidden)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *egressRecorder) URL() string { return e.srv.URL }

// Seen returns what was asked of the proxy.
func (e *egressRecorder) Seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// transcriptDir is where Claude Code keeps the project's session files:
// ~/.claude/projects/<cwd with every / (and .) as ->.
func (s *claudeSession) transcriptDir() string {
	return filepath.Join(s.home, ".claude", "projects", projectKey(s.project))
}

func projectKey(dir string) string {
	return strings.NewReplacer("/", "-", ".", "-").Replace(dir)
}
