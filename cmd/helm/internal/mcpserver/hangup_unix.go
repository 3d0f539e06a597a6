//go:build unix

package mcpserver

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// hangup is closed when out, a pipe or a socket the host reads, has lost
// its reader (the host went): poll says so of a pipe whose read end is
// closed. It looks until stop is closed; for another writer it is never
// closed.
func hangup(out io.Writer, stop <-chan struct{}) <-chan struct{} {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var fd int
	if rc.Control(func(d uintptr) { fd = int(d) }) != nil {
		return nil
	}
	gone := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A bounded wait, so that stop is seen: poll has no way to
			// wait for a channel.
			fds := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			n, err := unix.Poll(fds, 200)
			if err == unix.EINTR {
				continue
			}
			if err != nil || (n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0) {
				close(gone)
				return
			}
		}
	}()
	return gone
}
