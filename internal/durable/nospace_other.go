//go:build !windows

package durable

import (
	"errors"
	"syscall"
)

// IsNoSpace reports whether err says the file system, or the owner's
// quota, is full (ENOSPC, EDQUOT).
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
