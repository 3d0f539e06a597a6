//go:build !unix

package helm

import (
	"os"
	"path/filepath"
)

// stampDir takes the stamps of files below one directory (a home's
// voyages), by paths relative to it. Here a stamp has no inode number
// and no change time: the size and modification time alone.
type stampDir struct{ dir string }

func openStampDir(dir string) (*stampDir, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return &stampDir{dir: dir}, nil
}

func (s *stampDir) close() {}

// stamp returns the stamp of the file at rel (not followed, if a symbolic
// link); rel ends in a NUL byte, which is not part of the name.
func (s *stampDir) stamp(rel []byte) (fileStamp, bool) {
	if len(rel) == 0 || rel[len(rel)-1] != 0 {
		return fileStamp{}, false
	}
	return stampFile(filepath.Join(s.dir, filepath.FromSlash(string(rel[:len(rel)-1]))))
}

func stampFile(path string) (fileStamp, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}, false
	}
	return fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}, true
}
