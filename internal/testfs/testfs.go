// Package testfs gives tests the small real file systems they need: a
// tmpfs of a few KiB to fill a disk for real, and a read-only bind mount
// to prove that reading writes nothing. Both need Linux and the privilege
// to mount (root, or CAP_SYS_ADMIN); without it the test is skipped with a
// message saying so.
package testfs
