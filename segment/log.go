package segment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/durable"
)

// Options configure a Log. The zero value is the production configuration.
type Options struct {
	// SegmentSize is the rotation threshold in bytes (DefaultSegmentSize if
	// zero). A commit unit never spans segments: a unit that does not fit
	// the rest of the active segment starts a new one, and a unit larger
	// than SegmentSize gets a segment of its own.
	SegmentSize int64
	// MaxRecordSize is the largest record Commit accepts
	// (DefaultMaxRecordSize, 64 MiB, if zero; at most 1 GiB). A larger
	// record fails its batch with an error matching ErrTooLarge that names
	// the limit. A 200 MB record therefore needs MaxRecordSize raised; it
	// then works and gets a segment of its own.
	MaxRecordSize int64
	// NoSync skips fdatasync/fsync. For tests only: acknowledged records
	// can be lost in a crash.
	NoSync bool
	// Identity names the log (helm uses the voyage id). Its SHA-256 is
	// written into every segment header and its CRC32C starts the hash
	// chain, so a segment of another log is refused. Empty: an anonymous
	// log, whose identity is whatever its first header says.
	Identity string
	// FS is the file system (nil: the operating system). Tests inject faults.
	FS FS
	// NoRetain says that OpenScan's fn keeps no Record.Data past its call
	// (it decodes what it keeps into memory of its own). The open then
	// reads into one reused buffer instead of a new one per megabyte.
	NoRetain bool
}

// Cut describes bytes removed from the end of the last segment because they
// were a torn final write (a crash mid-write). The bytes are saved first.
type Cut struct {
	File    string // segment file name
	Offset  int64  // where the cut began: the end of the last complete unit
	Bytes   int64  // bytes removed, not counting zero-filled preallocated space after them
	SavedTo string // path of the file holding the removed bytes ("" in a Verify report)
}

// Log is an append-only, checksummed, durable log of records in a
// directory. One Log may be used by many goroutines; many processes may
// open the same directory (writers serialize on dir/LOCK).
type Log struct {
	dir  string
	fs   FS
	opts Options
	lock *dirLock

	// queue state (qmu): group commit.
	qmu     sync.Mutex
	queue   []*request
	spare   []*request // a drained queue's array, reused for the next
	leading bool
	closed  bool

	// The sync stage (smu) and the state it shares with the write stage
	// (pmu): pipeline.go. Lock order: mu, then smu, then pmu.
	smu sync.Mutex
	pmu sync.Mutex
	pl  pipeline

	// writer state (mu): held by the group leader while it writes.
	mu       sync.Mutex
	w        cursor // positioned at the end of the log; w.f is the writable active segment
	poison   error
	cuts     []Cut
	wbuf     []byte
	staged   [][]byte
	live     []*request // runGroup's scratch
	writers  []*request // runGroup's scratch
	lastSeen uint64     // last seq, readable by Last without mu
	lastMu   sync.Mutex

	idx posIndex // verified positions where scans may start (index.go)

	torn     *torn              // a torn final unit found by Open, cut by the first Commit
	wm       watermark          // the watermark as the last recovery read it (catchUpRules)
	alloc    int64              // the known size of the active segment (-1: unknown; fstat before extending)
	base     int64              // its size when this writer first extended it (-1: not yet): steps grow with what it added
	writable bool               // the first Commit reopened the active segment for writing
	wmFile   File               // WATERMARK, open for writing (nil until the first Commit)
	wmBuf    [watermarkLen]byte // the sync stage's watermark encoding (writeWatermark)
	rechain  bool               // the unit being decided is Rechain's: it starts a format-4 segment
	// rechainLink is the chain's link at the log's end, read by Rechain's
	// decide for the new segment's header.
	rechainLink chain.Hash
}

// watermarkAt returns the watermark of the writer's position (mu held):
// in a format-4 segment a format-4 slot, with the chain's link.
func (l *Log) watermarkAt() watermark {
	c := &l.w
	return watermark{last: c.p.next - 1, segment: c.pFirst, sum: c.p.sum, link: c.p.link, linked: c.version >= 4 && c.p.linked}
}

