//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair through the kernel's /dev/ptmx (no
// dependency needed): the controller, which the test reads, and the
// terminal, which helm is given as its stderr. It skips the test where
// the system has no pseudo-terminals.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: unlock: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}

// TestObserveCommandStreamsToATerminal: with stderr on a terminal, the
// program's output (both streams) shows there as it runs, escaped as all
// output to a terminal is, before helm's own line; it is captured all the
// same. (On a pipe it is not shown: observe_failed_exit_status.txtar.)
func TestObserveCommandStreamsToATerminal(t *testing.T) {
	t.Parallel()
	controller, terminal := openPTY(t)
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&shown, controller) // ends with EIO once the terminal side is closed
	}()

	h := newHarness(t)
	h.start("stream")
	var stdout bytes.Buffer
	err := h.main().Run(context.Background(),
		[]string{"observe", "command", "--out", "obs.json", "--", "sh", "-c", `echo out-line; echo err-line >&2; printf '\033[31mred\n'; exit 2`},
		nil, &stdout, terminal)
	code := ReportError(terminal, err)
	require.NoError(t, terminal.Close())
	<-done

	assert.Equal(t, 3, code)
	assert.Contains(t, stdout.String(), "Observed Command: sh -c ")
	got := shown.String()
	t.Logf("the terminal showed:\n%s", got)
	// Both streams, each line as it came (the two pipes are read apart,
	// so their order between them is not fixed), escaped; the terminal
	// adds the \r.
	assert.Contains(t, got, "out-line\r\n")
	assert.Contains(t, got, "err-line\r\n")
	assert.Contains(t, got, "\\x1b[31mred\r\n")
	assert.NotContains(t, got, "\x1b", "nothing drives the terminal")
	assert.Contains(t, got, "helm: observed, but the command exited with status 2\r\n")
	assert.Less(t, bytes.Index(shown.Bytes(), []byte("out-line")), bytes.Index(shown.Bytes(), []byte("helm: observed")))

	obs, err := os.ReadFile(h.Dir + "/obs.json")
	require.NoError(t, err)
	assert.Contains(t, string(obs), `"stdout": "out-line\n\u001b[31mred\n"`, "captured as well")
	assert.Contains(t, string(obs), `"stderr": "err-line\n"`)
}
