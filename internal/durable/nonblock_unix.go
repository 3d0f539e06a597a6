//go:build unix

package durable

import "syscall"

// openNonblock is added to every open: a FIFO or a device where a log's
// file should be must fail a read, never block the open (O_NONBLOCK does
// nothing to a regular file).
const openNonblock = syscall.O_NONBLOCK
