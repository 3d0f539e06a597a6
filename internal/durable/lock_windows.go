package durable

import (
	"os"

	"golang.org/x/sys/windows"
)

// The lock covers one byte at offset 0 of the lock file, which holds no
// data (a LockFileEx lock is mandatory for the bytes it covers).

func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	switch err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol); err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION, windows.ERROR_IO_PENDING:
		return false, nil
	default:
		return false, err
	}
}

func unlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// dirLocks: a directory handle cannot be locked with LockFileEx.
const dirLocks = false
