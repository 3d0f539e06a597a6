//go:build unix && !linux

package helm

import (
	"golang.org/x/sys/unix"
)

// On Unixes other than Linux a stamp is an fstatat relative to the
// stampDir, which walks two names fewer than a stat of the whole path.

// stamp returns the stamp of the file at rel (not followed, if a symbolic
// link); rel ends in a NUL byte, which is not part of the name.
func (s *stampDir) stamp(rel []byte) (fileStamp, bool) {
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
