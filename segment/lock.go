package segment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/helmlog/helm/internal/durable"
)

// lockName is the writers' lock file in a log's directory: it holds no
// data; writers hold its lock exclusively while they write, readers that
// must see no write in progress take it shared.
const lockName = "LOCK"

// dirLock is the cross-process writer lock on dir/LOCK. The file stays
// open for the life of the Log; the lock is taken per Commit.
type dirLock struct{ l *durable.Lock }

func openDirLock(dir string) (*dirLock, error) {
	l, err := durable.OpenLock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("segment: open lock file: %w", err)
	}
	return &dirLock{l: l}, nil
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
		ok, err := l.l.TryLock()
		if err != nil {
			return fmt.Errorf("segment: %w", err)
		}
		if ok {
			return nil
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
	if err := l.l.Unlock(); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	return nil
}

func (l *dirLock) close() error { return l.l.Close() }

// sharedLock takes dir/LOCK shared for a reader that must see the log
// with no write in progress: writers hold the lock exclusively while they
// write. It polls, so that ctx can end the wait. ok is false, with no lock
// taken, when there is no LOCK file: no writer ever ran in dir, so none is
// in progress. Opening LOCK read-only works on a read-only file system.
func sharedLock(ctx context.Context, dir string) (unlock func(), ok bool, err error) {
	path := filepath.Join(dir, lockName)
	l, err := durable.OpenLockReadOnly(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("segment: open %s: %w", path, err)
	}
	for {
		ok, err := l.TryRLock()
		if err != nil {
			l.Close()
			return nil, false, fmt.Errorf("segment: %w", err)
		}
		if ok {
			return func() {
				l.Unlock()
				l.Close()
			}, true, nil
		}
		select {
		case <-ctx.Done():
			l.Close()
			return nil, false, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
