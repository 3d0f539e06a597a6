package durable

import (
	"os"

	"golang.org/x/sys/windows"
)

// openFile opens name like os.OpenFile, but shares delete access with
// other handles (FILE_SHARE_DELETE), so a file that is open can still be
// renamed or removed, as on unix: segment renames a new segment into place
// while it holds it open. Directories open read-only (for SyncDir).
// O_APPEND is left to os.OpenFile.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&os.O_APPEND != 0 {
		return os.OpenFile(name, flag, perm)
	}
	if name == "" {
		return nil, &os.PathError{Op: "open", Path: name, Err: windows.ERROR_FILE_NOT_FOUND}
	}
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_CREATE != 0 {
		access |= windows.GENERIC_WRITE
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	if access == windows.GENERIC_READ {
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS // needed to open a directory
	}
	var createmode uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		createmode = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		createmode = windows.OPEN_ALWAYS
	default:
		createmode = windows.OPEN_EXISTING
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, createmode, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}
