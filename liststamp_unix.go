//go:build unix

package helm

import "golang.org/x/sys/unix"

// stampDir is an open directory (a home's voyages) whose files' stamps
// are taken by paths relative to it (liststamp_linux.go, and
// liststamp_unixother.go on other Unixes).
type stampDir struct{ fd int }

func openStampDir(dir string) (*stampDir, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &stampDir{fd: fd}, nil
}

func (s *stampDir) close() { unix.Close(s.fd) }
