//go:build unix

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmlog/helm/logbook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helm mcp as hosts run it: a process of its own, driven over its
// standard input and output by the SDK's client. The program is the test
// binary itself, which TestMain makes helm when it runs as "helm" (on the
// PATH testscript sets up): no build, and race-checked under -race.

var mcpObservations = flag.Int("mcp.observations", 100, "observations each of TestMCPFourProcessesOnOneVoyage's four helm mcp processes records")

// mcpProcess starts `helm mcp args...` in h's home, as identity, with the
// command line's environment, and connects a client to it.
func mcpProcess(t *testing.T, h *harness, identity string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command("helm", append([]string{"mcp"}, args...)...)
	cmd.Dir, cmd.Env = h.Dir, mcpProcessEnv(h, identity)
	cmd.Stderr = &testWriter{t: t, prefix: identity + ": "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	return cs
}

func mcpProcessEnv(h *harness, identity string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + h.Env["HOME"], "HELM_HOME=" + h.Home,
		"HELM_IDENTITY=" + identity, "HELM_ROLE=coder", "HELM_METHOD=claude-test",
		"GORACE=atexit_sleep_ms=0", // a race-built helm otherwise sleeps a second at exit
	}
}

// testWriter logs what a process writes (helm mcp's standard error is
// empty when all goes well: anything there is worth reading).
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Errorf("%s%s", w.prefix, p)
	return len(p), nil
}

// TestMCPFourProcessesOnOneVoyage: four helm mcp processes, each driven
// by its own client, record 100 observations each on one voyage at once:
// every one is recorded exactly once, and the voyage verifies.
// -mcp.observations sets how many each records.
func TestMCPFourProcessesOnOneVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("a crew of four agents on one voyage")
	const agents = 4
	each := *mcpObservations
	start := time.Now()
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() {
			identity := fmt.Sprintf("agent-%d", i)
			cs := mcpProcess(t, h, identity, "--voyage", id)
			defer func() { assert.NoError(t, cs.Close()) }()
			for j := range each {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{
					"kind": "context", "description": fmt.Sprintf("%s observation %d", identity, j)}})
				if !assert.NoError(t, err) || !assert.False(t, res.IsError, "%s", resultText(res)) {
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d processes recorded %d observations each in %s", agents, each, time.Since(start))

	var slate []logbook.ObservationRecord
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "slate", "list", "--json")), &slate))
	labels := map[string]int{}
	for _, o := range slate {
		labels[o.Label]++
	}
	observed := 0
	for _, line := range strings.Split(strings.TrimSpace(h.ok("transcript", id, "--json")), "\n") {
		var e struct {
			Type string
			Who  logbook.Who
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type == "observed" {
			observed++
			assert.Contains(t, e.Who.Identity, "agent-")
		}
	}
	assert.Equal(t, agents*each, observed, "each observation recorded once")
	assert.Len(t, slate, agents*each)
	for i := range agents {
		for j := range each {
			label := fmt.Sprintf("Context: agent-%d observation %d", i, j)
			assert.Equal(t, 1, labels[label], label)
		}
	}
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
}

// TestMCPProcessHostGoesMidCall: the host of one helm mcp process goes
// (its pipes close) while a command is being observed: the process
// stops the command and ends at once, status 0, having recorded nothing
// of that call; another process on the voyage serves on, and the voyage
// verifies and takes more.
func TestMCPProcessHostGoesMidCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("a host that goes")
	other := mcpProcess(t, h, "agent-b", "--voyage", id)
	defer func() { assert.NoError(t, other.Close()) }()

	cmd := exec.Command("helm", "mcp", "--voyage", id)
	cmd.Dir, cmd.Env = h.Dir, mcpProcessEnv(h, "agent-a")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	started := filepath.Join(h.Dir, "started")
	call := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{
			"kind": "command", "command": []string{"sh", "-c", "touch started; exec sleep 60"}}})
		call <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, mcpWait, 10*time.Millisecond, "the command started")

	gone := time.Now()
	stdin.Close() // the host goes: its end of both pipes closes
	stdout.Close()
	select {
	case err := <-exited:
		assert.NoError(t, err, "helm mcp ends with status 0 when its host goes: %s", stderr.String())
		t.Logf("helm mcp ended %s after its host went", time.Since(gone))
	case <-time.After(mcpWait):
		cmd.Process.Kill()
		t.Fatalf("helm mcp still running %s after its host went", mcpWait)
	}
	assert.Error(t, <-call)
	assert.Empty(t, stderr.String())

	for i := range 3 {
		res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{"kind": "context", "description": "b goes on " + itoa(i)}})
		require.NoError(t, err)
		require.False(t, res.IsError, resultText(res))
	}
	slate := h.ok("--voyage", id, "slate", "list")
	assert.Contains(t, slate, "3 observations", "the cancelled look recorded nothing")
	assert.NotContains(t, slate, "sleep")
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
	again := mcpProcess(t, h, "agent-a", "--voyage", id)
	defer func() { assert.NoError(t, again.Close()) }()
	res, err := again.CallTool(context.Background(), &mcp.CallToolParams{Name: "note", Arguments: map[string]any{"text": "back"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, resultText(res))
}
