//go:build unix && !linux

package helm

// On Unixes other than Linux a stamp is an fstatat relative to the
// stampDir, which walks two names fewer than a stat of the whole path.

// stamp returns the stamp of the file at rel (not followed, if a symbolic
// link); rel ends in a NUL byte, which is not part of the name.
func (s *stampDir) stamp(rel []byte) (fileStamp, bool) {
	return s.fstatat(rel)
}
