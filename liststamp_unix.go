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

// fstatat returns the stamp of the file at rel by fstatat (not followed,
// if a symbolic link); rel ends in a NUL byte, which is not part of the
// name.
func (s *stampDir) fstatat(rel []byte) (fileStamp, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(s.fd, string(rel[:len(rel)-1]), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileStamp{}, false
	}
	return statStamp(&st), true
}

// stampFile returns the stamp of the file at path.
func stampFile(path string) (fileStamp, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileStamp{}, false
	}
	return statStamp(&st), true
}

func statStamp(st *unix.Stat_t) fileStamp {
	return fileStamp{ino: uint64(st.Ino), size: st.Size, mtime: unix.TimespecToNsec(st.Mtim), ctime: unix.TimespecToNsec(st.Ctim)}
}
