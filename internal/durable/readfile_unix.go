//go:build unix

package durable

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// ReadFileAt reads up to len(b) bytes of the file path from offset off and
// returns how many it read: fewer than len(b) when the file ends first. It
// costs three system calls (open, one pread, close; os.Open and
// os.ReadFile make more), for callers that read one small file per log, or
// per voyage in a listing. A pread of a regular file returns less than
// asked only at its end, so a short count is not read again (that would
// cost a fourth call whenever the file ends inside b, as a trimmed
// segment does). A missing file is an error matching
// fs.ErrNotExist.
func ReadFileAt(path string, b []byte, off int64) (int, error) {
	var fd int
	for {
		var err error
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return 0, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Pread(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		return n, nil
	}
}
