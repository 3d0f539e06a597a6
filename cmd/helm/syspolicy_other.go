//go:build !unix

package main

import (
	"io/fs"
	"os"
)

// systemPolicyTrusted reports a missing policy as fs.ErrNotExist. File
// modes say nothing of who may write a file on Windows: its ACL is
// whoever installed it's to keep (an installer writes it for
// Administrators alone).
func systemPolicyTrusted(path string) error {
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return fs.ErrNotExist
		}
		return err
	}
	return nil
}
