//go:build unix

package main

import (
	"encoding/json"
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

// waitFor waits until out holds want (a guard against a hang, not a
// latency assertion).
func waitFor(t *testing.T, out *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not print %q within %s; it printed:\n%s", want, hangGuard, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// follower starts `helm log --follow` on voyage id in its own process.
func follower(t *testing.T, home, id string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command("helm", append([]string{"--voyage", id, "log", "--follow"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(home), "HELM_HOME=" + home, "GORACE=atexit_sleep_ms=0"}
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &stdout, &stderr
}

// waitExit waits for cmd to end (killing it should it hang) and returns
// its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		<-done
		t.Fatalf("helm %s still running after %s", strings.Join(cmd.Args[1:], " "), hangGuard)
		return -1
	}
}

// hookVoyage is the voyage the hook of session records into.
func hookVoyage(t *testing.T, home, session string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "agents", "claude-code", session))
	require.NoError(t, err)
	var ix sessionIndex
	require.NoError(t, json.Unmarshal(data, &ix))
	require.NotEmpty(t, ix.Main.Voyage)
	return ix.Main.Voyage
}

// TestLogFollowPrintsWhatAnotherProcessRecords: a follower process
// prints the story so far, then each step, note and result other
// processes record, in order, a tool call again under its number once
// its result arrives, and ends with exit 0 after printing the completion.
func TestLogFollowPrintsWhatAnotherProcessRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		json   bool
		result string // how the follower shows the call's result
	}{{name: "text", result: "→ ok"}, {name: "json", json: true, result: "ok flaky 0.2s"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, dir := filepath.Join(t.TempDir(), "home"), t.TempDir()
			hook := func(payload string) {
				t.Helper()
				stdout, stderr, err := hookProcess(home, dir, payload)
				require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			hook(hookPayload("s-follow", "UserPromptSubmit", map[string]any{"prompt": "fix the flaky test"}))
			id := hookVoyage(t, home, "s-follow")

			var args []string
			if tc.json {
				args = []string{"--json"}
			}
			cmd, stdout, stderr := follower(t, home, id, args...)
			waitFor(t, stdout, "fix the flaky test")

			hook(bashCall("s-follow", "toolu_1", "go test ./flaky"))
			waitFor(t, stdout, "go test ./flaky")
			hook(hookPayload("s-follow", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_1",
				"tool_input": map[string]any{"command": "go test ./flaky"}, "tool_response": map[string]any{"stdout": "ok flaky 0.2s"}}))
			waitFor(t, stdout, tc.result)

			person := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(home), "HELM_HOME=" + home,
				"HELM_IDENTITY=ann", "HELM_ROLE=lead", "HELM_METHOD=human", "GORACE=atexit_sleep_ms=0"}
			for _, args := range [][]string{{"note", "the flake is a race in setup"}, {"complete", "--summary", "fixed the race"}} {
				c := exec.Command("helm", append([]string{"--voyage", id}, args...)...)
				c.Env = person
				out, err := c.CombinedOutput()
				require.NoError(t, err, "helm %v: %s", args, out)
			}

			code := waitExit(t, cmd)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			out := stdout.String()
			if tc.json {
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				var kinds []string
				for _, l := range lines {
					var x struct {
						Voyage *struct{ Status string }
						Entry  *struct {
							N    int
							Kind string
						}
					}
					require.NoError(t, json.Unmarshal([]byte(l), &x), "each line is one JSON object: %s", l)
					switch {
					case x.Voyage != nil:
						kinds = append(kinds, "voyage "+x.Voyage.Status)
					case x.Entry != nil:
						kinds = append(kinds, x.Entry.Kind)
					}
				}
				assert.Equal(t, "voyage active", kinds[0])
				assert.Equal(t, "voyage completed", kinds[len(kinds)-1])
				assert.Contains(t, kinds, "note")
			} else {
				first := strings.Index(out, "go test ./flaky")
				result := strings.Index(out, "→ ok")
				note := strings.Index(out, "the flake is a race in setup")
				done := strings.Index(out, "Status: completed")
				assert.True(t, 0 < first && first < result && result < note && note < done, "in order:\n%s", out)
				assert.Contains(t, out, "Summary: fixed the race")
				assert.Equal(t, 2, strings.Count(out, "── Step 2 ──"), "the call, then again with its result:\n%s", out)
				assert.Equal(t, 1, strings.Count(out, "Voyage: "), "the header once")
			}
			assert.Empty(t, stderr.String())
		})
	}
}

// TestLogFollowEndsOnCtrlCWith130: Ctrl-C ends a follower with 130 and
// one line on stderr; what it printed is whole.
func TestLogFollowEndsOnCtrlCWith130(t *testing.T) {
	t.Parallel()
	home, dir := filepath.Join(t.TempDir(), "home"), t.TempDir()
	stdoutH, stderrH, err := hookProcess(home, dir, hookPayload("s-int", "UserPromptSubmit", map[string]any{"prompt": "wait for me"}))
	require.NoError(t, err, "%s%s", stdoutH, stderrH)
	id := hookVoyage(t, home, "s-int")

	cmd, stdout, stderr := follower(t, home, id)
	waitFor(t, stdout, "wait for me")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, waitExit(t, cmd), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Equal(t, "helm: interrupted\n", stderr.String())
	assert.True(t, strings.HasSuffix(stdout.String(), "wait for me\n"), "the story so far, whole:\n%s", stdout)
}
