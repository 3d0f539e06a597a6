package segment

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// readChunk is the read size of a scan. Every chunk is a fresh allocation
// that is never reused, so Record.Data can alias it and still be safe to
// retain: one allocation per MiB, not per record.
const readChunk = 1 << 20

// readProbe is the first read of a scan. The file size no longer says where
// the data ends (the active segment is preallocated), so a scan starts with
// one small read, which covers a typical new unit and the zero header after
// it, and grows its reads eightfold up to readChunk while data continues.
const readProbe = 4 << 10

// Record is one entry of the log.
type Record struct {
	Seq  uint64
	Data []byte
}

// pos is a position just after a complete commit unit.
type pos struct {
	off  int64  // byte offset in the current segment
	next uint64 // seq of the next record
	sum  uint32 // chain value after the last record
	unit int64  // offset of the last unit's first frame (0: no unit in this segment)
	seed uint32 // chain value before that unit
}

// torn describes bytes after the last complete unit of the last segment
// that do not form a complete unit: a write in progress or cut short by a
// crash.
type torn struct {
	off, size int64
	seq       uint64 // the first seq of the torn unit
	file      string // the segment file (set by recovery)
	reason    string
}

// errStop ends a scan early without error.
var errStop = errors.New("stop")

// cursor walks a log forward across segments, verifying every frame and
// the hash chain. It is shared by readers (Scan, Follow, Verify), Open's
// recovery and the writer's catch-up.
type cursor struct {
	fs    FS
	dir   string
	f     File
	name  string // current segment file name
	first uint64 // first seq of the current segment
	p     pos

	locked bool // the caller holds the writer lock: nothing changes under us
	strict bool // classify a damaged tail as corruption unless it looks torn
	// checkFree: at the end of the log (a zero frame header at a unit
	// boundary), read the rest of the segment and require zeros (Open and
	// Verify). Without it the zero header alone ends the log.
	checkFree bool
	// atFree: the last scanFile ended at a zero frame header, so the
	// segment has free space after its data and is not sealed (seal
	// truncates to the data end before the next segment is created): no
	// next segment can exist yet.
	atFree   bool
	probeBuf []byte // reused probe buffer (data found in it is copied out)
	alloc    int64  // the writer's known size of its segment (-1: unknown)
	keepF    bool   // f belongs to the caller (the writer's handle); do not close it

	pathSeq  uint64 // path is dir/segmentName(pathSeq), cached: asked at every end of log
	path     string
	segments int // segments entered, for Verify
	pending  []Record

	idx     *posIndex // the Log's position cache (nil: none)
	noteOff int64     // offset of the last checkpoint offered to idx in this segment

	start   int64  // where the current segment's first frame starts (its header size)
	version uint32 // the current segment's format version
	pFirst  uint64 // the segment c.p is a position in

	// The log's identity: every format-2 header must carry id. When the
	// caller gave none (idKnown false), the first format-2 header seen
	// sets it.
	id      LogID
	idKnown bool
	sawV2   bool // a format-2 segment was entered

	// wm is the watermark the scan holds the log to (zero: none): a unit
	// at or below wm.last that fails its checks is damage, never torn, and
	// the chain sum after wm.last must be wm.sum.
	wm watermark
}

func (c *cursor) corrupt(off int64, seq uint64, reason string) *CorruptionError {
	return &CorruptionError{Dir: c.dir, File: c.name, Offset: off, Seq: seq, Reason: reason, Hint: corruptHint}
}

// setPos moves the cursor to p, a position in the current segment.
func (c *cursor) setPos(p pos) {
	c.p, c.pFirst = p, c.first
}

// segmentPath returns the path of the segment starting at first.
func (c *cursor) segmentPath(first uint64) string {
	if c.pathSeq != first || c.path == "" {
		c.pathSeq, c.path = first, filepath.Join(c.dir, segmentName(first))
	}
	return c.path
}

