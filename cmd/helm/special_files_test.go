//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSpecialFilesNeverHangTheCLI: a FIFO given to file-contents, or found
// by a project mark where its README.md should be, is refused promptly
// with a clear message; the observation records it as unreadable.
func TestSpecialFilesNeverHangTheCLI(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	require.NoError(t, unix.Mkfifo(filepath.Join(b.dir, "fifo"), 0o644))
	require.NoError(t, unix.Mkfifo(filepath.Join(b.dir, "README.md"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b.dir, "Cargo.toml"), []byte("[package]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b.dir, "go.mod"), []byte("module example.com/special\n"), 0o644))
	b.ok("voyage", "new", "special files")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"observe", "file-contents", "--read", "fifo"}, "helm: observed, but fifo could not be read: not a regular file (FIFO)\n"},
		{[]string{"observe", "file-contents", "--read", "/dev/zero"}, "helm: observed, but /dev/zero could not be read: not a regular file (character device)\n"},
		{[]string{"observe", "rust-project", "."}, "helm: observed, but README.md could not be read: not a regular file (FIFO)\n"},
		{[]string{"observe", "go-project", "."}, "helm: observed, but README.md could not be read: not a regular file (FIFO)\n"},
		{[]string{"observe", "directory-tree", "."}, ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := b.run(tt.args...)
		assert.Contains(t, stdout, "Observed ")
		if tt.want != "" {
			assert.Equal(t, 3, code, "recorded, but a file could not be read: helm %v\n%s", tt.args, stderr)
			assert.Equal(t, tt.want+"Try: helm slate erase "+strings.Join(tt.args[1:], " ")+eraseWhy+"\n", stderr)
		} else {
			assert.Equal(t, 0, code, "helm %v\n%s", tt.args, stderr)
			assert.Empty(t, stderr)
		}
	}
	assert.Contains(t, b.ok("slate", "list"), "5 observations")
}
