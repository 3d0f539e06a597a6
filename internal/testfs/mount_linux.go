package testfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size bytes on a fresh directory and unmounts
// it when the test ends (after the cleanups the test registers later,
// such as closing logs).
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size))
	if errors.Is(err, unix.EPERM) {
		t.Skipf("mount a %d-byte tmpfs on %s: %v: a disk-full test needs a real small file system; run it as root (or with CAP_SYS_ADMIN)", size, dir, err)
	}
	if err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the tmpfs on %s: %v", dir, err)
		}
	})
	return dir
}

// BindReadOnly mounts src on dst read-only (mount --bind, then mount -o
// remount,bind,ro) and unmounts it when the test ends.
func BindReadOnly(t testing.TB, src, dst string) {
	t.Helper()
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("bind-mounting a read-only home needs CAP_SYS_ADMIN: mount --bind %s %s: %v", src, dst, err)
		}
		t.Fatalf("mount --bind %s %s: %v", src, dst, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dst, 0); err != nil {
			t.Errorf("umount %s: %v", dst, err)
		}
	})
	if err := unix.Mount("", dst, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("remounting a bind mount read-only needs CAP_SYS_ADMIN: %v", err)
		}
		t.Fatalf("mount -o remount,bind,ro %s: %v", dst, err)
	}
	if err := os.WriteFile(filepath.Join(dst, "probe"), nil, 0o600); !errors.Is(err, unix.EROFS) {
		t.Fatalf("%s is not read-only after the remount: writing a file gave %v", dst, err)
	}
}
