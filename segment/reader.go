package segment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"time"

	"github.com/helmlog/helm/chain"
)

// Record is one entry of the log.
type Record struct {
	Seq  uint64
	Data []byte
	// Reclaimed says the record's bytes were reclaimed (Log.Reclaim): Data
	// is nil, and the chain still proves what the record was.
	Reclaimed bool
	// Len and Digest are a reclaimed record's length and BLAKE3 digest,
	// kept by its stub, so that the chain continues over it (Link). A
	// stub of a format-3 segment keeps only a CRC: its Digest is a weak
	// one derived from the length and CRC (see "Reclaimed records").
	Len    int
	Digest chain.Hash
}

// Link returns the BLAKE3 chain's link after r, continued from prev.
func (r Record) Link(prev chain.Hash) chain.Hash {
	if r.Reclaimed {
		return chain.Next(prev, r.Seq, r.Len, r.Digest)
	}
	return chain.Link(prev, r.Seq, r.Data)
}

// errStop ends a scan early without error.
var errStop = errors.New("stop")

// readerRules are the rules of Scan, Follow, ScanDir and Tx.Scan. A
// reader holds no lock while a writer may be writing, so what looks torn
// at the end of the log is a write in progress: the read stops cleanly
// before it. What looks like damage is read again, and reported once two
// reads find the same. The watermark is Open's and the writer's business:
// readers do not read it.
var readerRules = rules{reread: true}

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
			err := c.openAt(cp)
			if err == nil {
				return c, segs, nil
			}
			if !errors.Is(err, errMoved) {
				return nil, nil, err
			}
			idx.forget(cp.first)
			c.closeFile()
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
	_, err := scanDirTail(ctx, fsys, dir, from, idx, fn)
	return err
}

// scanDirTail is scanDir that returns the torn final unit the scan
// stopped at, if any (nil when fn stopped it early).
func scanDirTail(ctx context.Context, fsys FS, dir string, from uint64, idx *posIndex, fn func(Record) error) (*torn, error) {
	c, segs, err := newCursorAt(fsys, dir, from, idx)
	if err != nil || c == nil {
		return nil, err
	}
	defer c.closeFile()
	t, err := c.advance(ctx, from, fn, readerRules)
	if err != nil {
		if errors.Is(err, errStop) {
			return nil, nil
		}
		return nil, err
	}
	if last := segs[len(segs)-1]; last > c.first {
		return nil, c.corrupt(c.p.off, c.p.next, fmt.Sprintf("log ends at seq %d but segment %s exists (missing segment?)", c.p.next-1, segmentName(last)))
	}
	c.noteTail()
	if t != nil && t.file == "" {
		t.file = segmentName(c.first)
	}
	return t, nil
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
	if l.nothingFrom(from) {
		return nil
	}
	err := scanDir(ctx, l.fs, l.dir, from, &l.idx, fn)
	if err != nil && l.Last() == 0 && errors.Is(err, fs.ErrNotExist) {
		return nil // a log that opened empty, in a directory nobody made yet
	}
	return err
}

// FollowInterval is how often Follow polls for new records.
const FollowInterval = 20 * time.Millisecond