// openSegment positions the cursor at the start of segment first, checking
// its header against what the chain expects (expect != nil).
func (c *cursor) openSegment(first uint64, expect *pos) error {
	name := segmentName(first)
	f, err := c.fs.OpenFile(filepath.Join(c.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", filepath.Join(c.dir, name), err)
	}
	h, err := readFileHeader(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("segment: read %s: %w", filepath.Join(c.dir, name), err)
	}
	c.closeFile()
	c.f, c.name, c.first, c.keepF = f, name, first, false
	c.segments++
	return c.enter(h, expect)
}

// enter checks the header of the segment just opened and positions there:
// the names and seqs agree, the segment belongs to this log, and its seed
// continues the chain (expect: the previous segment's end) or, for the
// first segment, is the log's genesis.
func (c *cursor) enter(h []byte, expect *pos) error {
	hdr, err := c.checkFileHeader(h, c.first)
	if err != nil {
		return err
	}
	switch {
	case expect != nil && hdr.seed != expect.sum:
		return c.corrupt(0, c.first, "hash chain broken between segments (seed does not match the previous segment's last record)")
	case expect == nil && hdr.first == 1 && hdr.seed != genesis(hdr.version, hdr.id):
		return c.corrupt(0, c.first, "hash chain does not start at this log's genesis (seed of the first segment)")
	}
	c.version, c.start = hdr.version, hdr.size()
	c.setPos(pos{off: c.start, next: hdr.first, sum: hdr.seed})
	c.noteOff = c.start
	return nil
}

// checkFileHeader decodes the header of segment first and checks that it
// agrees with the file's name and belongs to this log.
func (c *cursor) checkFileHeader(h []byte, first uint64) (fileHeader, error) {
	name := segmentName(first)
	corrupt := func(reason string) error {
		return &CorruptionError{Dir: c.dir, File: name, Seq: first, Reason: reason, Hint: corruptHint}
	}
	hdr, reason := decodeFileHeader(h)
	if reason != "" {
		return hdr, corrupt(reason)
	}
	if hdr.first != first {
		return hdr, corrupt(fmt.Sprintf("file header says first seq %d, file name says %d", hdr.first, first))
	}
	if hdr.version >= 2 {
		if c.idKnown && hdr.id != c.id {
			return hdr, corrupt(fmt.Sprintf("segment belongs to another log (log id %x..., this log's is %x...): copied from another log?", hdr.id[:6], c.id[:6]))
		}
		c.id, c.idKnown, c.sawV2 = hdr.id, true, true
	}
	return hdr, nil
}

// openAt positions the cursor at a checkpoint: a verified position, so the
// segment header is not read again.
func (c *cursor) openAt(cp checkpoint) error {
	name := segmentName(cp.first)
	f, err := c.fs.OpenFile(filepath.Join(c.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", filepath.Join(c.dir, name), err)
	}
	c.closeFile()
	c.f, c.name, c.first, c.keepF = f, name, cp.first, false
	c.setPos(cp.p)
	c.noteOff = cp.p.off
	c.start, c.version = cp.start, cp.version
	return nil
}

// checkpoint returns the cursor's position as a checkpoint.
func (c *cursor) checkpoint() checkpoint {
	return checkpoint{first: c.pFirst, p: c.p, start: c.start, version: c.version}
}

// noteTail offers the cursor's position to the position cache as a tail.
func (c *cursor) noteTail() {
	if c.idx != nil && c.f != nil {
		c.idx.noteTail(c.checkpoint())
	}
}

func readFileHeader(f File) ([]byte, error) {
	h := make([]byte, fileHeaderSize)
	n, err := f.ReadAt(h, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return h[:n], nil
}

func (c *cursor) closeFile() {
	if c.f != nil && !c.keepF {
		c.f.Close()
	}
	c.f = nil
}

// advance reads every complete unit from the cursor to the end of the log,
// following rotations, and calls emit for records with seq >= from. It
// returns the torn tail of the last segment, if any. Damage that is not a
// torn tail is a *CorruptionError.
func (c *cursor) advance(ctx context.Context, from uint64, emit func(Record) error) (*torn, error) {
	for {
		t, err := c.scanFile(ctx, from, emit)
		if err != nil {
			return nil, err
		}
		if c.p.next == c.first || c.atFree {
			return t, nil // empty or not sealed: it is the last one
		}
		nextPath := c.segmentPath(c.p.next)
		if _, err := c.fs.Stat(nextPath); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return t, nil
			}
			return nil, fmt.Errorf("segment: stat %s: %w", nextPath, err)
		}
		if t != nil {
			return nil, c.corrupt(t.off, c.p.next, "sealed segment does not end with a complete record: "+t.reason)
		}
		p := c.p
		if err := c.openSegment(p.next, &p); err != nil {
			return nil, err
		}
	}
}

// scanFile reads the current segment from c.p to its current end.
func (c *cursor) scanFile(ctx context.Context, from uint64, emit func(Record) error) (*torn, error) {
	// Probe the tail first: a zero frame header (or the end of the file)
	// at the last known unit boundary means nothing new, and costs one
	// small pread and no fstat. Avoiding fstat matters: on Linux ≥ 6.13
	// (multigrain timestamps) a stat of the active segment makes the
	// writer's next write take a fine-grained mtime, which measured ≈ 50 µs
	// more per append+fdatasync here.
	var probe []byte
	c.atFree = false
	if !c.checkFree {
		if c.probeBuf == nil {
			c.probeBuf = make([]byte, readProbe)
		}
		n, err := c.f.ReadAt(c.probeBuf, c.p.off)
		if err == nil || errors.Is(err, io.EOF) {
			if allZero(c.probeBuf[:min(n, frameHeaderSize)]) {
				c.atFree = n >= frameHeaderSize
				return nil, nil
			}
			// Records alias their read buffer: hand scanOnce a copy.
			probe = append([]byte(nil), c.probeBuf[:n]...)
		}
	}
	var prev string
	for attempt := 0; ; attempt++ {
		t, retry, err := c.scanOnce(ctx, from, emit, probe)
		probe = nil
		// Without the writer lock a writer may be mid-write while we read:
		// what looks like damage is read again, and reported once two reads
		// agree.
		if !retry || c.locked || attempt >= 5 || err.Error() == prev {
			return t, err
		}
		prev = err.Error()
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
	}
}

func (c *cursor) scanOnce(ctx context.Context, from uint64, emit func(Record) error, probe []byte) (t *torn, retry bool, err error) {
	fi, err := c.f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("segment: stat %s: %w", filepath.Join(c.dir, c.name), err)
	}
	size := fi.Size()
	var (
		buf    = probe   // what scanFile read at c.p.off, if anything
		bufOff = c.p.off // file offset of buf[0]
		cur    = c.p.off
		sum    = c.p.sum
		next   = c.p.next
	)
	if bufOff+int64(len(buf)) > size { // shrank since the probe
		buf = buf[:max(size-bufOff, 0)]
	}
	pending := c.pending[:0]
	defer func() { c.pending = pending[:0] }()
	chunk := int64(readProbe)
	if len(buf) > 0 {
		chunk *= 8
	}
	for {
		b := buf[cur-bufOff:]
		f, n, st := decodeFrame(b, sum)
		if st == frameShort || (st == frameZero && len(b) < frameHeaderSize) {
			have := bufOff + int64(len(buf))
			if have < size {
				if err := ctx.Err(); err != nil {
					return nil, false, err
				}
				want := max(chunk, int64(n))
				chunk = min(chunk*8, readChunk)
				if _, hsize, hst := decodeHeader(b); hst == frameOK {
					want = max(want, int64(hsize))
				}
				want = min(want, size-cur)
				nb := make([]byte, want)
				copy(nb, b)
				if err := readFull(c.f, nb[len(b):], cur+int64(len(b))); err != nil {
					if errors.Is(err, io.ErrUnexpectedEOF) { // file shrank: a cut
						return nil, true, fmt.Errorf("segment: %s shrank while reading", filepath.Join(c.dir, c.name))
					}
					return nil, false, fmt.Errorf("segment: read %s at offset %d: %w", filepath.Join(c.dir, c.name), cur, err)
				}
				buf, bufOff = nb, cur
				continue
			}
			if len(b) == 0 {
				if len(pending) == 0 {
					return nil, false, nil // clean end
				}
				t, err := c.classify(cur, frameShort, size, pending[0].Seq)
				return t, err != nil, err
			}
		}
		if st == frameZero && len(pending) == 0 {
			// A zero header at a unit boundary: the end of the log and the
			// start of preallocated free space.
			if !c.checkFree {
				return nil, false, nil
			}
			free, err := c.freeIsZero(cur, size)
			if err != nil || free {
				return nil, false, err
			}
			t, err := c.classify(cur, st, size, c.p.next)
			return t, err != nil, err
		}
		if st == frameOK && (f.seq != next || f.unitStart() != c.p.next) {
			st = frameSeq
		}
		if st != frameOK {
			t, err := c.classify(cur, st, size, c.p.next)
			return t, err != nil, err
		}
		pending = append(pending, Record{Seq: f.seq, Data: f.data})
		sum, next, cur = f.sum, next+1, cur+int64(n)
		if f.last {
			for _, r := range pending {
				if r.Seq >= from && emit != nil {
					if err := emit(r); err != nil {
						return nil, false, err
					}
				}
			}
			if w := c.wm.last; w != 0 && c.p.next <= w && next > w && (next-1 != w || sum != c.wm.sum) {
				return nil, false, c.corrupt(c.p.off, c.p.next, fmt.Sprintf("the log does not match its watermark: seq %d was acknowledged with chain sum %#08x, the log has %#08x after seq %d (a segment was rolled back or replaced)", w, c.wm.sum, sum, next-1))
			}
			pending = pending[:0]
			c.p = pos{off: cur, next: next, sum: sum, unit: c.p.off, seed: c.p.sum}
			if c.idx != nil && cur-c.noteOff >= indexSpacing {
				c.idx.noteSparse(c.checkpoint())
				c.noteOff = cur
			}
		}
	}
}

