package segment

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/helmlog/helm/internal/durable"
)

// Preallocation.
//
// The active segment is preallocated with real zeros written by pwrite
// (durable.WriteZeros; not fallocate: unwritten extents are converted with
// journaled metadata on their first write), and the extension is fdatasynced before any record in
// it is acknowledged. An append then overwrites already written blocks, so
// its fdatasync flushes data only and needs no journal commit for the file
// size.
//
// A segment starts with preallocMin bytes; whenever the data end comes
// within a quarter of a step of the preallocated end, the next append also
// extends the file by one step (what this writer added to the file, the
// whole of it for a segment it made, at least preallocMin and at most
// preallocMax), never beyond SegmentSize (a unit larger than SegmentSize
// gets exactly the space it needs). A writer that reopened a long segment
// to append a unit or two so extends it by preallocMin, not preallocMax:
// it writes, syncs and (at Close) trims back 16 KiB of zeros, not 1 MiB. The zeros are written before the unit
// and share its fdatasync, so an extension costs one larger fdatasync per
// step, not one per append. A sealed segment (on rotation) is truncated to
// its data end, so only the last segment has a zero tail.
//
// The end of the log is therefore a zero frame header at a unit boundary
// (or the end of the file). Readers and the writer's catch-up stop there
// after reading one small probe; Open and Verify also check that the free
// region after it is all zeros (a crash may have left a torn unit whose
// first sector never landed: that is cut like any torn unit).
//
// On a filling disk a write fits while its bytes fit:
//   - The zeros after the data are at most 1/preallocShare of the space
//     the file system has free (counting them), so they never take the room
//     another file on the same disk (a voyage's artifact pack) needs; near a
//     full disk the steps shrink instead of failing.
//   - An extension the disk cannot hold (ENOSPC, EDQUOT) is truncated back
//     to the size the file had and tried again with half the room after the
//     unit, down to exactly the bytes the unit needs (see extend). Only when
//     those do not fit does the commit fail, and the file is then back at
//     its previous size: a reopened log sees a clean end.
const (
	preallocMin   = 16 << 10
	preallocMax   = 1 << 20
	preallocShare = 32
	// fallbackMin is the smallest room after the unit that a fallback
	// still tries before it tries the unit's own bytes alone.
	fallbackMin = 4 << 10
)

// allocTarget returns the size the active segment should have before a unit
// ending at end is written: at least end, and a quarter step of room after
// it while below SegmentSize. alloc is the known size (-1: unknown), base
// the size it had when this writer first extended it (0 for a segment it
// made): a step is what was added since.
func allocTarget(alloc, base, end, segmentSize int64) int64 {
	a := max(alloc, 0)
	base = min(max(base, 0), a)
	for {
		step := min(max(a-base, preallocMin), preallocMax)
		if a >= end && a-end >= step/4 {
			return a
		}
		if a >= segmentSize {
			return max(a, end)
		}
		a = min(a+step, segmentSize)
	}
}

// ensureAlloc makes sure the active segment is preallocated for a unit
// ending at end (lock held); the unit starts at the writer's position. The
// zeros are written but not synced: the unit's fdatasync covers them. When
// the disk is full it settles for less room after the unit (see extend);
// it fails only when the unit's own bytes do not fit, with the file back
// at the size it had.
func (l *Log) ensureAlloc(end int64) error {
	c := &l.w
	target := allocTarget(l.alloc, l.base, end, l.opts.SegmentSize)
	if target <= l.alloc {
		return nil
	}
	path := filepath.Join(l.dir, c.name)
	fi, err := c.f.Stat() // another process may have extended the file
	if err != nil {
		return fmt.Errorf("segment: stat %s: %w", path, err)
	}
	l.alloc = fi.Size()
	if l.base < 0 {
		l.base = l.alloc
	}
	if target = allocTarget(l.alloc, l.base, end, l.opts.SegmentSize); target <= l.alloc {
		return nil
	}
	if target = shareTarget(target, l.alloc, end, l.freeSpace()); target <= l.alloc {
		return nil
	}
	from := l.alloc
	l.alloc, err = extend(c.f, from, end, target)
	if err == nil {
		return nil
	}
	if !noSpace(err) {
		return fmt.Errorf("segment: extend %s from %d to %d bytes for a unit at offset %d: %w", path, from, target, c.p.off, err)
	}
	state := fmt.Sprintf("nothing was written after offset %d", c.p.off)
	if l.alloc == from {
		state = fmt.Sprintf("the file is back at %d bytes and nothing was written", from)
	}
	return fmt.Errorf("segment: %s: the disk is full: a unit of %d bytes at offset %d does not fit (extending the file from %d to %d bytes: %w); %s: free disk space, then reopen the log",
		path, end-c.p.off, c.p.off, from, end, err, state)
}

