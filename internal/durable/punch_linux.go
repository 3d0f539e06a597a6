package durable

import (
	"errors"

	"golang.org/x/sys/unix"
)

// PunchHole discards the bytes of f in [off, off+n): they read back as
// zeros and the file keeps its size. On Linux it deallocates the blocks
// wholly inside the range (fallocate(2) PUNCH_HOLE), so they no longer
// take disk space; where the file system cannot, and on other platforms,
// it writes zeros, which erases the bytes but frees nothing. Not synced:
// the caller's next Datasync covers it.
func PunchHole(f File, off, n int64) error {
	if fd, ok := f.(interface{ Fd() uintptr }); ok && n > 0 {
		err := unix.Fallocate(int(fd.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
			return err
		}
	}
	return WriteZeros(f, off, off+n)
}
