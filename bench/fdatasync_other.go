//go:build !linux

package main

import "os"

// fdatasync is f.Sync where the system has no fdatasync (darwin, windows):
// the bench's raw limit there is a full sync, as helm's is.
func fdatasync(f *os.File) error { return f.Sync() }
