package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectorVersion is the MCP Inspector .ci/run installs, the one this
// test was written against.
const inspectorVersion = "2.12.0"

// findInspector returns the MCP Inspector's program: $HELM_MCP_INSPECTOR
// (CI sets it, and then a missing one is a failure). Unset, the test is
// skipped, saying how to run it.
func findInspector(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM_MCP_INSPECTOR")
	if p == "" {
		t.Skip("HELM_MCP_INSPECTOR is not set: the MCP Inspector test is skipped. To run it: npm install --prefix DIR @modelcontextprotocol/inspector@" +
			inspectorVersion + " && HELM_MCP_INSPECTOR=DIR/node_modules/.bin/mcp-inspector go test -run Inspector ./... (in integration/)")
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("HELM_MCP_INSPECTOR=%s is not a program (%v): install the Inspector with npm install --prefix DIR @modelcontextprotocol/inspector@%s and point it at DIR/node_modules/.bin/mcp-inspector", p, err, inspectorVersion)
	}
	return p
}

// inspector runs the Inspector's command-line mode against helm mcp,
// registered as the README tells a host to (config: an mcpServers file),
// and returns its stdout, stderr and status.
type inspector struct {
	t       *testing.T
	program string
	config  string
	dir     string
}

func (in *inspector) run(args ...string) (string, string, int) {
	in.t.Helper()
	all := []string{"--cli", "--config", in.config, "--server", "helm", "--cwd", in.dir}
	cmd := exec.Command(in.program, append(all, args...)...)
	cmd.Dir = in.dir
	cmd.Env = append(os.Environ(), "MCP_INSPECTOR_SECRET_STORE=memory")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else {
		require.NoError(in.t, err)
	}
	in.t.Logf("mcp-inspector %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return stdout.String(), stderr.String(), code
}

// readmeEntry returns the mcpServers entry the README shows, as a host's
// configuration holds it.
func readmeEntry(t *testing.T) map[string]any {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "## Agents over MCP")
	require.True(t, ok, "the README has its MCP section")
	_, rest, ok = strings.Cut(rest, "```json\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal([]byte(block), &cfg), block)
	return cfg
}

// call calls tool with args (key=value, a value that reads as JSON is
// JSON) and returns the result's structured content.
func (in *inspector) call(tool string, args ...string) map[string]any {
	in.t.Helper()
	out, _, code := in.run(append([]string{"--method", "tools/call", "--tool-name", tool, "--tool-arg"}, args...)...)
	require.Equal(in.t, 0, code, "%s %v", tool, args)
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	require.NoError(in.t, json.Unmarshal([]byte(out), &res), out)
	require.False(in.t, res.IsError, out)
	return res.StructuredContent
}

// TestInspectorDrivesHelmMCP: a client helm did not write, the MCP
// Inspector's CLI mode, starts helm mcp from the README's mcpServers
// entry, lists its tools (their schemas pass its portability check) and
// records a whole voyage through them; helm log then tells that voyage.
func TestInspectorDrivesHelmMCP(t *testing.T) {
	program := findInspector(t)
	t.Parallel()
	helmBin := buildHelm(t)

	// The project the agent works on: a git repository with a change
	// staged.
	work := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "claude-1")
	git("config", "user.email", "claude-1@example.com")
	require.NoError(t, os.WriteFile(filepath.Join(work, "README.md"), []byte("# widget\n\nA widget that crashes on init.\n"), 0o644))
	git("add", "README.md")
	git("commit", "-q", "-m", "widget")
	require.NoError(t, os.WriteFile(filepath.Join(work, "widget.go"), []byte("package widget\n\n// Init checks for nil.\nfunc Init() {}\n"), 0o644))
	git("add", "widget.go")

	// The README's mcpServers entry, with this build of helm and a home
	// of the test's own.
	cfg := readmeEntry(t)
	entry := cfg["mcpServers"].(map[string]any)["helm"].(map[string]any)
	entry["command"] = helmBin
	home := filepath.Join(t.TempDir(), "helm-home")
	entry["env"].(map[string]any)["HELM_HOME"] = home
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	config := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(config, data, 0o600))
	in := &inspector{t: t, program: program, config: config, dir: work}

	stdout, stderr, code := in.run("--strict", "--method", "tools/list")
	require.Equal(t, 0, code, "tools/list with --strict: no schema portability error")
	assert.NotContains(t, stderr, "Warning", "no schema portability warning either")
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list), stdout)
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
		assert.NotEmpty(t, tool.Description, tool.Name)
		assert.Equal(t, "object", tool.InputSchema["type"], tool.Name)
	}
	for _, want := range []string{"voyage_start", "observe", "bearing_take", "log", "action", "complete"} {
		assert.True(t, names[want], "the Inspector lists %s (the default tools)", want)
	}
	assert.False(t, names["commit"], "the actions are one tool by default (helm mcp --tools all lists each)")

	// A whole voyage, through the Inspector alone.
	v := in.call("voyage_start", "intent=Try helm through the MCP Inspector")
	id, _ := v["id"].(string)
	require.Len(t, id, 36, "%v", v)
	assert.Equal(t, "claude-1", v["identity"], "the identity the README's entry gives")
	o := in.call("observe", "voyage="+id[:8], "kind=context", "description=The user reports a crash on init")
	assert.Equal(t, "Context: The user reports a crash on init", o["label"])
	in.call("observe", "voyage="+id[:8], "kind=file-contents", `paths=["README.md"]`)
	b := in.call("bearing_take", "voyage="+id, "reading=The README says the widget crashes on init; start there.")
	assert.EqualValues(t, 1, b["n"])
	c := in.call("action", "voyage="+id, "kind=commit", `params={"message":"Check for nil in Init"}`, "why=the bearing says so")
	assert.Equal(t, "performed", c["action"].(map[string]any)["status"])
	in.call("note", "voyage="+id, "text=Committed; a person pushes it.")
	done := in.call("complete", "voyage="+id, "summary=Init checks for nil; committed.")
	assert.Equal(t, "completed", done["status"])

	// A bad call is a tool error the Inspector reports, and nothing more.
	stdout, _, code = in.run("--method", "tools/call", "--tool-name", "observe", "--tool-arg", "voyage="+id, "kind=telescope")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stdout, "helm: invalid input: observe")

	stdout, _, code = in.run("--method", "resources/read", "--uri", "helm://voyages/"+id+"/story")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "Reading: The README says the widget crashes on init")

	cmd := exec.Command(helmBin, "--voyage", id, "log")
	cmd.Env = []string{"HELM_HOME=" + home, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", log)
	t.Logf("helm log:\n%s", log)
	for _, want := range []string{
		"Voyage: Try helm through the MCP Inspector\n",
		"Identity: claude-1\n",
		"Status: completed",
		"── Bearing 1 ── ",
		"  Mark: Context: The user reports a crash on init\n",
		"  Mark: FileContents: README.md\n",
		"  Reading: The README says the widget crashes on init; start there.\n",
		"── Action 2 ── ",
		"  committed (",
		"── Note 3 ── ",
	} {
		assert.Contains(t, string(log), want)
	}
	verify := exec.Command(helmBin, "--voyage", id, "voyage", "verify")
	verify.Env = cmd.Env
	vout, err := verify.CombinedOutput()
	assert.NoError(t, err, "%s", vout)
}
