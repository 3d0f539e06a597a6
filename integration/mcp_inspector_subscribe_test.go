package integration

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectorWait bounds what must happen by itself under the Inspector (a
// line, its end): a guard against a hang, not a latency assertion.
const inspectorWait = 60 * time.Second

// TestInspectorSubscribesToAStory: the MCP Inspector's connection CLI
// (mcpdo, beside mcp-inspector: its one-shot --cli mode has no
// subscriptions) subscribes to a voyage's story through helm mcp, in both
// protocol eras (legacy: resources/subscribe; modern, 2026-07-28:
// subscriptions/listen), and is told of an entry another helm process
// records; a subscription to a path-like voyage is refused.
func TestInspectorSubscribesToAStory(t *testing.T) {
	program := findInspector(t)
	mcpdo := filepath.Join(filepath.Dir(program), "mcpdo")
	t.Parallel()
	helmBin := buildHelm(t)
	work := t.TempDir()
	cfg := readmeEntry(t)
	entry := cfg["mcpServers"].(map[string]any)["helm"].(map[string]any)
	entry["command"] = helmBin
	home := filepath.Join(t.TempDir(), "helm-home")
	env := entry["env"].(map[string]any)
	env["HELM_HOME"] = home
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	config := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(config, data, 0o600))
	in := &inspector{t: t, program: program, config: config, dir: work}
	v := in.call("voyage_start", "intent=Follow me through the Inspector")
	id, _ := v["id"].(string)
	require.Len(t, id, 36, "%v", v)
	uri := "helm://voyages/" + id + "/story"

	helmEnv := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		helmEnv = append(helmEnv, k+"="+v.(string))
	}
	// mcpdo's daemon, private to the test: its socket in a short
	// directory of its own, its token, its home.
	daemonDir, err := os.MkdirTemp("", "mcpdo")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(daemonDir) })
	doEnv := append(os.Environ(), "HOME="+t.TempDir(), "MCP_INSPECTOR_DAEMON_DIR="+daemonDir,
		"MCP_INSPECTOR_DAEMON_TOKEN=helm-integration-"+filepath.Base(daemonDir), "MCP_INSPECTOR_SECRET_STORE=file")
	do := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(mcpdo, args...)
		cmd.Dir, cmd.Env = work, doEnv
		out, err := cmd.CombinedOutput()
		code := 0
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			code = xe.ExitCode()
		} else {
			require.NoError(t, err)
		}
		t.Logf("mcpdo %s: exit %d\n%s", strings.Join(args, " "), code, out)
		return string(out), code
	}
	t.Cleanup(func() { do("daemon", "stop") })

	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			_, code := do("--config", config, "connect", "--server", "helm", "--cwd", work, "--era", era)
			require.Equal(t, 0, code)
			defer do("disconnect", "helm")

			cmd := exec.Command(mcpdo, "--connection", "helm", "--format", "json", "resources/subscribe", uri)
			cmd.Dir, cmd.Env = work, doEnv
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = &testLog{t: t, prefix: "mcpdo resources/subscribe: "}
			require.NoError(t, cmd.Start())
			ended := make(chan error, 1)
			lines := make(chan map[string]any, 16)
			go func() {
				dec := json.NewDecoder(stdout) // pretty-printed objects, one after another
				for {
					var m map[string]any
					if dec.Decode(&m) != nil {
						break
					}
					lines <- m
				}
				close(lines)
				ended <- cmd.Wait()
			}()
			defer cmd.Process.Kill()
			next := func(what string) map[string]any {
				t.Helper()
				select {
				case m, ok := <-lines:
					require.True(t, ok, "mcpdo ended before %s", what)
					return m
				case <-time.After(inspectorWait):
					t.Fatalf("no %s within %s", what, inspectorWait)
					return nil
				}
			}
			assert.Equal(t, "subscribed", next("subscribed")["type"])

			note := exec.Command(helmBin, "--voyage", id, "note", "recorded by another process ("+era+")")
			note.Env = helmEnv
			out, err := note.CombinedOutput()
			require.NoError(t, err, "%s", out)
			m := next("resources/updated")
			assert.Equal(t, "resources/updated", m["type"])
			assert.Equal(t, uri, m["uri"])

			out2, code := do("--connection", "helm", "--format", "json", "resources/subscribe", "helm://voyages/..%2F..%2F"+id+"/story")
			assert.NotEqual(t, 0, code, "a path-like voyage is refused")
			assert.Contains(t, out2, "Resource not found")

			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			select {
			case <-ended:
			case <-time.After(inspectorWait):
				t.Fatalf("mcpdo still running %s after Ctrl-C", inspectorWait)
			}
		})
	}
}

// testLog logs what a process writes.
type testLog struct {
	t      *testing.T
	prefix string
}

func (w *testLog) Write(p []byte) (int, error) {
	w.t.Logf("%s%s", w.prefix, p)
	return len(p), nil
}
