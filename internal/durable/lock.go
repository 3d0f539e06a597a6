package durable

import (
	"fmt"
	"os"
)

// Lock is a lock on a file that processes share: held exclusively by one
// writer, or shared by readers that must see no write in progress. It is
// flock(2) on unix and LockFileEx on Windows: per open file, released on
// Close or when the process dies (see the package documentation). A Lock
// is taken either shared or exclusive, never converted from one to the
// other. The Try methods never block, so a caller can poll and give up
// when its context ends.
type Lock struct{ f *os.File }

// OpenLock opens the lock file path, creating it (mode 0600) if needed.
func OpenLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return &Lock{f: f}, nil
}

// OpenLockReadOnly opens the existing lock file path read-only, which
// works on a read-only file system; it is enough to take the shared lock.
// It returns an error matching fs.ErrNotExist when there is no such file.
func OpenLockReadOnly(path string) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Name returns the lock file's path.
func (l *Lock) Name() string { return l.f.Name() }

// TryLock takes the lock exclusively if no other open file holds it in
// any mode, and reports whether it did.
func (l *Lock) TryLock() (bool, error) { return l.try(true) }

// TryRLock takes the lock shared if no other open file holds it
// exclusively, and reports whether it did.
func (l *Lock) TryRLock() (bool, error) { return l.try(false) }

func (l *Lock) try(exclusive bool) (bool, error) {
	ok, err := tryLock(l.f, exclusive)
	if err != nil {
		op := "lock (shared)"
		if exclusive {
			op = "lock"
		}
		return false, fmt.Errorf("%s %s: %w", op, l.f.Name(), err)
	}
	return ok, nil
}

// Unlock releases the lock this Lock holds.
func (l *Lock) Unlock() error {
	if err := unlock(l.f); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close closes the lock file, which releases any lock it holds.
func (l *Lock) Close() error { return l.f.Close() }

// OpenDirLock opens a lock on the directory dir itself, for platforms
// where a directory can be locked (unix: flock on the directory). A lock
// file can be deleted while a process holds its lock, and the next
// process then locks a new file of the same name while the first still
// writes; a directory that holds files cannot be deleted, so its lock
// cannot be sidestepped that way. It returns nil, nil where directories
// cannot be locked (Windows: there a lock file cannot be deleted while it
// is open, which closes the same hole).
func OpenDirLock(dir string) (*Lock, error) {
	if !dirLocks {
		return nil, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Lock{f: f}, nil
}