// extend grows f, of size from, with zeros towards target, so that a unit
// ending at need fits (need <= from: the unit fits already; only the room
// after it is wanted). It returns the size f has afterwards (-1: unknown).
//
// When the disk is full (noSpace) the partial extension is truncated back
// to from and extend tries again with half the room after the unit, then
// with the unit's own bytes alone. It fails only when those do not fit or
// on any other error; the file is then truncated back to from, so whatever
// is left is the old end of the file (or, if even the truncation fails,
// zeros: free space either way).
func extend(f File, from, need, target int64) (int64, error) {
	floor := max(need, from)
	for room := target - floor; ; {
		to := floor + room
		if to <= from {
			return from, nil // the unit fits without more room
		}
		err := durable.WriteZeros(f, from, to)
		if err == nil {
			return to, nil
		}
		if terr := f.Truncate(from); terr != nil {
			return -1, fmt.Errorf("%w; truncating back to %d bytes failed too (the bytes after it are zeros): %w", err, from, terr)
		}
		if !noSpace(err) || room == 0 {
			return from, err
		}
		if room /= 2; room < fallbackMin {
			room = 0
		}
	}
}

// noSpace reports whether err says the file system, or the owner's quota,
// is full (per platform: internal/durable).
func noSpace(err error) bool { return durable.IsNoSpace(err) }

// freeSpace returns the bytes of the file system holding the log that are
// available to its owner, or -1 when it cannot tell (internal/durable).
func (l *Log) freeSpace() int64 { return durable.FreeBytes(l.dir) }

// shareTarget bounds the zeros after a unit ending at end to
// 1/preallocShare of the space that is free or already preallocated (free
// is what the file system has available; < 0: unknown, no bound). An
// extension from alloc towards target stops there; and, as with steps, the
// file is extended only when less than a quarter of that room is left, so
// near a full disk commits do not each extend the file by a sliver. The
// result is never below end, the bytes the unit needs (it may be alloc:
// no extension).
func shareTarget(target, alloc, end, free int64) int64 {
	if free < 0 {
		return target
	}
	room := (free + max(alloc-end, 0)) / preallocShare
	switch {
	case target-end <= room:
		return target
	case alloc-end >= room/4:
		return alloc
	}
	return end + room
}

// preallocNew writes the first preallocated zeros of a new segment file,
// whose header is written, towards want bytes and returns its size. On a
// full disk it settles for less, down to no preallocation at all: the first
// unit then extends the file by what it needs.
func (l *Log) preallocNew(f File, want, hsize int64) (int64, error) {
	want = shareTarget(want, hsize, hsize, l.freeSpace())
	return extend(f, hsize, hsize, want)
}

// seal truncates the active segment to its data end before a rotation, so
// sealed segments carry no zero tail (lock held).
func (l *Log) seal() error {
	c := &l.w
	path := filepath.Join(l.dir, c.name)
	fi, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("segment: seal %s: stat: %w", path, err)
	}
	if fi.Size() <= c.p.off {
		return nil
	}
	l.alloc = -1
	if err := c.f.Truncate(c.p.off); err != nil {
		return fmt.Errorf("segment: seal %s: truncate to %d: %w", path, c.p.off, err)
	}
	if !l.opts.NoSync {
		if err := c.f.Datasync(); err != nil {
			return fmt.Errorf("segment: seal %s: fdatasync: %w", path, err)
		}
	}
	l.alloc = c.p.off
	return nil
}

// trim gives back the preallocated space of the active segment when the
// Log is closed, so that a log at rest takes only the bytes it holds (a
// CLI opens and closes the log for every command; a long-lived Log keeps
// its preallocation while open). Under the lock, after catching up, the
// segment is truncated to the data end. The truncation is not synced: if a
// crash loses it, the zeros come back, and zeros after the data end are
// free space. Best effort: a Log that cannot trim closes all the same, and
// the next writer preallocates again. Another process's Log that still
// counts on the trimmed zeros appends past the end of the file instead:
// correct, merely without the benefit until it extends again. (l.mu held.)
func (l *Log) trim() {
	c := &l.w
	if c.f == nil || l.poison != nil {
		return
	}
	// Best effort, at Close: not worth waiting long for, neither for the
	// lock nor for the catch-up.
	by := deadline(time.Now().Add(100 * time.Millisecond))
	if err := l.lock.lock(func() bool { return by.Err() != nil }); err != nil {
		return
	}
	defer l.lock.unlock()
	if err := l.catchUp(by, false); err != nil {
		return
	}
	fi, err := c.f.Stat()
	if err != nil || fi.Size() <= c.p.off {
		return
	}
	if c.f.Truncate(c.p.off) == nil {
		l.alloc = c.p.off
	} else {
		l.alloc = -1
	}
}

