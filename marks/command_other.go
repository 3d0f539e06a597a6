//go:build !unix

package marks

import "os/exec"

// killProcessGroup keeps exec's default on systems without process groups:
// the program itself is killed at the timeout.
func killProcessGroup(*exec.Cmd) {}

// killLeftovers does nothing on systems without process groups: what the
// program started in the background may outlive it.
func killLeftovers(*exec.Cmd) {}
