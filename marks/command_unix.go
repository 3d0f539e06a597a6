//go:build unix

package marks

import (
	"os/exec"
	"syscall"
)

// killProcessGroup runs the command in its own process group and kills the
// whole group at the timeout, so `sh -c "sleep 600"` or `go test` does not
// leave children running after helm gives up.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
