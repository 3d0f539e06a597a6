//go:build unix

package segment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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

// lock takes the lock, waiting while another process holds it until
// giveUp reports true (nil: wait as long as it takes). It first tries
// without blocking — the common case costs one system call — then polls
// with a backoff from 50 µs to 5 ms, so that a caller whose context ends
// (Ctrl-C) is never stuck behind a process that holds the lock. It
// returns errLockWait when it gave up.
func (l *dirLock) lock(giveUp func() bool) error {
	wait := 50 * time.Microsecond
	for {
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			return fmt.Errorf("segment: flock %s: %w", l.f.Name(), err)
		}
		if giveUp != nil && giveUp() {
			return errLockWait
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// errLockWait: the wait for the writer lock was given up.
var errLockWait = errors.New("segment: gave up waiting for the writer lock")

func (l *dirLock) unlock() error {
	if err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("segment: unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

func (l *dirLock) close() error { return l.f.Close() }

// sharedLock takes flock(LOCK_SH) on dir/LOCK for a reader that must see
// the log with no write in progress: writers hold the lock exclusively
// while they write. It polls, so that ctx can end the wait. ok is false,
// with no lock taken, when there is no LOCK file: no writer ever ran in
// dir, so none is in progress. Opening LOCK read-only works on a
// read-only file system.
func sharedLock(ctx context.Context, dir string) (unlock func(), ok bool, err error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("segment: open %s: %w", path, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return func() {
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, true, nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			f.Close()
			return nil, false, fmt.Errorf("segment: flock (shared) %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
