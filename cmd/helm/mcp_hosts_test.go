//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// The placeholders the host snippets under docs/mcp/ carry, for the
// reader to replace (docs/mcp.md says with what).
const (
	snippetHelm = "/home/you/go/bin/helm"
	snippetHome = "/home/you/.helm"
)

// hostServer is one server of a host's MCP configuration.
type hostServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// TestMCPHostSnippetsParseAndServe: each host's snippet in docs/mcp/
// parses as that host reads it (Claude Code and Cursor: mcpServers; VS
// Code: servers, with type stdio), names helm by an absolute path with
// who it acts as, and the program it names, started as the host starts
// it, answers initialize, lists helm's tools and records a voyage.
func TestMCPHostSnippetsParseAndServe(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("helm")
	require.NoError(t, err, "TestMain puts helm on the PATH")
	tests := []struct {
		name     string
		file     string
		key      string // the servers' key
		wantType string // "" when the host takes none
	}{
		{"Claude Code .mcp.json", "claude-code.mcp.json", "mcpServers", "stdio"},
		{"Cursor .cursor/mcp.json", "cursor.mcp.json", "mcpServers", ""},
		{"VS Code .vscode/mcp.json", "vscode.mcp.json", "servers", "stdio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp", tt.file))
			require.NoError(t, err)
			var doc map[string]map[string]hostServer
			dec := json.NewDecoder(strings.NewReader(string(data)))
			require.NoError(t, dec.Decode(&doc))
			require.Len(t, doc, 1, "one key: %s", tt.key)
			servers, ok := doc[tt.key]
			require.True(t, ok, "the servers are under %q", tt.key)
			s, ok := servers["helm"]
			require.True(t, ok, "a server named helm")
			assert.Equal(t, tt.wantType, s.Type)
			assert.Equal(t, snippetHelm, s.Command)
			assert.True(t, filepath.IsAbs(s.Command), "an absolute path: hosts start servers without the shell's PATH")
			assert.Equal(t, []string{"mcp"}, s.Args)
			for _, k := range []string{"HELM_IDENTITY", "HELM_ROLE", "HELM_METHOD"} {
				assert.NotEmpty(t, s.Env[k], k)
			}
			assert.Equal(t, snippetHome, s.Env["HELM_HOME"])

			h := newHarness(t)
			cmd := exec.Command(bin, s.Args...)
			cmd.Dir = h.Dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.Env["HOME"], "GORACE=atexit_sleep_ms=0"}
			for k, v := range s.Env {
				cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, snippetHome, h.Home))
			}
			cmd.Stderr = &testWriter{t: t, prefix: tt.file + ": "}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			require.NoError(t, err, "initialize")
			defer func() { assert.NoError(t, cs.Close()) }()
			assert.Equal(t, "helm", cs.InitializeResult().ServerInfo.Name)
			tools, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			assert.Subset(t, names, []string{"voyage_start", "observe", "bearing_take", "note", "complete"})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "voyage_start", Arguments: map[string]any{"intent": "set up from " + tt.file}})
			require.NoError(t, err)
			require.False(t, res.IsError, resultText(res))
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "note", Arguments: map[string]any{"text": "the session's voyage"}})
			require.NoError(t, err)
			require.False(t, res.IsError, resultText(res))
			var list []helm.VoyageInfo
			require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--json")), &list))
			require.Len(t, list, 1, "in the home the snippet names")
			assert.Equal(t, s.Env["HELM_IDENTITY"], list[0].Identity)
			assert.Contains(t, h.ok("--voyage", list[0].ID, "log"), "the session's voyage", "the note went to the voyage the session started")
		})
	}
}

// TestMCPDocShowsTheSnippetFiles: docs/mcp.md shows each snippet file as
// it is (the JSON blocks, in order: Claude Code, Cursor, VS Code), and
// the claude mcp add line of docs/mcp/claude-code-add.sh: what the page
// says is what the tests run.
func TestMCPDocShowsTheSnippetFiles(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```(json|sh)\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	var jsons []string
	var shs []string
	for _, b := range blocks {
		if b[1] == "json" {
			jsons = append(jsons, b[2])
		} else {
			shs = append(shs, b[2])
		}
	}
	files := []string{"claude-code.mcp.json", "cursor.mcp.json", "vscode.mcp.json"}
	require.Len(t, jsons, len(files))
	for i, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp", f))
		require.NoError(t, err)
		assert.JSONEq(t, string(data), jsons[i], "docs/mcp.md's block %d is docs/mcp/%s", i+1, f)
	}
	add, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp", "claude-code-add.sh"))
	require.NoError(t, err)
	assert.True(t, slices.Contains(shs, string(add)), "docs/mcp.md shows docs/mcp/claude-code-add.sh: %q", shs)
}
