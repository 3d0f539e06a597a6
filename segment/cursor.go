package segment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/helmlog/helm/chain"
)

// A cursor is a position in a log and the walk from it across segments:
// it opens segments, checks their headers against the log's identity and
// the hash chain, runs the frame scanner (scan.go) over each, and judges
// where each scan stopped by the rules its caller gives. It is shared by
// readers (Scan, Follow, ScanDir, Tx.Scan: reader.go), recovery and Verify
// (recover.go) and the writer's catch-up (log.go), which each state their
// own rules.

// pos is a position just after a complete commit unit.
type pos struct {
	off  int64  // byte offset in the current segment
	next uint64 // seq of the next record
	sum  uint32 // chain value after the last record
	unit int64  // offset of the last unit's first frame (0: no unit in this segment)
	seed uint32 // chain value before that unit
	// link is the BLAKE3 chain's link after the last record, when linked:
	// known from the log's genesis, a format-4 header, a Mark or a Head
	// computed by reading the log. Unknown, the scanner does not compute it.
	link   chain.Hash
	linked bool
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

// rules is how a caller judges what a scan of a segment found after its
// last complete unit. Each caller states its own (readerRules,
// recoveryRules, catchUpRules); judge applies them.
type rules struct {
	// strict: a failed frame that does not look like a torn write (the
	// file ends inside it, its header is zero, or it ends in zeroed
	// sectors) is damage. Without it, it is taken for a write in progress
	// and ends the read.
	strict bool
	// free: a zero frame header at a unit boundary ends the log only if
	// the rest of the segment is zeros too; otherwise it is judged as a
	// failed frame (a crash can lose a unit's first sector and keep later
	// ones).
	free bool
	// wm is the watermark the log is held to (zero: none): a unit at or
	// below wm.last that fails its checks is damage, never torn, and the
	// chain sum after wm.last must be wm.sum.
	wm watermark
	// reread: nothing stops a writer while this caller reads (it holds no
	// lock), so what looks like damage is read again, and reported once
	// two reads find the same.
	reread bool
}

// maxRereads bounds the reads of a segment end that keeps changing.
const maxRereads = 5

type cursor struct {
	fs      FS
	dir     string
	f       File
	name    string      // current segment file name
	file    string      // its path
	first   uint64      // first seq of the current segment
	fi      os.FileInfo // the current segment file's identity (nil: unknown)
	p       pos
	pFirst  uint64      // the segment c.p is a position in
	pFi     os.FileInfo // its file's identity
	start   int64       // where the current segment's first frame starts (its header size)
	version uint32      // the current segment's format version

	sc frameScanner

	nextSeq  uint64 // nextPath is dir/segmentName(nextSeq), cached: asked at every end of log
	nextPath string
	segments int // segments entered, for Verify

	idx     *posIndex // the Log's position cache (nil: none)
	noteOff int64     // offset of the last checkpoint offered to idx in this segment

	// The log's identity: every format-2 header must carry id. When the
	// caller gave none (idKnown false), the first format-2 header seen
	// sets it.
	id      LogID
	idKnown bool
	sawV2   bool // a format-2 segment was entered

	// genesis is the BLAKE3 chain's genesis, when known (genesisKnown):
	// from Options.Identity, or for an anonymous log whose headers carry
	// no log id, the genesis of the empty identity.
	genesis      chain.Hash
	genesisKnown bool
	// linkFrom says which segments the cursor computes the BLAKE3 chain
	// in (a link per record costs more than the CRC): 0 none (readers:
	// Scan, Follow, ScanDir), 1 all (Verify, the writer), N the segments
	// from the one starting at N (recovery: the last segment).
	linkFrom uint64
	// firstV4 is the first seq of the first format-4 segment whose header
	// the cursor checked (0: none): where the log's stored BLAKE3 chain
	// starts.
	firstV4 uint64
}

// setIdentity sets the log's identity on c: its log id and the BLAKE3
// genesis.
func (c *cursor) setIdentity(identity string) {
	if identity != "" {
		c.id, c.idKnown = idOf(identity), true
		c.genesis, c.genesisKnown = chain.Genesis(identity), true
	}
}

func (c *cursor) corrupt(off int64, seq uint64, reason string) *CorruptionError {
	return &CorruptionError{Dir: c.dir, File: c.name, Offset: off, Seq: seq, Reason: reason, Hint: corruptHint}
}

// setPos moves the cursor to p, a position in the current segment.
func (c *cursor) setPos(p pos) {
	c.p, c.pFirst, c.pFi = p, c.first, c.fi
}

// segmentPath returns the path of the segment starting at first.
func (c *cursor) segmentPath(first uint64) string {
	if c.nextSeq != first || c.nextPath == "" {
		c.nextSeq, c.nextPath = first, filepath.Join(c.dir, segmentName(first))
	}
	return c.nextPath
}

// use makes f, the segment starting at first, the cursor's file (closing
// the one it had).
func (c *cursor) use(f File, first uint64, path string) {
	c.closeFile()
	c.f, c.name, c.file, c.first = f, segmentName(first), path, first
	c.fi, _ = f.Stat() // nil on failure: checkpoints in it are not trusted
}

func (c *cursor) closeFile() {
	if c.f != nil {
		c.f.Close()
	}
	c.f = nil
}

// openSegment positions the cursor at the start of segment first, checking
// its header against what the chain expects (expect != nil).
func (c *cursor) openSegment(first uint64, expect *pos) error {
	f, h, path, err := c.openHeader(first, os.O_RDONLY)
	if err != nil {
		return err
	}
	c.use(f, first, path)
	c.segments++
	return c.enter(h, expect)
}

// openError is the error of an open of a file of the log at path: a
// symbolic link there is damage (see noFollow).
func (c *cursor) openError(path string, err error) error {
	return openError(c.dir, path, err)
}

// openError is the error of an open of path, a file of the log in dir.
func openError(dir, path string, err error) error {
	if isLinkRefused(err) {
		return &CorruptionError{Dir: dir, File: filepath.Base(path),
			Reason: "the file is a symbolic link, not the log's own (helm neither reads nor writes a log through a link)",
			Hint:   corruptHint}
	}
	return fmt.Errorf("segment: open %s: %w", path, err)
}

// openHeader opens segment first with flag and reads its header.
func (c *cursor) openHeader(first uint64, flag int) (File, []byte, string, error) {
	path := filepath.Join(c.dir, segmentName(first))
	f, err := c.fs.OpenFile(path, flag|noFollow, 0)
	if err != nil {
		return nil, nil, path, c.openError(path, err)
	}
	h, err := readFileHeader(f)
	if err != nil {
		f.Close()
		return nil, nil, path, fmt.Errorf("segment: read %s: %w", path, err)
	}
	return f, h, path, nil
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
	if hdr.first == 1 && !c.genesisKnown && hdr.id == (LogID{}) {
		c.genesis, c.genesisKnown = chain.Genesis(""), true // an anonymous log
	}
	p := pos{next: hdr.first, sum: hdr.seed}
	switch {
	case hdr.version >= 4:
		switch {
		case expect != nil && expect.linked && hdr.link != expect.link:
			return c.corrupt(0, c.first, "BLAKE3 chain broken between segments (the header's link does not match the previous segment's last record)")
		case hdr.first == 1 && c.genesisKnown && hdr.link != c.genesis:
			return c.corrupt(0, c.first, "BLAKE3 chain does not start at this log's genesis (link in the first segment's header)")
		}
		p.link, p.linked = hdr.link, true
	case expect != nil:
		p.link, p.linked = expect.link, expect.linked
	case hdr.first == 1:
		p.link, p.linked = c.genesis, c.genesisKnown
	}
	c.version, c.start = hdr.version, hdr.size()
	p.off = c.start
	c.setPos(p)
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
	if hdr.version >= 4 && (c.firstV4 == 0 || first < c.firstV4) {
		c.firstV4 = first
	}
	return hdr, nil
}

// openAt positions the cursor at a checkpoint: a verified position, so the
// segment header is not read again.
//
// A checkpoint is an offset in one file: a segment that Reclaim rewrote
// since (a new file under the same name, its frames moved) is not that
// file, and openAt reports errMoved; the caller reads the segment from
// its start.
func (c *cursor) openAt(cp checkpoint) error {
	path := filepath.Join(c.dir, segmentName(cp.first))
	f, err := c.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", path, err)
	}
	c.use(f, cp.first, path)
	if cp.fi == nil || c.fi == nil || !os.SameFile(cp.fi, c.fi) {
		return errMoved
	}
	c.moveTo(cp)
	return nil
}