// Follow is like Scan but, at the end of the log, keeps polling for records
// appended later (by this or another process) until ctx is done or fn
// returns an error. It returns ctx.Err() when ctx ends it. Each poll costs
// one small read at the end of the log (no fstat) while nothing is new.
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
			c, _, err = newCursorAt(l.fs, l.dir, from, &l.idx)
			if err != nil && errors.Is(err, fs.ErrNotExist) && l.Last() == 0 {
				// A log that opened empty, in a directory nobody made
				// yet: its first writer makes it.
				c, err = nil, nil
			}
			if err != nil {
				return err
			}
		}
		if c != nil {
			if _, err := c.advance(ctx, from, fn, readerRules); err != nil {
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

// ErrNotAtMark is what ScanAfter returns when the log does not pass
// through its mark: the unit the mark saw is not where it was, or does not
// end with the chain value the mark recorded. A cache made at the mark (a
// snapshot of views) does not describe this log: the caller reads the log
// from its start instead.
var ErrNotAtMark = errors.New("segment: the log does not pass through the mark")

// ScanAfter calls fn for every record after m.Last, like Scan, once it has
// checked that the log passes through m: the unit holding m.Last is where
// m saw it (in segment m.Segment, whose header checks out, from m.Unit to
// m.End) and chains from m.Seed to m.Sum. Records after it are read and
// their chain checked from there, across later segments. It reads nothing
// before m.Unit: a cache made at m spares the reader the records it holds.
func (l *Log) ScanAfter(ctx context.Context, m Mark, fn func(Record) error) error {
	if l.isClosed() {
		return ErrClosed
	}
	first, ok := parseSegmentName(m.Segment)
	if !ok {
		return ErrNotAtMark
	}
	c := &cursor{fs: l.fs, dir: l.dir, idx: &l.idx}
	l.mu.Lock()
	c.id, c.idKnown = l.w.id, l.w.idKnown
	l.mu.Unlock()
	defer c.closeFile()
	if err := c.openSegment(first, nil); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNotAtMark
		}
		return err
	}
	if err := c.positionAt(m); err != nil {
		return err
	}
	if _, err := c.advance(ctx, m.Last+1, fn, readerRules); err != nil {
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	segs, err := listSegments(l.fs, l.dir)
	if err != nil {
		return err
	}
	if last := segs[len(segs)-1]; last > c.first {
		return c.corrupt(c.p.off, c.p.next, fmt.Sprintf("log ends at seq %d but segment %s exists (missing segment?)", c.p.next-1, segmentName(last)))
	}
	c.noteTail()
	return nil
}

// positionAt moves c, open on the mark's segment, to just after the unit
// m saw, once that unit is checked to be there: ErrNotAtMark if not.
func (c *cursor) positionAt(m Mark) error {
	if c.start > m.Unit || m.End <= m.Unit || m.End-m.Unit > maxChangedUnit || m.Last < c.first {
		return ErrNotAtMark
	}
	b := make([]byte, m.End-m.Unit)
	if err := readFull(c.f, b, m.Unit); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return ErrNotAtMark
		}
		return fmt.Errorf("segment: read %s at offset %d: %w", c.file, m.Unit, err)
	}
	if !unitIsAt(b, m) {
		return ErrNotAtMark
	}
	p := pos{off: m.End, next: m.Last + 1, sum: m.Sum, unit: m.Unit, seed: m.Seed}
	if m.Hash != "" {
		h, err := chain.Parse(fmt.Sprintf("%d:%s", m.Last, m.Hash))
		if err != nil {
			return ErrNotAtMark
		}
		p.link, p.linked = h.Hash, true
	}
	c.moveTo(checkpoint{first: c.first, fi: c.fi, p: p, start: c.start, version: c.version})
	return nil
}

// ErrMarkElsewhere is OpenAfter's error when its mark is not in the last
// segment (it matches ErrNotAtMark too): open the log with Open, and read
// on from the mark with ScanAfter.
var ErrMarkElsewhere = fmt.Errorf("%w (it is not in the last segment)", ErrNotAtMark)

// OpenAfter opens the log like Open, but reads its last segment from the
// mark m on, not from its start, and calls fn for the records after m
// (as OpenScan does for all): the open of a reader that holds the views of
// the log up to m (a snapshot). The log must pass through m, as
// ScanAfter checks, and m must be in the last segment; otherwise it
// returns an error matching ErrNotAtMark and nothing is open (the caller
// opens the log another way).
func OpenAfter(ctx context.Context, dir string, opts *Options, m Mark, fn func(Record) error) (*Log, error) {
	if fn == nil {
		fn = func(Record) error { return nil }
	}
	return openWith(ctx, dir, opts, fn, &m)
}
