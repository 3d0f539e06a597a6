package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is the file-system seam of helm's storage. It exists so tests can
// inject short writes, failing fsyncs and a full disk into exactly the
// calls the storage makes; production code uses OSFS.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(name string, perm os.FileMode) error
}

// File is an open file of an FS. Sync makes the file's data and metadata
// durable (fsync: used for new files and directories); Datasync makes its
// data durable, with the metadata needed to read it back (fdatasync: used
// after appending). See the package documentation for what each is on
// every platform.
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

// OpenFile opens a file like os.OpenFile (on Windows, sharing delete
// access: see the package documentation).
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := openFile(name, flag, perm)
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

func (f osFile) Datasync() error { return datasync(f.File) }
func (f osFile) Sync() error     { return syncFile(f.File) }

// SyncDir makes the entries of directory dir durable: a file created or
// renamed in it survives a power cut once SyncDir returns. It opens dir
// read-only through fsys and syncs it (nothing on Windows: see the package
// documentation).
func SyncDir(fsys FS, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// MkdirAll creates directory dir and any missing parents, as os.MkdirAll
// does, and makes each new directory's entry durable: it syncs the parent
// of every directory it created, so that a file later synced inside dir
// is not lost with a directory entry that never reached the disk.
func MkdirAll(fsys FS, dir string, perm os.FileMode) error {
	// The missing directories, innermost first.
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			break // let MkdirAll say what is wrong
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := SyncDir(fsys, filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

// Datasync makes f's data durable as File.Datasync does, for a file
// opened with os.OpenFile (an append-only one, which WriteAt refuses).
func Datasync(f *os.File) error { return datasync(f) }
