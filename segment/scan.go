package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The frame scanner.
//
// Every reader of a log — Open's recovery, Verify, Scan and Follow, the
// writer's catch-up — walks frames the same way and judges what it finds
// differently. frameScanner is the walk, and only the walk: it reads one
// segment file from a verified unit boundary, checks every frame (header
// checksum, sequence, data checksum and chain), hands each complete commit
// unit to its caller, and reports where and why it stopped as a plain
// value. It decides nothing. Whether a stop is the end of the log, a write
// in progress, a torn tail to cut or damage to report is the policy of
// each caller (rules, in cursor.go).

// readChunk is the largest read of a scan. Every chunk is a fresh
// allocation that is never reused, so Record.Data can alias it and still
// be safe to retain: one allocation per MiB, not per record.
const readChunk = 1 << 20

// readProbe is the first read of a scan. The file size does not say where
// the data ends (the active segment is preallocated), so a scan starts with
// one small read, which covers a typical new unit and the zero header after
// it, and grows its reads eightfold up to readChunk while data continues.
const readProbe = 4 << 10

// frameSeq: a frame that checks out but is not the one expected here.
const frameSeq decodeStatus = 100

// stopKind says why a frame scan stopped.
type stopKind uint8

const (
	// stopEnd: the file ends at a unit boundary (or holds only a few zero
	// bytes after it, too few for a frame header).
	stopEnd stopKind = iota
	// stopFree: a zero frame header at a unit boundary: the end of the
	// data, with preallocated space after it.
	stopFree
	// stopFrame: the frame at off does not check out (st says how: it is
	// frameShort when the file ends inside a unit), or it is not the frame
	// expected there (frameSeq).
	stopFrame
	// stopShrank: the file got shorter than the size the scan read it to:
	// a writer cut or trimmed it meanwhile.
	stopShrank
)

// stop is where and why a frame scan stopped: a value, so two scans that
// stopped alike compare equal.
type stop struct {
	kind stopKind
	off  int64        // the unit boundary (stopEnd, stopFree) or the frame (stopFrame) where it stopped
	st   decodeStatus // stopFrame: why the frame at off failed
	size int64        // the file's size as the scan saw it (-1: the probe alone found the end, without fstat)
}

// tailFacts is what the bytes from a stop to the end of the segment hold:
// what telling a torn write from damage needs.
type tailFacts struct {
	// follows: a frame header of a later unit checks out after the stop,
	// at followOff, with seq followSeq (valid data after the failure).
	follows   bool
	followSeq uint64
	followOff int64
	// end is where the bytes that are not zeros end, rounded up to a 4 KiB
	// block and at most the file's size: the extent of a torn write,
	// without the preallocated zeros after it.
	end int64
	// sectors: the frame at the stop ends in zeroed sectors after its
	// start (zeroedSectorFrame), as a write whose last sectors never
	// landed does.
	sectors bool
}

// frameScanner walks the frames of segment files. Its buffers are reused
// from one scan to the next; it holds no position.
type frameScanner struct {
	probe   []byte   // the first read of a scan (data found in it is copied out)
	pending []Record // the records of the unit being read
	// transient: the records' Data are not retained past the unit call,
	// so read buffers are reused (spare) instead of allocated per chunk:
	// a process that opens a long log once (a CLI command) otherwise
	// spends most of the open faulting in fresh pages.
	transient bool
	spare     []byte
	// ahead computes the digests of the read buffer's records on another
	// goroutine while the scan checks, links and hands out its frames
	// (ahead.go).
	ahead linkAhead
}

