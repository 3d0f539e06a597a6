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

// dirLock is the cross-process writer lock: the log's directory itself
// (where the platform can lock one: a file named LOCK can be deleted
// while a writer holds it, and the next writer would then lock a new
// file and write alongside it) and dir/LOCK (which writers of format 1
// lock, so that they and today's writers exclude each other). Both stay
// open for the life of the Log; the lock is taken per Commit, directory
// first.
type dirLock struct{ d, f *durable.Lock }

func openDirLock(dir string) (*dirLock, error) {
	d, err := durable.OpenDirLock(dir)
	if err != nil {
		return nil, fmt.Errorf("segment: open %s to lock it: %w", dir, err)
	}
	f, err := durable.OpenLock(filepath.Join(dir, lockName))
	if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, fmt.Errorf("segment: open lock file: %w", err)
	}
	return &dirLock{d: d, f: f}, nil
}

// lock takes the lock, waiting while another process holds it until
// giveUp reports true (nil: wait as long as it takes). It first tries
// without blocking — the common case costs two system calls — then polls
// with a backoff from 50 µs to maxLockPoll, so that a caller whose context ends
// (Ctrl-C) is never stuck behind a process that holds the lock. It
// returns errLockWait when it gave up.
func (l *dirLock) lock(giveUp func() bool) error {
	wait := 50 * time.Microsecond
	for {
		ok, err := tryBoth(l.d, l.f, true)
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
		wait = min(2*wait, maxLockPoll)
	}
}

// maxLockPoll is the longest pause between two tries of a process that
// waits for the lock: shorter than the gap a busy Log leaves the lock free
// in (turnGap, pipeline.go).
const maxLockPoll = time.Millisecond

// tryBoth takes d (if any) then f, exclusive or shared, or neither.
func tryBoth(d, f *durable.Lock, exclusive bool) (bool, error) {
	try := func(l *durable.Lock) (bool, error) {
		if exclusive {
			return l.TryLock()
		}
		return l.TryRLock()
	}
	if d != nil {
		if ok, err := try(d); !ok || err != nil {
			return false, err
		}
	}
	if f != nil {
		ok, err := try(f)
		if !ok || err != nil {
			if d != nil {
				d.Unlock()
			}
			return false, err
		}
	}
	return true, nil
}

// errLockWait: the wait for the writer lock was given up.
var errLockWait = errors.New("segment: gave up waiting for the writer lock")

func (l *dirLock) unlock() error {
	err := l.f.Unlock()
	if l.d != nil {
		if derr := l.d.Unlock(); err == nil {
			err = derr
		}
	}
	if err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	return nil
}

func (l *dirLock) close() error {
	err := l.f.Close()
	if l.d != nil {
		if derr := l.d.Close(); err == nil {
			err = derr
		}
	}
	return err
}

// sharedLock takes the lock shared for a reader that must see the log
// with no write in progress: writers hold it exclusively while they
// write. It polls, so that ctx can end the wait. ok is false, with no
// lock taken, when nothing can be locked: no LOCK file where directories
// cannot be locked (then no writer ever ran in dir). Opening read-only
// works on a read-only file system.
func sharedLock(ctx context.Context, dir string) (unlock func(), ok bool, err error) {
	d, err := durable.OpenDirLock(dir)
	if err != nil {
		return nil, false, fmt.Errorf("segment: open %s to lock it: %w", dir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := durable.OpenLockReadOnly(path)
	if errors.Is(err, fs.ErrNotExist) {
		f = nil
	} else if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, false, fmt.Errorf("segment: open %s: %w", path, err)
	}
	release := func() {
		if f != nil {
			f.Close()
		}
		if d != nil {
			d.Close()
		}
	}
	if d == nil && f == nil {
		return nil, false, nil
	}
	for {
		ok, err := tryBoth(d, f, false)
		if err != nil {
			release()
			return nil, false, fmt.Errorf("segment: %w", err)
		}
		if ok {
			return release, true, nil // closing releases the locks
		}
		select {
		case <-ctx.Done():
			release()
			return nil, false, ctx.Err()
		case <-time.After(maxLockPoll):
		}
	}
}
