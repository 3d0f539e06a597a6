//go:build !linux

package durable

import "os"

// datasync is a full sync where the platform has no cheaper call that is
// as durable: F_FULLFSYNC on darwin, FlushFileBuffers on Windows, fsync(2)
// elsewhere (see the package documentation).
func datasync(f *os.File) error { return syncFile(f) }
