//go:build !unix

package durable

import (
	"errors"
	"io"
	"os"
)

// ReadFileAt reads up to len(b) bytes of the file path from offset off and
// returns how many it read: fewer than len(b) only when the file ends
// first. (On unix it costs three system calls; here it is os.Open, ReadAt
// and Close.) A missing file is an error matching fs.ErrNotExist.
func ReadFileAt(path string, b []byte, off int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}
