//go:build !linux

package segment

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
