package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// bindReadOnly mounts src on dst read-only (mount --bind, then mount -o
// remount,bind,ro), unmounting it when the test ends. It skips the test
// where mounting is not permitted.
func bindReadOnly(t *testing.T, src, dst string) {
	t.Helper()
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("bind-mounting a read-only home needs CAP_SYS_ADMIN: mount --bind %s %s: %v", src, dst, err)
		}
		require.NoError(t, err, "mount --bind")
	}
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dst, 0), "umount %s", dst) })
	if err := unix.Mount("", dst, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("remounting a bind mount read-only needs CAP_SYS_ADMIN: %v", err)
		}
		require.NoError(t, err, "mount -o remount,bind,ro")
	}
	require.ErrorIs(t, os.WriteFile(filepath.Join(dst, "probe"), nil, 0o600), unix.EROFS, "the home is read-only")
}
