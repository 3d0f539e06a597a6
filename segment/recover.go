package segment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/chain"
)

// recovery is the read that Open, OpenScan, a first writer and Verify
// make of a log: its bounds (the first segment starts at seq 1, no segment
// is missing), its identity and chain, its tail (complete, torn, or
// damaged) and its watermark (see format.go). It never writes.
type recovery struct {
	c      *cursor
	full   bool               // read every segment from seq 1 (OpenScan, Verify); else the first header and the last segment
	emit   func(Record) error // receives every record read (full)
	locked bool               // the caller holds the writer lock: no second read under a shared lock
	// after, when set, is a mark in the last segment to start reading it
	// from (OpenAfter): what comes before it is not read.
	after *Mark

	wm    watermark
	hasWM bool
	torn  *torn
	segs  []uint64
}

// last returns the last seq of the complete units the recovery found.
func (r *recovery) last() uint64 {
	if r.c.f == nil {
		return 0
	}
	return r.c.p.next - 1
}

// run reads the log. What looks torn or damaged at the end may be a unit
// another process is writing at this moment; writers hold LOCK
// exclusively while they write, so an unlocked reader that meets either
// reads the tail again under a shared lock, when nothing is in progress.
//
// An error of the first pass is read again too: besides damage, a
// writer's trim, cut or extension can change a file's size under an
// unlocked reader. Errors of emit and of ctx are returned as they are.
func (r *recovery) run(ctx context.Context) error {
	var emitErr error
	if emit := r.emit; emit != nil {
		r.emit = func(rec Record) error {
			emitErr = emit(rec)
			return emitErr
		}
		defer func() { r.emit = emit }()
	}
	err := r.pass(ctx, false)
	if errors.Is(err, ErrNotAtMark) {
		return err // what a mark was checked against is acknowledged: no write in progress changes it
	}
	if r.locked || (r.torn == nil && err == nil) || (err != nil && ((emitErr != nil && errors.Is(err, emitErr)) || ctx.Err() != nil)) {
		return err
	}
	unlock, ok, lerr := sharedLock(ctx, r.c.dir)
	if lerr != nil {
		return lerr
	}
	if !ok {
		return err // no LOCK: no writer ever ran here, nothing is in progress
	}
	defer unlock()
	return r.pass(ctx, true)
}

// recoveryRules are the rules of Open, OpenScan, Verify and a first
// writer: they decide what may be cut, so a failure that does not look
// like a torn write is damage, the free space must be zeros, and the log
// is held to its watermark. Without a lock (locked false) what looks like
// damage is read again until two reads agree; run then reads once more
// under the shared lock.
func recoveryRules(wm watermark, locked bool) rules {
	return rules{strict: true, free: true, wm: wm, reread: !locked}
}

// pass reads the log once; again continues a previous pass from the last
// complete unit it reached, under the shared lock.
func (r *recovery) pass(ctx context.Context, again bool) error {
	c := r.c
	wm, has, err := readWatermark(c.fs, c.dir)
	if err != nil {
		return err
	}
	r.wm, r.hasWM, r.torn = wm, has, nil
	resumed, from := false, uint64(1)
	if again && c.pFirst != 0 {
		from = c.p.next // the last pass emitted what comes before
		// Where the last pass stopped, unless Reclaim replaced that file.
		err := c.openAt(c.checkpoint())
		if err != nil && !errors.Is(err, errMoved) {
			return err
		}
		resumed = err == nil
	}
	if !resumed {
		c.closeFile()
		segs, err := listSegments(c.fs, c.dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		r.segs = segs
		if len(segs) == 0 {
			c.p = pos{next: 1}
			if wm.last > 0 {
				return &CorruptionError{Dir: c.dir, File: segmentName(max(wm.segment, 1)), Seq: 1, Hint: corruptHint,
					Reason: fmt.Sprintf("the log has no segment files, but its watermark says seq %d was acknowledged: its segments were deleted", wm.last)}
			}
			return nil
		}
		if segs[0] != 1 {
			return &CorruptionError{Dir: c.dir, File: segmentName(1), Seq: 1, Hint: corruptHint,
				Reason: fmt.Sprintf("the first segment (seq 1) is missing: the log starts at segment %s", segmentName(segs[0]))}
		}
		if err := c.openSegment(1, nil); err != nil {
			return err
		}
		if last := segs[len(segs)-1]; !r.full && last > 1 {
			// The segments in between are read by OpenScan and Verify;
			// here only their headers: names, seqs and identity.
			for _, s := range segs[1 : len(segs)-1] {
				if err := c.checkHeader(s); err != nil {
					return err
				}
			}
			if err := c.openSegment(last, nil); err != nil {
				return err
			}
		}
		if m := r.after; m != nil {
			if m.Segment != c.name {
				return ErrMarkElsewhere
			}
			if err := c.positionAt(*m); err != nil {
				return err
			}
			from = max(from, m.Last+1) // a second pass emitted up to from already
		}
	}
	if c.linkFrom != 1 {
		c.linkFrom = max(r.segs[len(r.segs)-1], 1) // the open checks the chain in the last segment
	}
	t, err := c.advance(ctx, from, r.emit, recoveryRules(wm, r.locked || again))
	if err != nil {
		return err
	}
	if last := r.segs[len(r.segs)-1]; last > c.first {
		next := last
		for _, s := range r.segs {
			if s > c.first {
				next = s
				break
			}
		}
		return &CorruptionError{Dir: c.dir, File: segmentName(c.p.next), Seq: c.p.next, Hint: corruptHint,
			Reason: fmt.Sprintf("segment %s is missing: segment %s ends at seq %d, but the log goes on in segment %s", segmentName(c.p.next), c.name, c.p.next-1, segmentName(next))}
	}
	if c.sawV2 && !r.hasWM {
		return &CorruptionError{Dir: c.dir, File: watermarkName, Seq: c.p.next, Hint: corruptHint,
			Reason: "WATERMARK is missing, but the log has format-2 segments, which are only created after it: it was deleted, so the log's end cannot be checked"}
	}
	if end := c.p.next - 1; end < wm.last {
		return c.corrupt(c.p.off, end+1, fmt.Sprintf("the log ends at seq %d, but seq %d was acknowledged (WATERMARK; segment %s): segments were deleted or truncated, or one was rolled back to an older copy", end, wm.last, segmentName(wm.segment)))
	}
	if t != nil {
		t.file = c.name
	}
	r.torn = t
	return nil
}

// readWatermark reads dir/WATERMARK: the newest valid slot. has is false
// when the file does not exist.
func readWatermark(fsys FS, dir string) (w watermark, has bool, err error) {
	path := filepath.Join(dir, watermarkName)
	f, err := fsys.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return watermark{}, false, nil
	}
	if err != nil {
		return watermark{}, false, openError(dir, path, err)
	}
	defer f.Close()
	b := make([]byte, watermarkSize)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return watermark{}, false, fmt.Errorf("segment: read %s: %w", path, err)
	}
	w, _, ok := newestWatermark(b[:n])
	if !ok {
		return watermark{}, true, &CorruptionError{Dir: dir, File: watermarkName, Hint: corruptHint,
			Reason: "WATERMARK is damaged: neither of its slots checks out, so the log's end cannot be checked"}
	}
	return w, true, nil
}

