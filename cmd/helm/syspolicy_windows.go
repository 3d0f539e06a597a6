package main

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// defaultSystemPolicy is helm\policy.toml in the ProgramData folder, as
// Windows knows it (C:\ProgramData): not as %ProgramData% says, which
// the recorded agent sets as it likes, pointing helm at a folder with no
// rules in it. No folder known, no system policy.
func defaultSystemPolicy() string {
	dir, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0)
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, "helm", "policy.toml")
}
