//go:build !unix && !windows

package durable

import (
	"errors"
	"os"
)

func tryLock(*os.File, bool) (bool, error) { return false, errors.ErrUnsupported }
func unlock(*os.File) error                { return errors.ErrUnsupported }

// dirLocks: this platform has no file locks.
const dirLocks = false
