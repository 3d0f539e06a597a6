//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// modesMatter says that file owners and modes decide who can change a
// home: untrusted homes are refused (safehome.go).
const modesMatter = true

// ownerOf returns the uid that owns the file info describes.
func ownerOf(info fs.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
