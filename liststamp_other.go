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

func (s *stampDir) stamp(rel string) (fileStamp, bool) {
	return stampFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
}

func stampFile(path string) (fileStamp, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}, false
	}
	return fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}, true
}