// errMoved is a checkpoint in a segment file that was replaced since.
var errMoved = errors.New("segment: checkpoint in a segment file replaced since")

// moveTo positions the cursor at cp, a checkpoint in the current segment.
func (c *cursor) moveTo(cp checkpoint) {
	c.setPos(cp.p)
	c.noteOff = cp.p.off
	c.start, c.version = cp.start, cp.version
}

// checkpoint returns the cursor's position as a checkpoint.
func (c *cursor) checkpoint() checkpoint {
	return checkpoint{first: c.pFirst, p: c.p, start: c.start, version: c.version, fi: c.pFi}
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

// advance reads every complete unit from the cursor to the end of the log,
// following rotations, and calls emit for records with seq >= from. It
// returns the torn tail of the last segment that r allows, if any; damage
// is a *CorruptionError.
func (c *cursor) advance(ctx context.Context, from uint64, emit func(Record) error, r rules) (*torn, error) {
	for {
		t, free, err := c.readSegment(ctx, from, emit, r)
		if err != nil {
			return nil, err
		}
		if c.p.next == c.first || free {
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

// readSegment reads the current segment from c.p to its end by rules r:
// it calls emit for records with seq >= from and moves c.p past every
// complete unit. It returns the torn tail r allows (nil: none), and free
// when the segment ended in preallocated space, so that it is not sealed
// and no segment can follow it yet (seal truncates a segment to its data
// end before the next one is created). With r.free the next segment is
// looked for all the same.
func (c *cursor) readSegment(ctx stopper, from uint64, emit func(Record) error, r rules) (t *torn, free bool, err error) {
	var prev finding
	for attempt := 0; ; attempt++ {
		fd, err := c.find(ctx, from, emit, r)
		if err != nil {
			return nil, false, err
		}
		t, err := c.judge(fd, r)
		if err == nil || !r.reread || attempt >= maxRereads || (attempt > 0 && fd == prev) {
			return t, err == nil && fd.stop.kind == stopFree && !r.free, err
		}
		prev = fd
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
	}
}

// finding is what one read of a segment found at its end: a value, so
// two reads that found the same compare equal.
type finding struct {
	stop stop
	tail tailFacts // for a failed frame (not frameSeq): the bytes after it
}

// find scans the current segment from c.p, emitting and moving c.p unit
// by unit, and gathers what judging its end by r needs.
func (c *cursor) find(ctx stopper, from uint64, emit func(Record) error, r rules) (finding, error) {
	p := c.p
	if c.linkFrom == 0 || c.first < c.linkFrom {
		p.linked = false // not computed here: see linkFrom
	}
	s, err := c.sc.scan(ctx, c.f, c.file, p, func(recs []Record, end pos) error {
		if emit != nil {
			for _, rec := range recs {
				if rec.Seq >= from {
					if err := emit(rec); err != nil {
						return err
					}
				}
			}
		}
		if w := r.wm.last; w != 0 && c.p.next <= w && end.next > w {
			if end.next-1 != w || end.sum != r.wm.sum {
				return c.corrupt(c.p.off, c.p.next, fmt.Sprintf("the log does not match its watermark: seq %d was acknowledged with chain sum %#08x, the log has %#08x after seq %d (a segment was rolled back or replaced)", w, r.wm.sum, end.sum, end.next-1))
			}
			if r.wm.linked && end.linked && end.link != r.wm.link {
				return c.corrupt(c.p.off, w, fmt.Sprintf("the WATERMARK's chain link at seq %d does not match the log: records at or below %d were edited", w, w))
			}
		}
		c.p = end
		if c.idx != nil && end.off-c.noteOff >= indexSpacing {
			c.idx.noteSparse(c.checkpoint())
			c.noteOff = end.off
		}
		return nil
	})
	if err != nil {
		return finding{}, err
	}
	if s.kind == stopFree && r.free {
		size, err := s.sizeOf(c.f, c.file)
		if err != nil {
			return finding{}, err
		}
		zero, ok, err := c.sc.zerosFrom(c.f, c.file, s.off, size)
		switch {
		case err != nil:
			return finding{}, err
		case !ok:
			return finding{stop: stop{kind: stopShrank, off: s.off, size: size}}, nil
		case zero:
			return finding{stop: s}, nil
		}
		s = stop{kind: stopFrame, off: s.off, st: frameZero, size: size}
	}
	if s.kind != stopFrame || s.st == frameSeq {
		return finding{stop: s}, nil
	}
	facts, ok, err := c.sc.examine(c.f, c.file, s.off, s.size, c.p.next)
	if err != nil {
		return finding{}, err
	}
	if !ok {
		return finding{stop: stop{kind: stopShrank, off: s.off, size: s.size}}, nil
	}
	return finding{stop: s, tail: facts}, nil
}

// judge decides by r what fd is, given that c.p is the last complete
// unit: the end of the segment (nil, nil), a torn tail, or an error — a
// *CorruptionError when valid frames of a later unit follow (damage before
// valid data), when a frame is out of sequence, when the failing unit was
// acknowledged (r.wm), or — r.strict — when the failure does not look like
// a torn write (short file, zero header or zeroed sectors).
func (c *cursor) judge(fd finding, r rules) (*torn, error) {
	s, seq := fd.stop, c.p.next
	switch s.kind {
	case stopEnd, stopFree:
		return nil, nil
	case stopShrank:
		return nil, fmt.Errorf("segment: %s shrank while reading", c.file)
	}
	if s.st == frameSeq {
		return nil, c.corrupt(s.off, seq, "record out of sequence (reordered, duplicated or foreign frame)")
	}
	if fd.tail.follows {
		return nil, c.corrupt(s.off, seq, fmt.Sprintf("%s, but a valid record (seq %d) follows at offset %d", s.st, fd.tail.followSeq, fd.tail.followOff))
	}
	if r.wm.last >= seq {
		// Acknowledged (see "The watermark" in format.go): damage, however
		// torn it looks.
		return nil, c.corrupt(s.off, seq, fmt.Sprintf("%s in a unit that was acknowledged (the watermark is at seq %d): damage, not a torn write; nothing was cut", s.st, r.wm.last))
	}
	if r.strict && s.st != frameShort && s.st != frameZero && !fd.tail.sectors {
		return nil, c.corrupt(s.off, seq, s.st.String()+" in the last record")
	}
	return &torn{off: c.p.off, size: fd.tail.end, seq: seq, reason: fmt.Sprintf("%s at offset %d", s.st, s.off)}, nil
}
