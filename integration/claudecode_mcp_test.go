package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The placeholders of the snippets under docs/mcp/ (docs/mcp.md).
const (
	snippetHelm = "/home/you/go/bin/helm"
	snippetHome = "/home/you/.helm"
)

// TestClaudeCodeTakesTheDocumentedMCPSetup: docs/mcp.md's Claude Code
// setup, run through the real Claude Code CLI, offline: the documented
// claude mcp add line (docs/mcp/claude-code-add.sh, its placeholders
// replaced) writes the project's .mcp.json as docs/mcp/claude-code.mcp.json
// shows it, and once the project's servers are approved, claude mcp list
// starts helm from it and finds it connected (it answered initialize).
func TestClaudeCodeTakesTheDocumentedMCPSetup(t *testing.T) {
	program := findClaudeCode(t)
	bin := buildHelm(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	project := filepath.Join(root, "project")
	helmHome := filepath.Join(root, "helm-home")
	for _, d := range []string{home, project} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	project, err := filepath.EvalSymlinks(project) // as Claude Code names it in ~/.claude.json
	require.NoError(t, err)
	fill := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, snippetHelm, bin), snippetHome, helmHome)
	}
	claude := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), claudeRunTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, program, args...)
		cmd.Dir = project
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + root,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "GORACE=atexit_sleep_ms=0"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "claude %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}

	line, err := os.ReadFile(filepath.Join("..", "docs", "mcp", "claude-code-add.sh"))
	require.NoError(t, err)
	words := strings.Fields(fill(string(line)))
	require.Equal(t, []string{"claude", "mcp", "add"}, words[:3], "docs/mcp/claude-code-add.sh is a claude mcp add line")
	claude(words[1:]...)
	got, err := os.ReadFile(filepath.Join(project, ".mcp.json"))
	require.NoError(t, err, "claude mcp add --scope project writes .mcp.json")
	want, err := os.ReadFile(filepath.Join("..", "docs", "mcp", "claude-code.mcp.json"))
	require.NoError(t, err)
	assert.JSONEq(t, fill(string(want)), string(got), "the .mcp.json docs/mcp.md shows is what claude mcp add writes")

	assert.Contains(t, claude("mcp", "list"), "Pending approval", "a project's servers wait for the person's approval")
	// What approving them in claude records (the trust dialog, then the
	// .mcp.json servers enabled), as claude itself writes it.
	cfgPath := filepath.Join(home, ".claude.json")
	cfg := map[string]any{}
	if data, err := os.ReadFile(cfgPath); err == nil {
		require.NoError(t, json.Unmarshal(data, &cfg))
	}
	projects, _ := cfg["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	p, _ := projects[project].(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	p["hasTrustDialogAccepted"], p["enabledMcpjsonServers"] = true, []string{"helm"}
	projects[project], cfg["projects"] = p, projects
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgPath, data, 0o600))

	list := claude("mcp", "list")
	assert.Contains(t, list, "helm: "+bin+" mcp - ✔ Connected", "claude started helm from .mcp.json and it answered")
}
