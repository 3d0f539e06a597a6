//go:build unix

package segment

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dirLock is the cross-process writer lock: flock(LOCK_EX) on dir/LOCK.
// The file stays open for the life of the Log; the lock is taken per Commit.
type dirLock struct{ f *os.File }

func openDirLock(dir string) (*dirLock, error) {
	f, err := os.OpenFile(dir+"/LOCK", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("segment: open lock file: %w", err)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) lock() error {
	for {
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_EX)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("segment: flock %s: %w", l.f.Name(), err)
		}
		return nil
	}
}

func (l *dirLock) unlock() error {
	if err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("segment: unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

func (l *dirLock) close() error { return l.f.Close() }
