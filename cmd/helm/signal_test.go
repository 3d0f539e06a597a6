//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// hangGuard bounds what must end by itself. It guards against a hang; it
// is no latency assertion: latencies are logged, not checked.
const hangGuard = 10 * time.Second

// builtHelm is the helm program built for a test, with its own home.
type builtHelm struct {
	t    *testing.T
	path string
	dir  string // the working directory
	env  []string
}

func buildBinary(t *testing.T) *builtHelm {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	b := &builtHelm{t: t, path: filepath.Join(t.TempDir(), "helm"), dir: t.TempDir()}
	out, err := exec.Command("go", "build", "-o", b.path, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	b.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HELM_HOME=" + filepath.Join(t.TempDir(), "home"),
		"HELM_IDENTITY=john-agent", "HELM_ROLE=coder", "HELM_METHOD=human",
	}
	return b
}

func (b *builtHelm) command(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(b.path, args...)
	cmd.Dir, cmd.Env = b.dir, b.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// wait waits for a started command, killing it should it hang, and
// returns its exit status.
func (b *builtHelm) wait(cmd *exec.Cmd, since time.Time) int {
	b.t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		b.t.Logf("helm %s ended %s after %s", strings.Join(cmd.Args[1:], " "), cmd.ProcessState, time.Since(since))
		var xe *exec.ExitError
		if err != nil && !errors.As(err, &xe) {
			require.NoError(b.t, err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		<-done
		b.t.Fatalf("helm %s still running after %s", strings.Join(cmd.Args[1:], " "), hangGuard)
		return -1
	}
}

// run runs helm to its end and returns its status, stdout and stderr.
func (b *builtHelm) run(args ...string) (int, string, string) {
	b.t.Helper()
	cmd, stdout, stderr := b.command(args...)
	start := time.Now()
	require.NoError(b.t, cmd.Start())
	code := b.wait(cmd, start)
	return code, stdout.String(), stderr.String()
}

func (b *builtHelm) ok(args ...string) string {
	b.t.Helper()
	code, stdout, stderr := b.run(args...)
	require.Equal(b.t, 0, code, "helm %v\nstdout:\n%s\nstderr:\n%s", args, stdout, stderr)
	return stdout
}

// waitForFile waits until path holds a line, and returns it.
func waitForFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			return strings.TrimSpace(string(data))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was not written within %s", path, hangGuard)
	return ""
}

// gone reports whether process pid has ended: it no longer exists, or is
// a zombie waiting for an init that is slow to reap it.
func gone(pid int) bool {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestInterruptStopsACommandAndRecordsNothing: Ctrl-C (or SIGTERM) while
// `helm observe command` runs kills the command's whole process group,
// records nothing, and exits 130 with one line.
func TestInterruptStopsACommandAndRecordsNothing(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	b.ok("voyage", "new", "interrupt me")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			b := *b
			b.t = t
			marker := filepath.Join(t.TempDir(), "sleeper")
			// sh starts a sleep of its own, says which, and waits: both are
			// in the group helm must kill.
			cmd, stdout, stderr := b.command("observe", "command", "--", "sh", "-c", `sleep 100 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; wait`, marker)
			require.NoError(t, cmd.Start())
			sleeper, err := strconv.Atoi(waitForFile(t, marker))
			require.NoError(t, err)

			sent := time.Now()
			require.NoError(t, cmd.Process.Signal(sig))
			code := b.wait(cmd, sent)
			assert.Equal(t, 130, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Equal(t, "helm: interrupted\n", stderr.String())
			assert.Empty(t, stdout.String())

			deadline := time.Now().Add(hangGuard)
			for !gone(sleeper) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			assert.True(t, gone(sleeper), "the command's child %d outlived helm", sleeper)

			assert.Contains(t, b.ok("slate", "list"), "is empty", "an interrupted observation records nothing")
			assert.Contains(t, b.ok("voyage", "verify"), "OK: nothing damaged")
		})
	}
}
