//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eofRequests are a host's whole session, written at once before it
// closes helm's standard input: initialize, then a look at a command that
// waits for the file "go" (so that the call is still running when the
// input ends), then a note.
func eofRequests(id string) string {
	return strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"observe","arguments":{"voyage":"` + id + `","kind":"command","command":["sh","-c","touch started; while [ ! -e go ]; do sleep 0.01; done; echo looked"]}}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"note","arguments":{"voyage":"` + id + `","text":"the last word"}}}`,
	}, "\n") + "\n"
}

// answersByID reads helm mcp's standard output: the answers, by id.
func answersByID(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	answers := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if id, ok := m["id"]; ok {
			answers[jsonString(id)] = m
		}
	}
	return answers
}

func jsonString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// assertAnswered checks that the calls of eofRequests were answered,
// each with a result that is no error, and recorded.
func assertAnswered(t *testing.T, h *harness, id, stdout string) {
	t.Helper()
	answers := answersByID(t, stdout)
	for _, call := range []string{`1`, `"two"`} {
		a, ok := answers[call]
		if !assert.True(t, ok, "call %s answered before helm mcp ended: %s", call, stdout) {
			continue
		}
		require.Contains(t, a, "result", "call %s: %v", call, a)
		res := a["result"].(map[string]any)
		assert.NotEqual(t, true, res["isError"], "call %s: %v", call, res)
	}
	assert.Contains(t, h.ok("--voyage", id, "slate", "list"), "1 observation")
	assert.Contains(t, h.ok("--voyage", id, "log"), "the last word")
}

// eofReader gives r, then says when its end was read, before giving it.
type eofReader struct {
	r    io.Reader
	once sync.Once
	end  chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.end) })
	}
	return n, err
}

// TestMCPAnswersCallsInFlightAtTheEndOfInput: a host that writes its
// requests and closes helm's standard input at once (the MCP shutdown
// for stdio) gets an answer to each, the one still running when the input
// ended too, before helm mcp ends with status 0.
func TestMCPAnswersCallsInFlightAtTheEndOfInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := h.start("the end of input")
	in := &eofReader{r: strings.NewReader(eofRequests(id)), end: make(chan struct{})}
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- h.main().Run(context.Background(), []string{"mcp", "--tools", "all"}, in, &stdout, &stderr)
	}()
	select {
	case <-in.end:
	case <-time.After(mcpWait):
		t.Fatal("helm mcp did not read to the end of its input")
	}
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(h.Dir, "started")); return err == nil }, mcpWait, 10*time.Millisecond, "the command started: %s", stderr.String())
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "go"), nil, 0o644), "the command may end, after the input did")
	select {
	case err := <-done:
		assert.NoError(t, err, stderr.String())
	case <-time.After(mcpWait):
		t.Fatalf("helm mcp still running %s after its input ended", mcpWait)
	}
	assertAnswered(t, h, id, stdout.String())
}

// TestMCPProcessAnswersCallsInFlightAtTheEndOfInput: the same, with helm
// mcp a process of its own, as a host starts it: the host writes its
// requests, closes helm's standard input, and reads to the end.
func TestMCPProcessAnswersCallsInFlightAtTheEndOfInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("the end of input")
	cmd := exec.Command("helm", "mcp", "--tools", "all")
	cmd.Dir, cmd.Env = h.Dir, mcpProcessEnv(h, "agent-a")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(stdin, eofRequests(id))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(h.Dir, "started")); return err == nil }, mcpWait, 10*time.Millisecond, "the command started")
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "go"), nil, 0o644))
	var out strings.Builder
	r := bufio.NewReader(stdout)
	_, err = io.Copy(&out, r)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	assertAnswered(t, h, id, out.String())
}
