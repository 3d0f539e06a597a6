//go:build unix

package main

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
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

// groupPrivateTo reports whether the file's group is a user private group
// of owner: no user but owner has it as primary group (/etc/passwd), and
// it lists no member but owner (/etc/group). A group helm cannot find in
// those files (a directory service's) is not known to be private.
func groupPrivateTo(info fs.FileInfo, owner int) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	gid := int(st.Gid)
	name, found := "", false
	ok = scanColonFile("/etc/passwd", func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		uid, err1 := strconv.Atoi(f[2])
		pgid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return true
		}
		if uid == owner {
			name = f[0]
		}
		return pgid != gid || uid == owner // another user's primary group: not private
	})
	if !ok || name == "" {
		return false
	}
	ok = scanColonFile("/etc/group", func(f []string) bool {
		if len(f) < 4 || f[2] != strconv.Itoa(gid) {
			return true
		}
		found = true
		for _, m := range strings.Split(f[3], ",") {
			if m != "" && m != name {
				return false
			}
		}
		return true
	})
	return ok && found
}

// scanColonFile calls fn with the fields of each line of a passwd-style
// file until it returns false; it reports whether every line passed and
// the file could be read.
func scanColonFile(path string, fn func(fields []string) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !fn(strings.Split(line, ":")) {
			return false
		}
	}
	return sc.Err() == nil
}