// stopper is what a read asks between reads: whether to stop, and why. A
// context.Context is one; the catch-up at Close, which has no caller's
// ctx, uses a deadline.
type stopper interface{ Err() error }

// deadline is a stopper that says stop (context.DeadlineExceeded) once its
// time has passed.
type deadline time.Time

func (d deadline) Err() error {
	if time.Now().After(time.Time(d)) {
		return context.DeadlineExceeded
	}
	return nil
}

// unwrite zeroes what a failed write of a unit at off put into the file
// (n bytes), so the free space is free again, and syncs it. Best effort: on
// failure Open judges what is on disk.
func (l *Log) unwrite(off int64, n int) {
	if n <= 0 {
		return
	}
	if durable.WriteZeros(l.w.f, off, off+int64(n)) == nil && !l.opts.NoSync {
		_ = l.w.f.Datasync()
	}
}

// Mark is a position in a log: the end of the commit unit that holds record
// Last, in segment file Segment, with what is needed to tell later that
// the log still holds what it held then. The zero Mark is before
// everything. Marks are plain values meant to be stored (for example in a
// cache's metadata) and compared later with Changed.
type Mark struct {
	Segment string `json:"segment"` // segment file name
	End     int64  `json:"end"`     // byte offset just after the unit holding Last
	Last    uint64 `json:"last"`    // last seq at the mark
	// Unit is the offset of the unit holding Last and Seed the chain value
	// before it; Sum is the chain value after it. Changed reads and checks
	// that unit again.
	Unit int64  `json:"unit,omitempty"`
	Seed uint32 `json:"seed,omitempty"`
	Sum  uint32 `json:"sum,omitempty"`
	// Sealed are the segments before Segment, with their sizes, and
	// Watermark says the log had a WATERMARK: Changed checks that they are
	// all still there, as they were.
	Sealed    []SealedSegment `json:"sealed,omitempty"`
	Watermark bool            `json:"watermark,omitempty"`
	// Hash is the BLAKE3 chain's link at Last (64 lowercase hex digits),
	// when the Log knew it: ScanAfter and OpenAfter continue the chain
	// from it, so a Log opened from a mark knows its Head without reading
	// what comes before. Empty in a mark of an older version.
	Hash string `json:"hash,omitempty"`
}

// SealedSegment is a segment file before the last one: its size and the
// checksum of its header (which covers the log id and the chain seed).
type SealedSegment struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Header uint32 `json:"header"`
}

