//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// systemPolicyOwner is the owner a system policy must have: root. Tests
// that cannot chown set it to their own uid.
var systemPolicyOwner = 0

func defaultSystemPolicy() string { return "/etc/helm/policy.toml" }

// systemPolicyTrusted reports why the system policy at path cannot be
// trusted: it (or, through a symlink, what it names) is not owned by
// root, or is writable by its group or others; or a directory it is in
// (as named, and as its links resolve) is one someone else than root
// can write, and so remove or replace it in (a directory with the sticky
// bit, as /tmp, keeps root's files root's). A missing file wraps
// fs.ErrNotExist; a link to a missing file is refused.
func systemPolicyTrusted(path string) error {
	if err := systemPolicyDirs(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			if l, lerr := os.Lstat(path); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
				return &hinted{Err: fmt.Errorf("system policy %s is a link to a file that is not there: helm does not guess whether the rules were taken away", path),
					Hint: "point the link at the policy file, or remove it (as root)"}
			}
			return fs.ErrNotExist
		}
		return &hinted{Err: fmt.Errorf("system policy %s: %w", path, err), Hint: "ask whoever keeps " + path + " (root) to make it readable: helm runs no action while the system policy cannot be read"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return &hinted{Err: fmt.Errorf("system policy %s is not a regular file", path), Hint: "replace it with the policy file (as root)"}
	case ok && int(st.Uid) != systemPolicyOwner:
		return &hinted{Err: fmt.Errorf("system policy %s is owned by uid %d, not root: helm does not use rules someone else can change", path, st.Uid),
			Hint: "chown root " + path + " (as root)"}
	case fi.Mode().Perm()&0o022 != 0:
		return &hinted{Err: fmt.Errorf("system policy %s is writable by its group or others (mode %04o): helm does not use rules someone else can change", path, fi.Mode().Perm()),
			Hint: "chmod go-w " + path + " (as root)"}
	}
	return nil
}

// systemPolicyDirs judges the directories the system policy at path is
// in, up to /, as path names them and as its links resolve: whoever can
// write one of them can take the rules away, or put others in their
// place. Directories not there are not judged (nor is what is below
// them: nothing is there to take away).
func systemPolicyDirs(path string) error {
	paths := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		p, err := filepath.Abs(p)
		if err != nil {
			return nil
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if err := systemPolicyDir(path, dir); err != nil {
				return err
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// systemPolicyDir judges dir, a directory the system policy at path is
// in.
func systemPolicyDir(path, dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &hinted{Err: fmt.Errorf("system policy %s: directory %s: %w", path, dir, err), Hint: "ask whoever keeps " + path + " (root) to make its directory readable: helm runs no action while the system policy cannot be read"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case ok && int(st.Uid) != systemPolicyOwner && st.Uid != 0:
		return &hinted{Err: fmt.Errorf("system policy %s is in directory %s, owned by uid %d, not root: whoever owns it can take the rules away or replace them", path, dir, st.Uid),
			Hint: "chown root " + dir + " (as root)"}
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return &hinted{Err: fmt.Errorf("system policy %s is in directory %s, writable by its group or others (mode %04o): they can take the rules away or replace them", path, dir, fi.Mode().Perm()),
			Hint: "chmod go-w " + dir + " (as root)"}
	}
	return nil
}
