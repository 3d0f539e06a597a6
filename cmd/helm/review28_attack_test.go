//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSystemPolicyTheAgentCanTakeAwayIsRefused: a root-owned, 0644
// system policy is no system policy when it sits in a directory someone
// other than root can write, directly or through a link: the agent
// removes it (helm then ran with no system rules at all) or renames its
// own file over it. helm refuses such a policy, exit 1, naming the
// directory, and runs nothing; a directory with the sticky bit (as /tmp)
// keeps root's file root's and is fine.
func TestSystemPolicyTheAgentCanTakeAwayIsRefused(t *testing.T) {
	tests := []struct {
		name string
		root bool
		// place puts the policy text where the system policy path the
		// test returns finds it.
		place func(t *testing.T, text string) string
		want  string
	}{
		{"in a directory others can write", false, func(t *testing.T, text string) string {
			dir := filepath.Join(t.TempDir(), "helm")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chmod(dir, 0o777))
			p := filepath.Join(dir, "policy.toml")
			require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
			return p
		}, "writable by its group or others (mode 0777): they can take the rules away or replace them"},
		{"in a directory another user owns", true, func(t *testing.T, text string) string {
			dir := filepath.Join(t.TempDir(), "helm")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chown(dir, otherUID, otherUID))
			p := filepath.Join(dir, "policy.toml")
			require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
			return p
		}, "owned by uid 12345, not root: whoever owns it can take the rules away or replace them"},
		{"a link to a file in a directory others can write", false, func(t *testing.T, text string) string {
			dir := filepath.Join(t.TempDir(), "team")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chmod(dir, 0o777))
			target := filepath.Join(dir, "rules.toml")
			require.NoError(t, os.WriteFile(target, []byte(text), 0o644))
			link := filepath.Join(t.TempDir(), "policy.toml")
			require.NoError(t, os.Symlink(target, link))
			return link
		}, "writable by its group or others (mode 0777)"},
		{"a link to a file that is gone", false, func(t *testing.T, text string) string {
			link := filepath.Join(t.TempDir(), "policy.toml")
			require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "removed.toml"), link))
			return link
		}, "is a link to a file that is not there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("making a directory another user's (os.Chown) needs root; CI runs these as root")
			}
			h, g := guardRepo(t, false, "")
			require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
			h.SystemPolicy = tt.place(t, denyMain)
			before := remoteRefs(t, g, g.Bare)

			r := h.fails(1, "action", "push", "--branch", "main")
			assert.Contains(t, r.Stderr, "system policy "+h.SystemPolicy+" ")
			assert.Contains(t, r.Stderr, tt.want)
			assert.Contains(t, r.Stderr, "Try: ")
			assert.Equal(t, before, remoteRefs(t, g, g.Bare), "the push ran")
		})
	}

	t.Run("in a sticky directory everyone can write", func(t *testing.T) {
		h, g := guardRepo(t, false, "")
		require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
		dir := filepath.Join(t.TempDir(), "tmp")
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.Chmod(dir, 0o777|fs.ModeSticky))
		h.SystemPolicy = filepath.Join(dir, "policy.toml")
		require.NoError(t, os.WriteFile(h.SystemPolicy, []byte(denyMain), 0o644))
		before := remoteRefs(t, g, g.Bare)

		r := h.fails(4, "action", "push", "--branch", "main")
		assert.Contains(t, r.Stderr, `denied by rule "nobody pushes to main"`)
		assert.Equal(t, before, remoteRefs(t, g, g.Bare))
	})
}
