//go:build linux

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alive reports whether process pid is running: there, and no zombie
// (a zombie has ended, waiting for its parent to reap it).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestAttackMCPEndOfInputLeavesNoProcessOfAnObservation: a command
// observation in flight when the host closes helm mcp's input is answered
// before helm mcp exits with status 0, and what the command started in
// the background (its own process group, which the timeout would kill)
// does not outlive the observation: no process is left running.
func TestAttackMCPEndOfInputLeavesNoProcessOfAnObservation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("the end of input")
	script := "sleep 300 </dev/null >/dev/null 2>&1 & echo $! > bg.pid; touch started; while [ ! -e go ]; do sleep 0.01; done; echo looked"
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"observe","arguments":{"voyage":"` + id + `","kind":"command","command":["sh","-c",` + jsonString(script) + `]}}}`,
	}, "\n") + "\n"
	cmd := exec.Command("helm", "mcp")
	cmd.Dir, cmd.Env = h.Dir, mcpProcessEnv(h, "agent-a")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(stdin, requests)
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(h.Dir, "started")); return err == nil }, mcpWait, 10e6, "the command started")
	data, err := os.ReadFile(filepath.Join(h.Dir, "bg.pid"))
	require.NoError(t, err)
	bg, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(bg, syscall.SIGKILL) })
	require.True(t, alive(bg), "the background process runs while the observation does")
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "go"), nil, 0o644))
	var out strings.Builder
	_, err = io.Copy(&out, bufio.NewReader(stdout))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	answers := answersByID(t, out.String())
	require.Contains(t, answers, "1", "the call in flight was answered: %s", out.String())
	assert.Contains(t, answers["1"], "result")
	assert.Eventually(t, func() bool { return !alive(bg) }, mcpWait, 10e6, "process %d, started by the observed command, still runs after helm mcp ended", bg)
}

// TestAttackMCPTwoServersDoNotShareTheSessionVoyage: a voyage started
// through one helm mcp process is not the voyage of another process's
// session on the same home, even for the same identity: its calls that
// leave voyage out are refused until it starts one of its own.
func TestAttackMCPTwoServersDoNotShareTheSessionVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := mcpProcess(t, h, "agent-a", "--tools", "all")
	b := mcpProcess(t, h, "agent-a", "--tools", "all")
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	ctx := context.Background()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "voyage_start", Arguments: map[string]any{"intent": "in a"}})
	require.NoError(t, err)
	require.False(t, res.IsError, resultText(res))
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "note", Arguments: map[string]any{"text": "from b"}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "b started no voyage: %s", resultText(res))
	assert.Contains(t, resultText(res), "this session started no voyage")
	assert.NotContains(t, h.ok("log"), "from b")
}