// scan reads f (the segment at path, for errors) from p, a verified unit
// boundary, to the end of the file. For every complete commit unit that
// checks out it calls unit with the unit's records and the position after
// it; an error from unit ends the scan and is returned as it is. The
// records must not be retained beyond the call, their Data may.
//
// It first probes the boundary with one small read: a zero frame header
// (or the end of the file) there means nothing new, found with one pread
// and no fstat. Avoiding fstat matters: on Linux ≥ 6.13 (multigrain
// timestamps) a stat of the active segment makes the writer's next write
// take a fine-grained mtime, which measured ≈ 50 µs more per
// append+fdatasync here.
func (s *frameScanner) scan(ctx stopper, f File, path string, p pos, unit func([]Record, pos) error) (stop, error) {
	if s.probe == nil {
		s.probe = make([]byte, readProbe)
	}
	n, err := f.ReadAt(s.probe, p.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return stop{}, fmt.Errorf("segment: read %s at offset %d: %w", path, p.off, err)
	}
	if allZero(s.probe[:min(n, frameHeaderSize)]) {
		if n >= frameHeaderSize {
			return stop{kind: stopFree, off: p.off, size: -1}, nil
		}
		return stop{kind: stopEnd, off: p.off, size: -1}, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return stop{}, fmt.Errorf("segment: stat %s: %w", path, err)
	}
	size := fi.Size()
	var (
		buf    = append(s.fresh(n), s.probe[:n]...) // records alias their read buffer: a copy
		bufOff = p.off                              // file offset of buf[0]
		cur    = p.off
		sum    = p.sum
		link   = p.link
		next   = p.next
		chunk  = int64(readProbe) * 8
	)
	if bufOff+int64(len(buf)) > size { // shrank since the probe
		buf = buf[:max(size-bufOff, 0)]
	}
	pending := s.pending[:0]
	defer func() { s.pending = pending[:0] }()
	defer s.ahead.halt()
	if p.linked {
		s.ahead.start(buf, 0)
	}
	for {
		b := buf[cur-bufOff:]
		fr, n, st := decodeFrame(b, sum)
		if st == frameShort || (st == frameZero && len(b) < frameHeaderSize) {
			if have := bufOff + int64(len(buf)); have < size {
				if err := ctx.Err(); err != nil {
					return stop{}, err
				}
				want := max(chunk, int64(n))
				chunk = min(chunk*8, readChunk)
				if _, hsize, hst := decodeHeader(b); hst == frameOK {
					want = max(want, int64(hsize))
				}
				want = min(want, size-cur)
				s.ahead.halt() // buf may be written below
				var nb []byte
				switch {
				case s.transient && len(pending) == 0 && int64(cap(buf)) >= want:
					nb = buf[:want] // what is left of buf moves to its front
				case s.transient && len(pending) == 0:
					nb = make([]byte, want)
					s.spare = nb[:0]
				default: // the pending records still use buf
					nb = make([]byte, want)
				}
				copy(nb, b)
				if err := readFull(f, nb[len(b):], cur+int64(len(b))); err != nil {
					if errors.Is(err, io.ErrUnexpectedEOF) {
						return stop{kind: stopShrank, off: cur, size: size}, nil
					}
					return stop{}, fmt.Errorf("segment: read %s at offset %d: %w", path, cur, err)
				}
				buf, bufOff = nb, cur
				if p.linked {
					s.ahead.start(buf, 0)
				}
				continue
			}
			if len(b) == 0 {
				if len(pending) == 0 {
					return stop{kind: stopEnd, off: cur, size: size}, nil
				}
				return stop{kind: stopFrame, off: cur, st: frameShort, size: size}, nil
			}
		}
		if st == frameZero && len(pending) == 0 {
			if len(b) < frameHeaderSize {
				return stop{kind: stopEnd, off: cur, size: size}, nil
			}
			return stop{kind: stopFree, off: cur, size: size}, nil
		}
		if st == frameOK && (fr.seq != next || fr.unitStart() != p.next) {
			st = frameSeq
		}
		if st != frameOK {
			return stop{kind: stopFrame, off: cur, st: st, size: size}, nil
		}
		rec := Record{Seq: fr.seq, Data: fr.data, Reclaimed: fr.stub}
		if fr.stub {
			rec.Len, rec.Digest = fr.recLen, fr.digest
		}
		pending = append(pending, rec)
		if p.linked {
			link = s.ahead.link(&fr, int(cur-bufOff), link)
		}
		sum, next, cur = fr.sum, next+1, cur+int64(n)
		if fr.last {
			end := pos{off: cur, next: next, sum: sum, unit: p.off, seed: p.sum, link: link, linked: p.linked}
			if err := unit(pending, end); err != nil {
				return stop{}, err
			}
			pending = pending[:0]
			p = end
		}
	}
}

