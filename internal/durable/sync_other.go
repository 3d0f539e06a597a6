//go:build !windows

package durable

import "os"

// syncFile is fsync(2) (F_FULLFSYNC on darwin: Go's File.Sync).
func syncFile(f *os.File) error { return f.Sync() }