// sealedSegment returns what a Mark records of the sealed segment path.
func sealedSegment(path string) (SealedSegment, bool) {
	f, err := os.Open(path)
	if err != nil {
		return SealedSegment{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return SealedSegment{}, false
	}
	h := make([]byte, fileHeaderSize)
	n, err := f.ReadAt(h, 0)
	if n < fileHeaderSizeV1 || (err != nil && !errors.Is(err, io.EOF)) {
		return SealedSegment{}, false
	}
	return SealedSegment{Name: filepath.Base(path), Size: fi.Size(), Header: crc32.Checksum(h[:n-4], castagnoli)}, true
}

// Mark returns the furthest position this Log has verified: after its
// latest catch-up, own append, or scan that reached the end of the log.
// Other processes may have appended since. To fingerprint state derived
// from the log, take the Mark before reading the log (or compare Last with
// the seq the state reflects): a Mark never claims more than was read.
// It lists the log's sealed segments (one stat each).
func (l *Log) Mark() Mark {
	cp := l.idx.tailPos()
	if cp.p.next == 0 || cp.first == 0 {
		return Mark{}
	}
	m := Mark{Segment: segmentName(cp.first), End: cp.p.off, Last: cp.p.next - 1, Unit: cp.p.unit, Seed: cp.p.seed, Sum: cp.p.sum}
	if cp.p.linked {
		m.Hash = cp.p.link.String()
	}
	if _, err := l.fs.Stat(filepath.Join(l.dir, watermarkName)); err == nil {
		m.Watermark = true
	}
	segs, err := listSegments(l.fs, l.dir)
	if err != nil {
		return Mark{}
	}
	for _, s := range segs {
		if s >= cp.first {
			break
		}
		ss, ok := sealedSegment(filepath.Join(l.dir, segmentName(s)))
		if !ok {
			return Mark{}
		}
		m.Sealed = append(m.Sealed, ss)
	}
	return m
}

// maxChangedUnit bounds what Changed reads of the mark's unit; a larger
// unit is reported as a change (the caller reads the log instead).
const maxChangedUnit = 4 << 20

// Changed reports whether the log in dir may differ from what it was at m:
// whether anything was appended after m (including a write in progress),
// or the files are not what they were: a sealed segment or WATERMARK gone
// or resized, the unit holding m.Last no longer where m saw it, whole and
// checking out with the same chain values. It takes no lock and does not
// open the log: it costs a stat per sealed segment and of WATERMARK, one
// pread of the mark's unit and the frame header after it (with an open
// and a close) and, when the segment ends at m.End, one stat of the
// segment a rotation after m would have created — a listing of thousands
// of logs calls it once per log. It never reports false after an append
// that completed before the call. The zero Mark (or one from an older
// format) always reports true.
func Changed(dir string, m Mark) (bool, error) {
	first, ok := parseSegmentName(m.Segment)
	if !ok || m.End < fileHeaderSizeV1 || m.Last+1 < first {
		return true, nil
	}
	empty := m.Last+1 == first // a segment with no record yet
	if !empty && (m.Unit < fileHeaderSizeV1 || m.Unit+frameHeaderSize > m.End || m.End-m.Unit > maxChangedUnit) {
		return true, nil // a mark without its unit (an older format), or a unit too large to check cheaply
	}
	// The directory holds the mark's segments and no other (none gone,
	// none after the mark's) and, if the log had one, a WATERMARK with a
	// slot that checks out.
	names, err := readDirNames(dir)
	if err != nil {
		return true, nil
	}
	segs, hasWM := 0, false
	for _, name := range names {
		if _, ok := parseSegmentName(name); ok {
			if name > m.Segment {
				return true, nil
			}
			segs++
		}
		hasWM = hasWM || name == watermarkName
	}
	if segs != len(m.Sealed)+1 || m.Watermark && !hasWM {
		return true, nil
	}
	if m.Watermark {
		var b [watermarkSize]byte
		n, err := durable.ReadFileAt(filepath.Join(dir, watermarkName), b[:], 0)
		if err != nil {
			return true, nil
		}
		if _, _, ok := newestWatermark(b[:n]); !ok {
			return true, nil
		}
	}
	for _, s := range m.Sealed {
		if now, ok := sealedSegment(filepath.Join(dir, s.Name)); !ok || now != s {
			return true, nil
		}
	}
	path := filepath.Join(dir, m.Segment)
	// The unit holding Last (or, for an empty segment, the 8 bytes before
	// the mark) says the file still holds what the mark saw; the frame
	// header after the mark says whether anything follows. One open, one
	// pread and one close (durable.ReadFileAt).
	from := m.End - 8
	if !empty {
		from = m.Unit
	}
	var small [4096]byte
	var b []byte
	if want := m.End + frameHeaderSize - from; want <= int64(len(small)) {
		b = small[:want]
	} else {
		b = make([]byte, want)
	}
	n, err := durable.ReadFileAt(path, b, from)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("segment: changed: %w", err)
	}
	b = b[:n]
	at := m.End - from // index of the mark in b
	if int64(len(b)) < at {
		return true, nil // shorter than the mark: not the log it was
	}
	if !empty && !unitIsAt(b[:at], m) {
		return true, nil // not the unit the mark saw
	}
	switch tail := b[at:]; {
	case !allZero(tail):
		return true, nil // a unit (or a write in progress) after the mark
	case len(tail) == frameHeaderSize:
		// Preallocated space follows the mark: the segment is still the
		// active one (sealing trims a segment to its data end first).
		return false, nil
	}
	if empty {
		return false, nil // an empty segment is never sealed
	}
	_, err = os.Stat(filepath.Join(dir, segmentName(m.Last+1)))
	if err == nil {
		return true, nil // rotated: the next unit started a new segment
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("segment: changed: %w", err)
}

// unitIsAt reports whether b (the bytes from m.Unit to m.End) is one
// complete commit unit that checks out, chained from m.Seed to m.Sum and
// ending with record m.Last.
func unitIsAt(b []byte, m Mark) bool {
	sum := m.Seed
	for len(b) > 0 {
		f, n, st := decodeFrame(b, sum)
		if st != frameOK {
			return false
		}
		sum, b = f.sum, b[n:]
		if f.last {
			return len(b) == 0 && f.seq == m.Last && sum == m.Sum
		}
	}
	return false
}

// readDirNames lists the names in dir, unsorted.
func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
