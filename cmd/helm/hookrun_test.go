package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookPayload is a Claude Code payload of event for session, with the
// event's own fields.
func hookPayload(session, event string, fields map[string]any) string {
	p := map[string]any{"session_id": session, "cwd": ".", "hook_event_name": event}
	for k, v := range fields {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func bashCall(session, id, command string) string {
	return hookPayload(session, "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": id, "tool_input": map[string]any{"command": command}})
}

// hookProcess runs the helm program (the test binary, which TestMain
// makes helm) as Claude Code runs a hook: the payload on stdin.
func hookProcess(home, dir, payload string) (stdout, stderr string, err error) {
	cmd := exec.Command("helm", "hook", "claude-code", "--as", "claude-1", "--role", "coder", "--method", "claude-code")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(home), "HELM_HOME=" + home, "GORACE=atexit_sleep_ms=0"}
	cmd.Stdin = strings.NewReader(payload)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestHookStartsANewVoyageWhenTheIndexLies: the agent can edit the
// session index; a voyage it names that records another session is not
// used, and stderr says so.
func TestHookStartsANewVoyageWhenTheIndexLies(t *testing.T) {
	h := newHarness(t)
	other := h.start("a person's voyage")
	for _, k := range []string{"HELM_IDENTITY", "HELM_ROLE", "HELM_METHOD"} {
		delete(h.Env, k) // the person's
	}
	h.Stdin = hookPayload("s-lie", "UserPromptSubmit", map[string]any{"prompt": "first"})
	h.ok("hook", "claude-code", "--as", "claude-1")
	index := filepath.Join(h.Home, "agents", "claude-code", "s-lie")
	data, err := os.ReadFile(index)
	require.NoError(t, err)
	var ix sessionIndex
	require.NoError(t, json.Unmarshal(data, &ix))
	mine := ix.Main.Voyage
	ix.Main.Voyage = other
	data, err = json.Marshal(ix)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(index, data, 0o600))

	h.Stdin = hookPayload("s-lie", "UserPromptSubmit", map[string]any{"prompt": "second"})
	r := h.run("hook", "claude-code", "--as", "claude-1")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "records \"\", not \"claude-code:s-lie\": a new voyage starts")
	assert.NotContains(t, h.ok("log", "--voyage", other), "second", "the person's voyage takes no step of the agent")
	assert.NotContains(t, h.ok("log", "--voyage", mine), "second")
}

// TestHookSessionIndexNamesNoPath: a session id is the agent's to choose;
// one that is not a plain name is stored under its digest, inside the
// home.
func TestHookSessionIndexNamesNoPath(t *testing.T) {
	h := newHarness(t)
	h.Stdin = hookPayload("../../escape", "UserPromptSubmit", map[string]any{"prompt": "hi"})
	h.ok("hook", "claude-code", "--as", "claude-1")
	entries, err := os.ReadDir(filepath.Join(h.Home, "agents", "claude-code"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Len(t, names, 2, "%v", names)
	assert.True(t, strings.HasPrefix(names[0], "sha256-"), "%v", names)
	_, err = os.Stat(filepath.Join(h.Home, "..", "escape"))
	assert.True(t, os.IsNotExist(err))
}

// hookEvents are the events BenchmarkHook measures: a prompt, a Bash call
// the guard parses (a compound command), its result, and a stop.
var hookEvents = []struct{ name, payload string }{
	{"prompt", hookPayload("bench", "UserPromptSubmit", map[string]any{"prompt": "fix the widget"})},
	{"pre-tool", bashCall("bench", "ID", `cd src && for f in $(git ls-files '*.go'); do gofmt -l "$f"; done | xargs -r sh -c 'echo "$@"' _ && go test ./... 2>&1 | tail -n 20`)},
	{"post-tool", hookPayload("bench", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "ID", "tool_input": map[string]any{"command": "go test ./..."},
		"tool_response": map[string]any{"stdout": strings.Repeat("ok  \tpkg\t0.01s\n", 20), "stderr": ""}, "duration_ms": 1200})},
	{"stop", hookPayload("bench", "Stop", map[string]any{"last_assistant_message": "Done.", "stop_hook_active": false})},
}

const hookBenchPolicy = `[[rule]]
name = "no-rm-rf"
tool = "Bash"
command = "rm -rf"
decision = "deny"

[[rule]]
name = "tests pass"
event = "stop"
until = "tests-pass"
command = "go test"
decision = "block"
`

// reportLatencies reports the p50 and p99 of ds, in milliseconds.
func reportLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkHook measures helm hook claude-code in-process, per event
// kind, on a session that grows as the benchmark runs (every call fsyncs
// as in production: no NoSync). It reports p50 and p99; nothing is
// asserted on time.
func BenchmarkHook(b *testing.B) {
	for _, ev := range hookEvents {
		b.Run(ev.name, func(b *testing.B) {
			home := filepath.Join(b.TempDir(), "home")
			require.NoError(b, os.MkdirAll(home, 0o700))
			require.NoError(b, os.WriteFile(filepath.Join(home, "policy.toml"), []byte(hookBenchPolicy), 0o600))
			m := &Main{Getenv: func(k string) string {
				return map[string]string{"HELM_HOME": home, "HOME": filepath.Dir(home)}[k]
			}, Dir: filepath.Dir(home), systemPolicy: new(string)}
			run := func(payload string) {
				var out, errOut bytes.Buffer
				err := m.Run(context.Background(), []string{"hook", "claude-code", "--as", "claude-1"}, strings.NewReader(payload), &out, &errOut)
				if err != nil || errOut.Len() > 0 {
					b.Fatalf("hook: %v: %s", err, errOut.String())
				}
			}
			var ds []time.Duration
			i := 0
			for b.Loop() {
				i++
				payload := strings.ReplaceAll(ev.payload, `"ID"`, fmt.Sprintf(`"toolu_%d"`, i))
				if ev.name == "post-tool" {
					b.StopTimer()
					run(strings.ReplaceAll(hookEvents[1].payload, `"ID"`, fmt.Sprintf(`"toolu_%d"`, i)))
					b.StartTimer()
				}
				start := time.Now()
				run(payload)
				ds = append(ds, time.Since(start))
			}
			reportLatencies(b, ds)
		})
	}
}

// BenchmarkHookProcess measures the same through the helm program, a
// process per event as Claude Code runs it (the test binary: built with
// -race under -race, so its figures are the race detector's too).
func BenchmarkHookProcess(b *testing.B) {
	for _, ev := range hookEvents {
		b.Run(ev.name, func(b *testing.B) {
			home := filepath.Join(b.TempDir(), "home")
			require.NoError(b, os.MkdirAll(home, 0o700))
			require.NoError(b, os.WriteFile(filepath.Join(home, "policy.toml"), []byte(hookBenchPolicy), 0o600))
			var ds []time.Duration
			i := 0
			for b.Loop() {
				i++
				payload := strings.ReplaceAll(ev.payload, `"ID"`, fmt.Sprintf(`"toolu_%d"`, i))
				start := time.Now()
				if _, errOut, err := hookProcess(home, filepath.Dir(home), payload); err != nil {
					b.Fatalf("hook: %v: %s", err, errOut)
				}
				ds = append(ds, time.Since(start))
			}
			reportLatencies(b, ds)
		})
	}
}
