// Package segment is helm's durable, checksummed, append-only log.
//
// A log is a directory of segment files (see format.go for the bytes).
// Records get gap-free sequence numbers starting at 1. Commit is the one
// write primitive: under an in-process mutex and flock(dir/LOCK) it catches
// up on what other processes appended, lets the caller decide what to
// append, writes the batch and fdatasyncs before returning. Concurrent
// commits in one process share one write and one fdatasync (group commit).
//
// Durability and recovery:
//   - A batch is atomic. All records that one group commit writes form one
//     commit unit whose last frame is marked; readers and recovery ignore a
//     unit without its last frame, so a crash leaves all of a batch or none.
//   - Only a torn final unit is ever removed. Open (and the next writer's
//     catch-up) cuts it, saves the bytes as <segment>.torn-<offset> and
//     reports the Cut. Every other failed check — a damaged record followed
//     by valid ones, damage in a sealed segment, a foreign or newer file
//     header, a broken hash chain — is a *CorruptionError and nothing is
//     modified (NATS #7549 lost acknowledged writes by truncating on a bit
//     flip; Prometheus deleted later segments).
//   - In the final unit, a failure counts as torn when the file ends inside
//     the frame, the frame header is zero, or the file ends in zeroed
//     sectors; a checksum failure on fully present bytes (a bit flip) is
//     corruption.
//   - After a failed write or fsync the Log refuses to write (ErrPoisoned):
//     the page cache may no longer match the disk. Reopen to recover.
//
// Preallocation: segments are not preallocated. Measured on the target
// machine, fdatasync after an appending 256 B write costs ≈ 0.19 ms and on a
// preallocated, already written region 0.12–0.15 ms. Preallocation would
// buy up to ~30% per durable append but costs disk for thousands of tiny
// logs, makes the file size no longer say where the data ends (Stat would
// need to read records to detect a change) and makes every reader scan the
// zero tail. Appending keeps Stat a pure metadata call and the single
// appender at ≈ 1× the raw append+fdatasync rate.
//
// Group commit bounds a group by the number of committers waiting, so 16
// appenders that each wait for their own record get at most 16 records per
// fdatasync. A 16-record (≈4.5 KB) extending write+fdatasync measured
// 175–264 µs median here against 113–148 µs into preallocated zeros, so
// preallocation is where the remaining concurrent throughput is; it needs
// "zero header at a unit boundary = end of log" instead of a cut, a Verify
// that does not call it torn, a change fingerprint other than the file
// size, and a catch-up that reads the tail instead of trusting fstat.
//
// Scans start at the nearest verified position this Log knows (index.go):
// reading what others appended since the Log's last seq costs O(new
// records), not O(segment).
//
// Readers take no lock: Scan, Follow and Verify may run while another
// process writes, and stop cleanly at a unit still being written.
package segment
