//go:build linux || darwin

package durable

import "golang.org/x/sys/unix"

// FreeBytes returns the bytes available to the caller on the file system
// holding path (statfs f_bavail), or -1 when it cannot tell.
func FreeBytes(path string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