// frameSeq: a frame that checks out but is not the one expected here.
const frameSeq decodeStatus = 100

// classify decides what the bytes from x to the end of the segment are,
// given that the frame at x failed with st and c.p is the last complete
// unit. It returns a torn tail, or a *CorruptionError when valid frames of
// a later unit follow (damage before valid data), when a frame is out of
// sequence, or — in strict mode — when the failure does not look like a
// torn write (short file or zeroed sectors).
func (c *cursor) classify(x int64, st decodeStatus, size int64, unit uint64) (*torn, error) {
	seq := c.p.next
	if st == frameSeq {
		return nil, c.corrupt(x, seq, "record out of sequence (reordered, duplicated or foreign frame)")
	}
	tail := make([]byte, size-x)
	if err := readFull(c.f, tail, x); err != nil {
		return nil, fmt.Errorf("segment: read %s at offset %d: %w", filepath.Join(c.dir, c.name), x, err)
	}
	for p := 0; p+frameHeaderSize <= len(tail); p += frameAlign {
		if f, _, hst := decodeHeader(tail[p:]); hst == frameOK && f.unitStart() != unit {
			return nil, c.corrupt(x, seq, fmt.Sprintf("%s, but a valid record (seq %d) follows at offset %d", st, f.seq, x+int64(p)))
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
	end = min(size, (end+4095)&^4095)
	t := &torn{off: c.p.off, size: end, seq: c.p.next, reason: fmt.Sprintf("%s at offset %d", st, x)}
	if c.wm.last >= c.p.next {
		// Acknowledged (see "The watermark" in format.go): damage, however
		// torn it looks.
		return nil, c.corrupt(x, seq, fmt.Sprintf("%s in a unit that was acknowledged (the watermark is at seq %d): damage, not a torn write; nothing was cut", st, c.wm.last))
	}
	if !c.strict || st == frameShort || st == frameZero || zeroedSectorFrame(x, tail) {
		return t, nil
	}
	return nil, c.corrupt(x, seq, st.String()+" in the last record")
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

// freeIsZero reports whether the segment is all zeros from off to size.
func (c *cursor) freeIsZero(off, size int64) (bool, error) {
	buf := make([]byte, min(size-off, readChunk))
	for off < size {
		b := buf[:min(int64(len(buf)), size-off)]
		if err := readFull(c.f, b, off); err != nil {
			return false, fmt.Errorf("segment: read %s at offset %d: %w", filepath.Join(c.dir, c.name), off, err)
		}
		if !allZero(b) {
			return false, nil
		}
		off += int64(len(b))
	}
	return true, nil
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

// listSegments returns the first seqs of the segments in dir, sorted.
func listSegments(fsys FS, dir string) ([]uint64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("segment: list %s: %w", dir, err)
	}
	var segs []uint64
	for _, e := range entries {
		if n, ok := parseSegmentName(e.Name()); ok {
			segs = append(segs, n)
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return segs, nil
}

// newCursorAt opens a read cursor at the position closest before from:
// a checkpoint of idx in the segment that holds from, else that segment's
// start.
func newCursorAt(fsys FS, dir string, from uint64, idx *posIndex) (*cursor, []uint64, error) {
	segs, err := listSegments(fsys, dir)
	if err != nil || len(segs) == 0 {
		return nil, segs, err
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i] > from }) - 1
	if i < 0 {
		i = 0
	}
	c := &cursor{fs: fsys, dir: dir, idx: idx}
	if idx != nil {
		if cp, ok := idx.lookup(from); ok && cp.first >= segs[i] {
			if err := c.openAt(cp); err != nil {
				return nil, nil, err
			}
			return c, segs, nil
		}
	}
	if err := c.openSegment(segs[i], nil); err != nil {
		return nil, nil, err
	}
	return c, segs, nil
}

// scanDir calls fn for every complete record with seq >= from. idx, if not
// nil, is the Log's position cache: the scan starts at its closest
// checkpoint and feeds it what it passes.
func scanDir(ctx context.Context, fsys FS, dir string, from uint64, idx *posIndex, fn func(Record) error) error {
	c, segs, err := newCursorAt(fsys, dir, from, idx)
	if err != nil || c == nil {
		return err
	}
	defer c.closeFile()
	if _, err := c.advance(ctx, from, fn); err != nil {
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	if last := segs[len(segs)-1]; last > c.first {
		return c.corrupt(c.p.off, c.p.next, fmt.Sprintf("log ends at seq %d but segment %s exists (missing segment?)", c.p.next-1, segmentName(last)))
	}
	c.noteTail()
	return nil
}

// Scan calls fn for every record with seq >= from, in order, verifying
// checksums and the hash chain. It takes no lock: it may run while another
// process writes, and it stops cleanly at an incomplete final unit (a write
// in progress). Damage before valid data is a *CorruptionError. An error
// from fn ends the scan and is returned unchanged.
//
// Record.Data is safe to retain. It may share a backing array with its
// neighbours (reads are done in 1 MiB chunks), so a caller keeping a few
// small records for a long time should copy them.
func (l *Log) Scan(ctx context.Context, from uint64, fn func(Record) error) error {
	if l.isClosed() {
		return ErrClosed
	}
	return scanDir(ctx, l.fs, l.dir, from, &l.idx, fn)
}

// FollowInterval is how often Follow polls for new records.
const FollowInterval = 20 * time.Millisecond

// Follow is like Scan but, at the end of the log, keeps polling for records
// appended later (by this or another process) until ctx is done or fn
// returns an error. It returns ctx.Err() when ctx ends it.
func (l *Log) Follow(ctx context.Context, from uint64, fn func(Record) error) error {
	if from == 0 {
		from = 1
	}
	var c *cursor
	defer func() {
		if c != nil {
			c.closeFile()
		}
	}()
	for {
		if l.isClosed() {
			return ErrClosed
		}
		if c == nil {
			var err error
			if c, _, err = newCursorAt(l.fs, l.dir, from, &l.idx); err != nil {
				return err
			}
		}
		if c != nil {
			if _, err := c.advance(ctx, from, fn); err != nil {
				return err
			}
			c.noteTail()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(FollowInterval):
		}
	}
}
