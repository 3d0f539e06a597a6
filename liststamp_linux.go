package helm

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux a stamp is a statx relative to the stampDir, which walks two
// names fewer than a stat of the whole path, and allocates nothing (the
// path is passed as the caller's bytes, not converted from a string). A
// listing takes three per voyage, and they are most of its cost ("What a
// list trusts" in docs/design.md).

// noStatx is set once statx is found missing (Linux before 4.11): the
// stamps are then taken with fstatat.
var noStatx atomic.Bool

// statxMask is what a stamp holds.
const statxMask = unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME

// stamp returns the stamp of the file at rel (not followed, if a symbolic
// link); rel ends in a NUL byte, which is not part of the name.
func (s *stampDir) stamp(rel []byte) (fileStamp, bool) {
	if len(rel) == 0 || rel[len(rel)-1] != 0 {
		return fileStamp{}, false
	}
	if !noStatx.Load() {
		var st unix.Statx_t
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(s.fd), uintptr(unsafe.Pointer(&rel[0])),
			unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, statxMask, uintptr(unsafe.Pointer(&st)), 0)
		switch {
		case errno == 0 && st.Mask&statxMask == statxMask:
			return statxStamp(&st), true
		case errno == 0:
			// A file system that does not give all four: the stamp is
			// taken as fstatat takes it (what fingerprint recorded).
		case errno != unix.ENOSYS:
			return fileStamp{}, false
		default:
			noStatx.Store(true)
		}
	}
	return s.fstatat(rel)
}

func statxStamp(st *unix.Statx_t) fileStamp {
	return fileStamp{ino: st.Ino, size: int64(st.Size),
		mtime: st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec), ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec)}
}
