//go:build unix

package main

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// systemPolicyOwner is the owner a system policy must have: root. Tests
// that cannot chown set it to their own uid.
var systemPolicyOwner = 0

func defaultSystemPolicy() string { return "/etc/helm/policy.toml" }

// systemPolicyTrusted reports why the system policy at path cannot be
// trusted: it (or, through a symlink, what it names) is not owned by
// root, or is writable by its group or others. A missing file wraps
// fs.ErrNotExist.
func systemPolicyTrusted(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
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
