package marks

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// notRegularError refuses a file that is not a regular file: reading a
// FIFO blocks until something writes to it, a device such as /dev/zero
// never ends, and a socket cannot be read as a file at all. Marks record
// it as they record any unreadable file.
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

// openRegular opens a regular file for reading, following symbolic links,
// and never blocks on what it finds: the file is looked at first and
// refused unless it is regular, then opened without blocking (O_NONBLOCK
// where the system has it) and looked at again through the open
// descriptor, which closes the window in which the file could have been
// swapped for a FIFO between the look and the open. The file returned
// reads in the ordinary, blocking way.
func openRegular(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, info.Mode()); err != nil {
		return nil, err
	}
	return openNoBlock(path)
}

// readRegular reads a whole regular file (see openRegular), a chunk at a
// time, checking ctx between chunks.
func readRegular(ctx context.Context, path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 && info.Size() < 1<<40 {
		b.Grow(int(info.Size()) + bytes.MinRead)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := b.ReadFrom(io.LimitReader(f, readChunk))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b.Bytes(), nil
		}
	}
}
