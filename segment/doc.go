// Package segment is helm's durable, checksummed, append-only log.
//
// A log is a directory of segment files (see format.go for the bytes).
// Records get gap-free sequence numbers starting at 1. Commit is the one
// write primitive: under an in-process mutex and the lock on dir/LOCK
// (flock; LockFileEx on Windows: internal/durable) it catches
// up on what other processes appended, lets the caller decide what to
// append, writes the batch and fdatasyncs before returning. Concurrent
// commits in one process share one write and one fdatasync (group commit).
//
// Durability and recovery:
//   - A batch is atomic. All records that one group commit writes form one
//     commit unit whose last frame is marked; readers and recovery ignore a
//     unit without its last frame, so a crash leaves all of a batch or none.
//   - A log knows its identity and its bounds (format.go): every segment
//     header names the log, the hash chain starts at the log's identity,
//     the first segment starts at seq 1, and WATERMARK records the last
//     acknowledged unit after every commit. A missing, rolled-back, swapped
//     or foreign segment, and damage to any acknowledged unit — the last
//     one included — is a *CorruptionError naming file, offset and seq, and
//     nothing is modified (NATS #7549 lost acknowledged writes by
//     truncating on a bit flip; Prometheus deleted later segments).
//   - Only a torn final unit above the watermark is ever removed: one whose
//     file ends inside it, whose frame header is zero, or whose bytes end in
//     zeroed sectors (a crash loses whole sectors; the bytes after the frame
//     are preallocated zeros and do not count). A checksum failure on
//     written bytes (a bit flip) is corruption.
//   - Opening reads. Open and OpenScan create nothing, take no exclusive
//     lock and cut nothing: they work on a read-only file system. A torn
//     tail is reported by Torn; the first Commit (a writer) takes the lock,
//     cuts it, saves the bytes as <segment>.torn-<offset> and reports the
//     Cut. A reader that meets something torn-looking or damaged reads the
//     tail again under a shared flock, so a write in progress is not
//     mistaken for damage.
//   - After a failed write or fsync the Log refuses to write (ErrPoisoned):
//     the page cache may no longer match the disk. Reopen to recover. A
//     failed (short) record write is zeroed again first, so the free space
//     stays zeros.
//
// Preallocation (prealloc.go): the active segment is preallocated with real
// zeros (pwrite; 16 KiB, growing in doubling steps of at most 1 MiB, never
// beyond SegmentSize), fdatasynced before any record in the new region is acknowledged, so an
// append overwrites already written blocks and its fdatasync commits no
// metadata. Sealed segments are truncated to their data end. The end of the
// log is a zero frame header at a unit boundary: free space, not a torn
// write. Readers and the writer's catch-up probe the header at the last
// known boundary with one small pread (no fstat: see scan.go); Open and
// Verify also check that the free space is all zeros, since a crash can
// lose the first sector of a unit and keep later ones. The file size no
// longer changes with every append: callers that fingerprint a log use
// Mark and Changed, not file sizes.
//
// Scans start at the nearest verified position this Log knows (index.go):
// reading what others appended since the Log's last seq costs O(new
// records), not O(segment).
//
// Readers take no exclusive lock: Open, Scan, Follow and Verify may run
// while another process writes, and stop cleanly at a unit still being
// written.
package segment
