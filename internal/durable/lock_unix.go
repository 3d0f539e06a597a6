//go:build unix

package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		switch err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		default:
			return false, err
		}
	}
}

func unlock(f *os.File) error {
	for {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != unix.EINTR {
			return err
		}
	}
}

// dirLocks: flock locks a directory as it does a file.
const dirLocks = true
