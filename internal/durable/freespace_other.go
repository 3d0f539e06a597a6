//go:build !linux && !darwin && !windows

package durable

// FreeBytes returns -1: the free space is unknown here, and callers bound
// what they preallocate by their own steps alone.
func FreeBytes(string) int64 { return -1 }
