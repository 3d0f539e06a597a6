package segment

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrConflict is matched by a *ConflictError from AppendIf.
	ErrConflict = errors.New("segment: log tail moved")
	// ErrCorrupt is matched by every *CorruptionError.
	ErrCorrupt = errors.New("segment: log is corrupt")
	// ErrClosed is returned by every method of a closed Log.
	ErrClosed = errors.New("segment: log is closed")
	// ErrPoisoned is returned by Commit after a write or fsync of this Log
	// failed: the page cache may have dropped the data, so the Log refuses
	// to write on top of it. Close the Log and open it again; Open checks
	// what actually reached the disk.
	ErrPoisoned = errors.New("segment: writer poisoned by an earlier write failure; reopen the log")
	// ErrTooLarge is returned when a record exceeds Options.MaxRecordSize.
	ErrTooLarge = errors.New("segment: record too large")
)

// CorruptionError reports damage that is not a torn final write: the bytes
// are left untouched and nothing is truncated automatically.
//
// Error says what failed and where (the log, file, offset and seq, and
// why); Hint is data, not part of Error: what to do about it, in
// segment's own terms, for the program that shows the error to put in its
// own words.
type CorruptionError struct {
	Dir    string
	File   string // segment file name within Dir
	Offset int64  // byte offset of the damaged frame or header
	Seq    uint64 // the seq expected at Offset (0 if unknown)
	Reason string
	Hint   string
}

func (e *CorruptionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "segment: corrupt log %s", e.Dir)
	if e.File != "" {
		fmt.Fprintf(&b, ": file %s", e.File)
		if strings.HasSuffix(e.File, segmentExt) {
			fmt.Fprintf(&b, " offset %d", e.Offset) // in a segment, offset 0 is its header
		}
	}
	if e.Seq != 0 {
		fmt.Fprintf(&b, " seq %d", e.Seq)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	return b.String()
}

func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

// corruptHint is the Hint of every CorruptionError.
const corruptHint = "the bytes were left untouched; Verify reports every problem in the log"

// ConflictError is returned by AppendIf when the log's last seq is not the
// expected one. errors.Is(err, ErrConflict) holds.
type ConflictError struct {
	Expected, Actual uint64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("segment: log tail moved: expected last seq %d, found %d", e.Expected, e.Actual)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }
