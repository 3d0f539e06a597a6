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

// inspector runs the Inspector's command-line mode against helm mcp, as
// an MCP host would start it (the Inspector passes the server only the
// environment given with -e), and returns its stdout, stderr and status.
type inspector struct {
	t          *testing.T
	program    string
	helm, home string
	dir        string
}

func (in *inspector) run(args ...string) (string, string, int) {
	in.t.Helper()
	all := []string{"--cli",
		"-e", "HELM_HOME=" + in.home, "-e", "HELM_IDENTITY=inspector-agent", "-e", "HELM_ROLE=coder", "-e", "HELM_METHOD=mcp-inspector",
		"--cwd", in.dir, in.helm, "mcp"}
	cmd := exec.Command(in.program, append(all, args...)...)
	cmd.Dir = in.dir
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
// Inspector's CLI mode, lists helm mcp's tools (their schemas pass its
// portability check) and records a voyage through them; helm log then
// tells that voyage.
func TestInspectorDrivesHelmMCP(t *testing.T) {
	program := findInspector(t)
	t.Parallel()
	work := t.TempDir()
	helmBin := filepath.Join(t.TempDir(), "helm")
	build := exec.Command("go", "build", "-o", helmBin, "./cmd/helm")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	require.NoError(t, os.WriteFile(filepath.Join(work, "README.md"), []byte("# widget\n\nA widget that crashes on init.\n"), 0o644))
	in := &inspector{t: t, program: program, helm: helmBin, home: filepath.Join(t.TempDir(), "helm-home"), dir: work}

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
	for _, want := range []string{"voyage_start", "observe", "bearing_take", "log", "commit", "push", "create_pull_request", "complete"} {
		assert.True(t, names[want], "the Inspector lists %s", want)
	}

	v := in.call("voyage_start", "intent=Try helm through the MCP Inspector")
	id, _ := v["id"].(string)
	require.Len(t, id, 36, "%v", v)
	assert.Equal(t, "inspector-agent", v["identity"])
	o := in.call("observe", "voyage="+id[:8], "kind=context", "description=The user reports a crash on init")
	assert.Equal(t, "Context: The user reports a crash on init", o["label"])
	in.call("observe", "voyage="+id[:8], "kind=file-contents", `paths=["README.md"]`)
	b := in.call("bearing_take", "voyage="+id, "reading=The README says the widget crashes on init; start there.")
	assert.EqualValues(t, 1, b["n"])

	// A bad call is a tool error the Inspector reports, and nothing more.
	stdout, _, code = in.run("--method", "tools/call", "--tool-name", "observe", "--tool-arg", "voyage="+id, "kind=telescope")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stdout, "helm: invalid input: observe")

	stdout, _, code = in.run("--method", "resources/read", "--uri", "helm://voyages/"+id+"/story")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "Reading: The README says the widget crashes on init")

	cmd := exec.Command(helmBin, "--voyage", id, "log")
	cmd.Env = []string{"HELM_HOME=" + in.home, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", log)
	t.Logf("helm log:\n%s", log)
	for _, want := range []string{
		"Voyage: Try helm through the MCP Inspector\n",
		"Identity: inspector-agent\n",
		"── Bearing 1 ── ",
		"  Mark: Context: The user reports a crash on init\n",
		"  Mark: FileContents: README.md\n",
		"  Reading: The README says the widget crashes on init; start there.\n",
	} {
		assert.Contains(t, string(log), want)
	}
	verify := exec.Command(helmBin, "--voyage", id, "voyage", "verify")
	verify.Env = cmd.Env
	vout, err := verify.CombinedOutput()
	assert.NoError(t, err, "%s", vout)
}
