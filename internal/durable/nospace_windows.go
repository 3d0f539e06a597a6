package durable

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// IsNoSpace reports whether err says the volume, or the owner's quota, is
// full (ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL, ERROR_DISK_QUOTA_EXCEEDED;
// and ENOSPC, which tests inject).
func IsNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) ||
		errors.Is(err, windows.ERROR_DISK_QUOTA_EXCEEDED) || errors.Is(err, syscall.ENOSPC)
}
