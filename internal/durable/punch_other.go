//go:build !linux

package durable

// PunchHole discards the bytes of f in [off, off+n): they read back as
// zeros and the file keeps its size. On Linux the blocks are deallocated;
// here the bytes are overwritten with zeros, which erases them but frees
// no disk space. Not synced: the caller's next Datasync covers it.
func PunchHole(f File, off, n int64) error { return WriteZeros(f, off, off+n) }
