//go:build !unix

package main

import "os"

// openNoBlock opens path read-only. Systems without O_NONBLOCK for files
// have no FIFOs that block on open either (Windows' named pipes live in
// their own namespace and fail to open rather than wait).
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