// newestWatermark decodes the slots of a WATERMARK file's bytes b: the
// newest valid one, and the index of the slot to overwrite next — one
// that does not check out, else the older (-1 when b holds no slot).
func newestWatermark(b []byte) (w watermark, older int, ok bool) {
	older = -1
	var lasts [2]uint64
	var valid [2]bool
	for i := range 2 {
		off := i * watermarkSlot
		if off+watermarkLenV2 > len(b) {
			break
		}
		s, v := decodeWatermark(b[off:])
		valid[i], lasts[i] = v, s.last
		if v && (!ok || s.last > w.last) {
			w, ok = s, true
		}
	}
	switch {
	case !valid[0]:
		older = 0
	case !valid[1]:
		older = 1
	case lasts[1] < lasts[0]:
		older = 1
	default:
		older = 0
	}
	return w, older, ok
}

// Report is the result of Verify.
type Report struct {
	Segments int    // segment files checked
	Records  uint64 // records checked
	// Reclaimed counts the records among them whose bytes were reclaimed
	// (Log.Reclaim): their place in the chain checked, their bytes gone.
	Reclaimed uint64
	Bytes     int64 // bytes in segment files, including preallocated zeros
	LastSeq   uint64
	// Watermark is the last seq the log's WATERMARK says was acknowledged
	// (0: none recorded).
	Watermark uint64
	// Head is the BLAKE3 chain's head at LastSeq, recomputed from the
	// log's genesis over every record (a reclaimed one by the digest its
	// stub keeps); the zero Head when the genesis is not known (a log
	// with an identity verified without Options.Identity).
	Head chain.Head
	// Chain says which chain protects the log: "blake3" (format 4; its
	// stored links — segment headers, WATERMARK — were checked against
	// the recomputation) or "crc32c" (an older format: only accidents are
	// detected).
	Chain ChainInfo
	// Torn is a torn final write that the next writer will cut (nil if none).
	Torn *Cut
	// Problem is the first damage found (nil if none); Verify also returns it.
	Problem *CorruptionError
}

// Verify checks the whole log in dir: every record of every segment
// (frame and record checksums, sequence numbers), the segment headers and
// the log's identity (opts.Identity, if set), the hash chain from the
// log's genesis across all segments, its bounds, and its watermark. It
// takes no exclusive lock and modifies nothing. The returned error is the
// Report's Problem, or an I/O error.
func Verify(ctx context.Context, dir string, opts *Options) (Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	var rep Report
	c := &cursor{fs: o.FS, dir: dir, linkFrom: 1}
	c.setIdentity(o.Identity)
	defer c.closeFile()
	r := &recovery{c: c, full: true, emit: func(rec Record) error {
		rep.Records++
		rep.LastSeq = rec.Seq
		if rec.Reclaimed {
			rep.Reclaimed++
		}
		return nil
	}}
	err := r.run(ctx)
	rep.Segments, rep.Watermark = c.segments, r.wm.last
	if segs, lerr := listSegments(o.FS, dir); lerr == nil {
		for _, s := range segs {
			if fi, err := o.FS.Stat(filepath.Join(dir, segmentName(s))); err == nil {
				rep.Bytes += fi.Size()
			}
		}
	}
	if err != nil {
		if ce := (*CorruptionError)(nil); errors.As(err, &ce) {
			rep.Problem = ce
		}
		return rep, err
	}
	rep.Chain = c.chainInfo()
	if c.p.linked {
		rep.Head = chain.Head{Seq: c.p.next - 1, Hash: c.p.link}
	}
	if r.torn != nil {
		rep.Torn = &Cut{File: r.torn.file, Offset: r.torn.off, Bytes: r.torn.size - r.torn.off}
	}
	return rep, nil
}

// checkHeader reads the header of segment first and checks its name, seq
// and identity as enter does, without moving the cursor (the seed is
// checked when the segment is read).
func (c *cursor) checkHeader(first uint64) error {
	path := filepath.Join(c.dir, segmentName(first))
	f, err := c.fs.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return c.openError(path, err)
	}
	h, err := readFileHeader(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("segment: read %s: %w", path, err)
	}
	_, err = c.checkFileHeader(h, first)
	return err
}
