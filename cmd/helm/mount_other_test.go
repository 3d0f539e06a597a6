//go:build !linux

package main

import "testing"

// bindReadOnly needs Linux's bind mounts.
func bindReadOnly(t *testing.T, src, dst string) {
	t.Helper()
	t.Skip("a read-only bind mount needs Linux")
}
