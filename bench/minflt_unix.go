//go:build unix

package main

import (
	"fmt"
	"os/exec"
	"syscall"
)

// minorFaults runs cmd and returns its minor page faults.
func minorFaults(cmd *exec.Cmd) (float64, error) {
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", cmd, err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1, nil
	}
	return float64(ru.Minflt), nil
}
