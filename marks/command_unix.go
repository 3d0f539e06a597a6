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

// killLeftovers kills what the program left running in its process group
// once it has ended (sh -c "server &"): an observation looks, it leaves
// nothing behind. The group's id, the program's pid, cannot be taken by
// another process while any member of the group lives; an empty group
// is no longer there to kill (ESRCH, ignored). A child that left the group
// (setsid) is out of reach.
func killLeftovers(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.ProcessState != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