// Open opens the log in dir for reading and appending. Opening reads: it
// creates nothing, takes no exclusive lock and cuts nothing, so it works on
// a read-only file system, and a log in a directory that does not exist
// yet opens empty. It checks what is cheap: the log's bounds (the first
// segment starts at seq 1), its identity (Options.Identity against the
// headers of the first and last segments), the last segment record by
// record, and the watermark (see format.go): acknowledged units that are
// missing or damaged are a *CorruptionError. A torn final unit — one that
// cannot have been acknowledged — is reported by Torn and cut by the first
// Commit, which reports the Cut in Cuts. Earlier segments are read by
// OpenScan and Verify.
//
// The first Commit creates what a writer needs: the directory, LOCK,
// WATERMARK, and a segment in the current format.
//
// ctx ends the open's reading (checked between reads) and its wait for the
// shared lock a torn tail asks for; its error is returned as it is.
func Open(ctx context.Context, dir string, opts *Options) (*Log, error) {
	return openWith(ctx, dir, opts, nil, nil)
}

// OpenScan opens the log like Open and calls fn for every record of the
// log, in order, reading each once and checking the whole hash chain from
// the log's genesis (a torn final unit is not delivered). It is what a
// caller that folds the whole log at open (a replay) wants. fn runs during
// the open, with no lock held; an error from fn ends the open and is
// returned.
func OpenScan(ctx context.Context, dir string, opts *Options, fn func(Record) error) (*Log, error) {
	if fn == nil {
		fn = func(Record) error { return nil }
	}
	return openWith(ctx, dir, opts, fn, nil)
}

// openWith opens the log; after, when set, is where OpenAfter starts.
func openWith(ctx context.Context, dir string, opts *Options, fn func(Record) error, after *Mark) (*Log, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = DefaultMaxRecordSize
	}
	if o.MaxRecordSize > maxFormatRecord {
		return nil, fmt.Errorf("segment: open %s: MaxRecordSize %d exceeds the format limit %d", dir, o.MaxRecordSize, maxFormatRecord)
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	l := &Log{dir: dir, fs: o.FS, opts: o}
	l.w = cursor{fs: o.FS, dir: dir, idx: &l.idx}
	l.w.setIdentity(o.Identity)
	rec := &recovery{c: &l.w, full: fn != nil && after == nil, emit: fn, after: after}
	l.w.sc.transient = o.NoRetain && fn != nil
	err := rec.run(ctx)
	l.w.sc.transient, l.w.sc.spare = false, nil
	if err != nil {
		l.w.closeFile()
		return nil, err
	}
	l.torn, l.wm = rec.torn, rec.wm
	l.w.linkFrom = 1 // the writer keeps the chain from here on
	l.setLast(rec.last())
	if l.w.f != nil {
		l.w.noteTail()
	}
	return l, nil
}

// Torn reports a torn final unit that Open found and the next Commit will
// cut (nil if none, or once it was cut: see Cuts). Bytes is what the cut
// will remove; SavedTo is empty.
func (l *Log) Torn() *Cut {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.torn == nil {
		return nil
	}
	return &Cut{File: l.torn.file, Offset: l.torn.off, Bytes: l.torn.size - l.torn.off}
}

// lockForWrite takes the writer lock (l.mu held), creating the directory
// and LOCK at the first Commit. The caller unlocks.
func (l *Log) lockForWrite(giveUp func() bool) error {
	if l.lock == nil {
		mkdir := func() error { return durable.MkdirAll(l.fs, l.dir, 0o700) }
		if l.opts.NoSync {
			mkdir = func() error { return l.fs.MkdirAll(l.dir, 0o700) }
		}
		if err := mkdir(); err != nil {
			return fmt.Errorf("segment: create log directory %s: %w", l.dir, err)
		}
		lk, err := openDirLock(l.dir)
		if err != nil {
			return err
		}
		l.lock = lk
	}
	return l.lock.lock(giveUp)
}

// becomeWriter runs at the first Commit, under the writer lock: it
// reopens the active segment read-write where the reader left it (or
// finds the segments another writer created since), so that catchUp can
// read on and cut.
func (l *Log) becomeWriter(ctx context.Context) error {
	c := &l.w
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("segment: list %s: %w", l.dir, err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), segmentExt+".tmp") { // a rotation that crashed before its rename
			if err := l.fs.Remove(filepath.Join(l.dir, e.Name())); err != nil {
				return fmt.Errorf("segment: remove %s: %w", e.Name(), err)
			}
		}
	}
	if c.f != nil {
		cp := c.checkpoint()
		if err := l.openWriter(cp.first, nil); err != nil {
			return err
		}
		if cp.fi != nil && c.fi != nil && os.SameFile(cp.fi, c.fi) {
			c.moveTo(cp)
			l.writable = true
			return nil
		}
		// The segment read was replaced since (Reclaim rewrote it, and
		// its offsets moved): read the log again, as Open would.
		l.idx.forget(cp.first)
		c.closeFile()
		*c = cursor{fs: c.fs, dir: c.dir, idx: c.idx, id: c.id, idKnown: c.idKnown, genesis: c.genesis, genesisKnown: c.genesisKnown, firstV4: c.firstV4}
	}
	// Empty at open, or replaced: read what is there now, as Open would.
	rec := &recovery{c: c, locked: true}
	if err := rec.run(ctx); err != nil {
		return err
	}
	l.torn, l.wm = rec.torn, rec.wm
	c.linkFrom = 1
	if c.f != nil {
		cp := c.checkpoint()
		if err := l.openWriter(cp.first, nil); err != nil {
			return err
		}
		c.moveTo(cp)
	}
	l.writable = true
	return nil
}

