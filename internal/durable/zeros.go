package durable

import "fmt"

// zeroBuf is the source of WriteZeros. It is never written to; as
// untouched BSS it costs no memory until read.
var zeroBuf [1 << 20]byte

// WriteZeros preallocates f over [from, to) by writing real zeros, in
// writes of at most 1 MiB, on every platform. It does not use
// fallocate(2), F_PREALLOCATE or SetFileValidData: those leave unwritten
// extents whose first write converts them with journaled metadata, so a
// later append's fdatasync would commit metadata after all. The zeros are
// not synced: the caller's next Datasync covers them.
func WriteZeros(f File, from, to int64) error {
	for off := from; off < to; {
		n := min(int64(len(zeroBuf)), to-off)
		w, err := f.WriteAt(zeroBuf[:n], off)
		if err == nil && int64(w) != n {
			err = fmt.Errorf("short write (%d of %d bytes)", w, n)
		}
		if err != nil {
			return fmt.Errorf("preallocate zeros at offset %d: %w", off, err)
		}
		off += n
	}
	return nil
}
