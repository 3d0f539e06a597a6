// Package regular opens files that must be regular files, never
// blocking on what it finds there: a FIFO blocks a reader until something
// writes to it, /dev/zero never ends, a socket cannot be read. Marks read
// what a person or an agent points them at; the hook command reads files
// in the home and the transcript a payload names — all places the
// recorded agent can plant one.
package regular

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// notRegularError refuses a file that is not a regular file: reading a
// FIFO blocks until something writes to it, a device such as /dev/zero
// never ends, and a socket cannot be read as a file at all. Callers
// report it as any unreadable file.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	return "not a regular file (" + fileType(e.mode) + ")"
}

// fileType names a file's type for people: "FIFO", "socket", ...
func fileType(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "FIFO"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeDir != 0:
		return "directory"
	default:
		return "irregular file"
	}
}

// checkRegular refuses a directory ("is a directory", as open would say)
// or a file of any other type than regular.
func checkRegular(path string, mode fs.FileMode) error {
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		return &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	}
	return &fs.PathError{Op: "open", Path: path, Err: &notRegularError{mode: mode}}
}

// Open opens a regular file for reading, following symbolic links,
// and never blocks on what it finds: the file is looked at first and
// refused unless it is regular, then opened without blocking (O_NONBLOCK
// where the system has it) and looked at again through the open
// descriptor, which closes the window in which the file could have been
// swapped for a FIFO between the look and the open. The file returned
// reads in the ordinary, blocking way.
func Open(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, info.Mode()); err != nil {
		return nil, err
	}
	return openNoBlock(path)
}

// ReadAll reads the regular file at path (see Open), at most limit
// bytes: a larger file is an error naming the limit.
func ReadAll(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, path, limit)
}

// ReadLimited reads r to its end, at most limit bytes: more is an error
// naming path and the limit.
func ReadLimited(r io.Reader, path string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}
