//go:build !unix

package durable

// openNonblock: no such flag here.
const openNonblock = 0