// openWriter opens segment first read-write as the writer's active segment.
func (l *Log) openWriter(first uint64, expect *pos) error {
	c := &l.w
	f, h, path, err := c.openHeader(first, os.O_RDWR)
	if err != nil {
		return err
	}
	c.use(f, first, path)
	l.alloc = -1 // unknown: Stat'ed before the next extension decision
	l.base = -1
	return c.enter(h, expect)
}

// catchUpRules are the rules of the writer's catch-up. It holds the
// writer lock, so nothing changes while it reads and nothing is read
// twice; it decides what to cut, so a failure that does not look like a
// torn write is damage, and units the watermark covers are never cut. The
// first catch-up of a Log (first) also requires the free space to be
// zeros, as Open does: a crash may have left a torn unit whose first
// sector never landed.
func catchUpRules(wm watermark, first bool) rules {
	return rules{strict: true, free: first, wm: wm}
}

// catchUp reads what other processes appended and cuts a torn tail left by
// a crashed writer (lock held). The writer cursor keeps its read-write
// handle across rotations made by others. first: the first catch-up of
// this Log (catchUpRules).
func (l *Log) catchUp(ctx stopper, first bool) error {
	c := &l.w
	if c.f == nil {
		return nil // still empty: nobody wrote since becomeWriter looked
	}
	// A scan of this Log may have verified records past the writer's
	// position already: start after them.
	// Not to a position whose link is unknown (a reader's) when the
	// writer knows its own: it reads on and keeps the chain.
	if cp := l.idx.tailPos(); cp.p.next > c.p.next && (cp.p.linked || !c.p.linked) {
		if cp.first != c.first {
			if err := l.openWriter(cp.first, nil); err != nil {
				return err
			}
		}
		c.moveTo(cp)
	}
	r := catchUpRules(l.wm, first)
	for {
		t, free, err := c.readSegment(ctx, 0, nil, r)
		if err != nil {
			return err
		}
		if c.p.next != c.first && !free {
			path := c.segmentPath(c.p.next)
			if _, err := l.fs.Stat(path); err == nil {
				if t != nil {
					return c.corrupt(t.off, c.p.next, "sealed segment does not end with a complete record: "+t.reason)
				}
				p := c.p
				if err := l.openWriter(p.next, &p); err != nil {
					return err
				}
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("segment: stat %s: %w", path, err)
			}
		}
		if t != nil {
			// Only a unit above the watermark may be cut; others may have
			// moved the watermark since this Log last read it.
			wm, _, err := readWatermark(l.fs, l.dir)
			if err != nil {
				return err
			}
			if wm.last >= t.seq {
				l.wm = wm
				return c.corrupt(t.off, t.seq, fmt.Sprintf("%s, in a unit that was acknowledged (the watermark is at seq %d): damage, not a torn write; nothing was cut", t.reason, wm.last))
			}
			if err := l.cut(t); err != nil {
				l.poison = err
				return err
			}
		}
		l.torn = nil
		if c.p.next-1 != l.Last() {
			// Another process appended: it may also have extended or cut
			// the file. The next extension decision asks fstat.
			l.alloc = -1
		}
		l.setLast(c.p.next - 1)
		c.noteTail()
		return nil
	}
}

