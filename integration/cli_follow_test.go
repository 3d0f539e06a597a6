//go:build unix

package integration

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// followOutput is a follower's output, written by its process and read
// by the test while it runs.
type followOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *followOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *followOutput) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitPrinted waits until out holds want: a guard against a hang, not a
// latency assertion.
func waitPrinted(t *testing.T, out *followOutput, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), want) {
		require.True(t, time.Now().Before(deadline), "the follower did not print %q within a minute; it printed:\n%s", want, out)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLogFollowOnJetStream: on a home in JetStream, `helm log --follow`
// in one process prints what other processes record, as they record it,
// in order, and ends with 0 on completion; a second follower ends on
// Ctrl-C with 130, its output whole.
func TestLogFollowOnJetStream(t *testing.T) {
	srv := startServer(t, "follow", nil)
	bin := buildHelm(t)
	helm := newHelmCLI(t, bin, t.TempDir(), "HELM_STORE="+srv.ClientURL()+"/"+newHome())
	out, _ := helm.exits(0, "voyage", "new", "Follow the widget fix")
	id := strings.TrimSpace(out)

	follow := func() (*exec.Cmd, *followOutput, *followOutput) {
		cmd := exec.Command(bin, "--voyage", id, "log", "--follow")
		cmd.Env = helm.env
		var stdout, stderr followOutput
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, &stdout, &stderr
	}
	exitOf := func(cmd *exec.Cmd) int {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
			return cmd.ProcessState.ExitCode()
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("helm log --follow still running a minute after the voyage ended")
			return -1
		}
	}

	first, stdout, stderr := follow()
	waitPrinted(t, stdout, "Voyage: Follow the widget fix")
	helm.exits(0, "note", "the widget fails on a nil config")
	waitPrinted(t, stdout, "the widget fails on a nil config")
	helm.exits(0, "note", "a nil check fixes it")
	waitPrinted(t, stdout, "a nil check fixes it")

	second, stdout2, stderr2 := follow()
	waitPrinted(t, stdout2, "a nil check fixes it")
	require.NoError(t, second.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, exitOf(second), "Ctrl-C: stdout:\n%s\nstderr:\n%s", stdout2, stderr2)
	assert.Contains(t, stdout2.String(), "── Note 2 ──", "what it printed is whole")

	helm.exits(0, "complete", "--summary", "fixed with a nil check")
	require.Equal(t, 0, exitOf(first), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	got := stdout.String()
	a, b := strings.Index(got, "the widget fails on a nil config"), strings.Index(got, "a nil check fixes it")
	done := strings.Index(got, "Summary: fixed with a nil check")
	assert.True(t, 0 < a && a < b && b < done, "in order:\n%s", got)
	assert.Equal(t, 1, strings.Count(got, "Voyage: "), "the header once")
	assert.Empty(t, stderr.String())
}
