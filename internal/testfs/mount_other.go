//go:build !linux

package testfs

import "testing"

// Tmpfs needs Linux's tmpfs: the test is skipped.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	t.Skip("a small tmpfs needs Linux")
	return ""
}

// BindReadOnly needs Linux's bind mounts: the test is skipped.
func BindReadOnly(t testing.TB, src, dst string) {
	t.Helper()
	t.Skip("a read-only bind mount needs Linux")
}
