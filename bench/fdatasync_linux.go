package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync is the raw limit the bench compares helm with: the data of f
// on the disk, without its metadata where the size did not change.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
