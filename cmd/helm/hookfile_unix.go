//go:build unix

package main

import (
	"os"
	"syscall"
)

// openNoBlock opens path read-only with O_NONBLOCK: opening a FIFO
// returns at once instead of waiting for a writer.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
