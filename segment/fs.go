package segment

import (
	"io"
	"os"
)

// FS is the file-system seam of a Log. It exists so tests can inject short
// writes, failing fsyncs and a full disk into exactly the calls a Log makes;
// production code leaves Options.FS nil and gets the operating system.
//
// The advisory lock on dir/LOCK is always taken on the real file system.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(name string, perm os.FileMode) error
}

// File is an open file of an FS. Sync is fsync (used for new files and
// directories); Datasync is fdatasync (used after appending records).
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Sync() error
	Datasync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
}

// OSFS is the operating system's file system.
type OSFS struct{}

func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (OSFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (OSFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }
func (OSFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(name string) error                     { return os.Remove(name) }
func (OSFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }

type osFile struct{ *os.File }

func (f osFile) Datasync() error { return fdatasync(f.File) }
