package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxHomeFile bounds what helm reads of a small file of the home
// (config.toml, policy.toml): 4 MiB is far beyond any written by hand.
const maxHomeFile = 4 << 20

// openRegular opens path for reading without ever blocking on what it
// finds: O_NONBLOCK where the system has it (so opening a FIFO returns at
// once), then the opened file is looked at and refused unless it is a
// regular file (a FIFO, /dev/zero, a socket, a directory). The recorded
// agent can put any of them where helm reads (a transcript_path, the
// home's policy.toml): each would hold a hook until the host's timeout
// lets the call go.
func openRegular(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file (%s)", fileKind(fi.Mode()))}
	}
	return f, nil
}

// readRegular reads the regular file at path, at most limit bytes: a
// larger file is an error naming the limit.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// readLimited reads r to its end, at most limit bytes.
func readLimited(r io.Reader, path string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}

// fileKind names a file's type for people.
func fileKind(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeDir != 0:
		return "a directory"
	}
	return "not a regular file"
}