// cut saves the torn bytes beside the segment, then truncates it.
func (l *Log) cut(t *torn) error {
	c := &l.w
	path := filepath.Join(l.dir, c.name)
	b := make([]byte, t.size-t.off)
	if err := readFull(c.f, b, t.off); err != nil {
		return fmt.Errorf("segment: cut torn tail of %s at offset %d: read: %w", path, t.off, err)
	}
	saved := fmt.Sprintf("%s.torn-%d", path, t.off)
	for i := 1; ; i++ {
		if _, err := l.fs.Stat(saved); errors.Is(err, fs.ErrNotExist) {
			break
		}
		saved = fmt.Sprintf("%s.torn-%d.%d", path, t.off, i)
	}
	sf, err := l.fs.OpenFile(saved, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("segment: cut torn tail of %s: save: %w", path, err)
	}
	_, err = sf.WriteAt(b, 0)
	if err == nil && !l.opts.NoSync {
		err = sf.Sync()
	}
	if cerr := sf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.syncDir()
	}
	if err != nil {
		return fmt.Errorf("segment: cut torn tail of %s: save to %s: %w", path, saved, err)
	}
	l.alloc = -1
	if err := c.f.Truncate(t.off); err != nil {
		return fmt.Errorf("segment: cut torn tail of %s at offset %d: %w", path, t.off, err)
	}
	l.alloc = t.off
	if !l.opts.NoSync {
		if err := c.f.Sync(); err != nil {
			return fmt.Errorf("segment: cut torn tail of %s: fsync: %w", path, err)
		}
	}
	l.cuts = append(l.cuts, Cut{File: c.name, Offset: t.off, Bytes: t.size - t.off, SavedTo: saved})
	return nil
}

// syncDir makes the log directory's entries durable (after a create or
// a rename).
func (l *Log) syncDir() error {
	if l.opts.NoSync {
		return nil
	}
	if err := durable.SyncDir(l.fs, l.dir); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	return nil
}

// createSegment creates the segment starting at p.next with chain seed
// p.sum (format 4: and BLAKE3 link p.link) in format version and makes it
// the active one (smu held: no fdatasync of the old one may be running as
// it is closed). The file (header, unit when given, and the first
// preallocated zeros) is written under a temporary name, fsynced, renamed
// and the directory fsynced, so a segment file always has a complete header
// and exists durably before anything in it is acknowledged; a unit written
// with it (Rechain's) is in the log exactly when the file is.
func (l *Log) createSegment(p pos, version uint32, unit []byte) error {
	if version >= 4 && !p.linked {
		return fmt.Errorf("segment: create a format-%d segment at seq %d: the chain's link there is not known", version, p.next)
	}
	name := segmentName(p.next)
	path := filepath.Join(l.dir, name)
	tmp := path + ".tmp"
	f, err := l.fs.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("segment: create %s: %w", tmp, err)
	}
	hdr := fileHeader{version: version, first: p.next, seed: p.sum, id: l.w.id, link: p.link}
	hsize := hdr.size()
	alloc := max(min(preallocMin, l.opts.SegmentSize), hsize+int64(len(unit)))
	_, err = f.WriteAt(encodeFileHeader(hdr), 0)
	if err == nil {
		alloc, err = l.preallocNew(f, alloc, hsize)
	}
	if err == nil && len(unit) > 0 {
		var n int
		n, err = f.WriteAt(unit, hsize)
		if err == nil && n != len(unit) {
			err = fmt.Errorf("short write (%d of %d bytes)", n, len(unit))
		}
		alloc = max(alloc, hsize+int64(len(unit)))
	}
	if err == nil {
		err = l.publish(f, tmp, path)
	}
	if err != nil {
		f.Close()
		l.fs.Remove(tmp)
		return fmt.Errorf("segment: create segment %s: %w", path, err)
	}
	l.w.use(f, p.next, path)
	l.alloc, l.base = alloc, 0
	l.w.version, l.w.start, l.w.sawV2 = version, hsize, true
	if version >= 4 && (l.w.firstV4 == 0 || p.next < l.w.firstV4) {
		l.w.firstV4 = p.next
	}
	l.w.setPos(pos{off: hsize, next: p.next, sum: p.sum, link: p.link, linked: p.linked})
	l.w.noteOff = hsize
	l.w.noteTail()
	l.pmu.Lock()
	l.pl.file = f // the sync stage syncs the new segment from now on (smu held)
	l.pmu.Unlock()
	return nil
}

// publish makes a file written whole under the name tmp durable under
// path: fsync it, rename it, fsync the directory. A crash leaves the old
// state or the new, never a file of that name half written.
func (l *Log) publish(f File, tmp, path string) error {
	if !l.opts.NoSync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		return err
	}
	return l.syncDir()
}

// upgrade gives the writer an active segment in the current format before
// it appends (lock held): the first segment of a new log, or, for a log
// whose last segment an older format wrote, a new segment after it (an
// empty old one is replaced).
func (l *Log) upgrade() error {
	c := &l.w
	if c.f == nil {
		return l.createSegment(pos{next: 1, sum: genesis(formatVersion, c.id), link: l.genesis(), linked: true}, formatVersion, nil)
	}
	p := c.p
	if p.off > c.start {
		if err := l.seal(); err != nil {
			return err
		}
	} else if p.next == 1 {
		p.sum = genesis(legacyVersion, c.id)
	}
	return l.createSegment(p, legacyVersion, nil)
}