// fresh returns an empty buffer of capacity n for a scan's reads: a new
// one, unless the scan is transient and its spare is large enough (records
// of a finished unit no longer use it).
func (s *frameScanner) fresh(n int) []byte {
	if s.transient {
		if cap(s.spare) < n {
			s.spare = make([]byte, 0, max(n, readProbe))
		}
		return s.spare[:0]
	}
	return make([]byte, 0, n)
}

// sizeOf returns the size of f: the stop's, or fstat's when the stop did
// not ask for it.
func (s stop) sizeOf(f File, path string) (int64, error) {
	if s.size >= 0 {
		return s.size, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("segment: stat %s: %w", path, err)
	}
	return fi.Size(), nil
}

// zerosFrom reports whether f is all zeros from off to size. ok is false
// when the file turned out shorter than size.
func (s *frameScanner) zerosFrom(f File, path string, off, size int64) (zero, ok bool, err error) {
	n := int(min(max(size-off, 0), readChunk))
	buf := s.fresh(n)[:n]
	for off < size {
		b := buf[:min(int64(len(buf)), size-off)]
		if err := readFull(f, b, off); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return false, false, nil
			}
			return false, false, fmt.Errorf("segment: read %s at offset %d: %w", path, off, err)
		}
		if !allZero(b) {
			return false, true, nil
		}
		off += int64(len(b))
	}
	return true, true, nil
}

// examine reads f from x, where a frame failed, to size and reports what
// the bytes hold (tailFacts); unit is the seq of the first record of the
// unit the frame at x belongs to. ok is false when the file turned out
// shorter than size.
func (s *frameScanner) examine(f File, path string, x, size int64, unit uint64) (facts tailFacts, ok bool, err error) {
	tail := make([]byte, max(size-x, 0))
	if err := readFull(f, tail, x); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return tailFacts{}, false, nil
		}
		return tailFacts{}, false, fmt.Errorf("segment: read %s at offset %d: %w", path, x, err)
	}
	for p := 0; p+frameHeaderSize <= len(tail); p += frameAlign {
		if fr, _, hst := decodeHeader(tail[p:]); hst == frameOK && fr.unitStart() != unit {
			facts.follows, facts.followSeq, facts.followOff = true, fr.seq, x+int64(p)
			break
		}
	}
	// The torn bytes end at the last 4 KiB block holding a non-zero byte:
	// the zero-filled free space after them is neither saved nor counted.
	end := x
	for z := len(tail); z > 0; z-- {
		if tail[z-1] != 0 {
			end = x + int64(z)
			break
		}
	}
	facts.end = min(size, (end+4095)&^4095)
	facts.sectors = zeroedSectorFrame(x, tail)
	return facts, true, nil
}

// zeroedSectorFrame reports whether the frame at the start of tail (file
// offset x) ends in zeros from a sector boundary after x on that cover at
// least one byte of its header or data (not only padding): the signature of
// a write whose last sectors never reached the disk. The frame's extent is
// its header when the header does not check out. The bytes after the frame
// do not count: they are preallocated zeros.
func zeroedSectorFrame(x int64, tail []byte) bool {
	ext, used := frameHeaderSize, frameHeaderSize
	if _, size, st := decodeHeader(tail); st == frameOK {
		ext, used = size, frameHeaderSize+int(binary.LittleEndian.Uint32(tail[4:]))
	}
	if ext > len(tail) {
		return true // the file ends inside the frame
	}
	fb := tail[:ext]
	z := len(fb)
	for z > 0 && fb[z-1] == 0 {
		z--
	}
	p := (x + int64(z) + sectorSize - 1) / sectorSize * sectorSize // first boundary in the zero run
	if p <= x {
		p += sectorSize
	}
	return p < x+int64(used)
}

func readFull(f File, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
