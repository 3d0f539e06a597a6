//go:build !windows

package segment

import (
	"errors"
	"syscall"
)

// noFollow makes an open of a file of the log fail on a symbolic link:
// a link planted in a log's directory would have the Log read the log
// from, and append it to, a file kept anywhere else.
const noFollow = syscall.O_NOFOLLOW

// isLinkRefused reports whether err is an open refused by noFollow
// (ELOOP; EMLINK on FreeBSD).
func isLinkRefused(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