// genesis returns the BLAKE3 genesis of a new log: its identity's.
func (l *Log) genesis() chain.Hash {
	if l.w.genesisKnown {
		return l.w.genesis
	}
	return chain.Genesis(l.opts.Identity)
}

// writeVersion is the format the writer appends in: the active segment's
// (format 2 for an older log's, 4 for a format-4 one).
func (l *Log) writeVersion() uint32 {
	if l.w.version >= 4 {
		return formatVersion
	}
	return legacyVersion
}

// ensureWatermark opens WATERMARK for the writer, creating it if the log
// has none yet (lock held, after catchUp): written whole under a
// temporary name with the log's current end, fsynced, renamed, and the
// directory fsynced, before any format-2 segment is created.
func (l *Log) ensureWatermark() error {
	if l.wmFile != nil {
		return nil
	}
	path := filepath.Join(l.dir, watermarkName)
	f, err := l.fs.OpenFile(path, os.O_RDWR|noFollow, 0)
	if err == nil {
		l.wmFile = f
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return l.w.openError(path, err)
	}
	var w watermark
	if c := &l.w; c.f != nil {
		w = l.watermarkAt()
	}
	buf := make([]byte, watermarkSize)
	copy(buf, encodeWatermark(w))
	copy(buf[watermarkSlot:], encodeWatermark(w))
	tmp := path + ".tmp"
	f, err = l.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("segment: create %s: %w", tmp, err)
	}
	_, err = f.WriteAt(buf, 0)
	if err == nil {
		err = l.publish(f, tmp, path)
	}
	if err != nil {
		f.Close()
		l.fs.Remove(tmp)
		return fmt.Errorf("segment: create %s: %w", path, err)
	}
	l.wmFile = f
	return nil
}

// writeWatermark records that everything up to the writer's position is
// acknowledged (lock held, after the unit's fdatasync). Not synced: see
// "The watermark" in format.go.
//
// It overwrites the older slot (or one that does not check out): slot,
// when this Log wrote the other one last and nobody appended since (see
// pipeline.wmEnd), or else read back first with one pread. Whichever process
// wrote last, the other slot keeps the newest watermark before this one,
// so a slot torn by a crash costs at most one unit of the watermark's
// reach. It returns the slot to write next.
func (l *Log) writeWatermark(w watermark, slot int) (next int, err error) {
	b := putWatermark(l.wmBuf[:], w) // one syncer at a time (pipeline.syncing)
	if slot < 0 {
		var cur [watermarkSize]byte
		n, _ := l.wmFile.ReadAt(cur[:], 0)
		slot = 0
		if _, older, _ := newestWatermark(cur[:n]); older >= 0 {
			slot = older
		}
	}
	off := int64(slot) * watermarkSlot
	if _, err := l.wmFile.WriteAt(b, off); err != nil {
		return -1, fmt.Errorf("segment: write %s at offset %d: %w", filepath.Join(l.dir, watermarkName), off, err)
	}
	return 1 - slot, nil
}

// Cuts returns what Open and later catch-ups cut from torn tails.
func (l *Log) Cuts() []Cut {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Cut(nil), l.cuts...)
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Last returns the last seq known to this Log: after its latest catch-up
// or append. Other processes may have appended since.
func (l *Log) Last() uint64 {
	l.lastMu.Lock()
	defer l.lastMu.Unlock()
	return l.lastSeen
}

func (l *Log) setLast(s uint64) {
	l.lastMu.Lock()
	l.lastSeen = s
	l.lastMu.Unlock()
}

func (l *Log) isClosed() bool {
	l.qmu.Lock()
	defer l.qmu.Unlock()
	return l.closed
}

// Close waits for a commit in progress, then releases the files. Queued
// commits fail with ErrClosed.
func (l *Log) Close() error {
	l.qmu.Lock()
	if l.closed {
		l.qmu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.qmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncAll() // a failure is the committers' to report
	if l.writable {
		l.trim()
	}
	l.pmu.Lock()
	l.pl.held = false // closing the lock's files below releases it
	l.pmu.Unlock()
	var err error
	if l.w.f != nil {
		err = l.w.f.Close()
		l.w.f = nil
	}
	if l.wmFile != nil {
		if cerr := l.wmFile.Close(); err == nil {
			err = cerr
		}
	}
	if l.lock != nil {
		if cerr := l.lock.close(); err == nil {
			err = cerr
		}
	}
	return err
}
