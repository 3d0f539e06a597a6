package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Peak RSS of a helm process, measured right. A process started from this
// test binary cannot report its own: Go starts children with vfork, and
// Linux folds the memory high-water mark of the mm an exec leaves — the
// parent's, shared until then — into the child's (a parent holding 500 MB
// runs /bin/true, which reports 502 MB). So helm runs under a small
// process of its own (TestPeakRSSHelper, this binary run again), which
// starts it, passes its standard streams and signals through, and writes
// helm's exit status and peak RSS to a file when it ends.

// underPeakRSS returns cmd, a command that runs bin with args under the
// helper (set its Env, Dir and streams as for helm itself; env must be
// set before it starts, through the returned command's Env, which already
// holds what the helper needs: append to it), and peak, which once cmd
// has ended returns helm's exit status and its peak RSS in MiB.
func underPeakRSS(t *testing.T, env []string, bin string, args ...string) (cmd *exec.Cmd, peak func() (int, float64)) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "peak")
	cmd = exec.Command(os.Args[0], "-test.run=^TestPeakRSSHelper$")
	cmd.Env = append(append([]string(nil), env...),
		"HELM_PEAK_RSS_RUN="+strings.Join(append([]string{bin}, args...), "\n"), "HELM_PEAK_RSS_OUT="+out)
	return cmd, func() (int, float64) {
		t.Helper()
		data, err := os.ReadFile(out)
		require.NoError(t, err, "the peak-RSS helper wrote nothing")
		var code int
		var kib int64
		_, err = fmt.Sscanf(string(data), "%d %d", &code, &kib)
		require.NoError(t, err, "the helper wrote %q", data)
		return code, float64(kib) / 1024
	}
}

// TestPeakRSSHelper is underPeakRSS's process: with HELM_PEAK_RSS_RUN
// set, it runs that command line (its words a line each) with this
// process's standard streams, passes SIGINT and SIGTERM on to it, writes
// its exit status and peak RSS (KiB) to HELM_PEAK_RSS_OUT and exits, before
// the test framework can print anything. Run as a test, it is skipped.
func TestPeakRSSHelper(t *testing.T) {
	line := os.Getenv("HELM_PEAK_RSS_RUN")
	if line == "" {
		t.Skip("underPeakRSS's process")
	}
	argv := strings.Split(line, "\n")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	require.NoError(t, cmd.Start())
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		require.NoError(t, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok)
	require.NoError(t, os.WriteFile(os.Getenv("HELM_PEAK_RSS_OUT"), fmt.Appendf(nil, "%d %d\n", cmd.ProcessState.ExitCode(), ru.Maxrss), 0o600))
	os.Exit(0)
}
