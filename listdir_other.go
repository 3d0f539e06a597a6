//go:build !linux

package helm

import (
	"io"
	"os"
)

// eachDirEntry calls fn with the name of every entry of dir, and whether
// it is a directory (not followed, if a symbolic link). name is valid
// only during the call.
func eachDirEntry(dir string, fn func(name []byte, isDir bool)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			fn([]byte(e.Name()), e.IsDir())
		}
		if err != nil || len(entries) == 0 {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
