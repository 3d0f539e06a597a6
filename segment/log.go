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
	// FS is the file system (nil: the operating system). Tests inject faults.
	FS FS
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
	qmu       sync.Mutex
	queue     []*request
	spare     []*request // a drained queue's array, reused for the next
	leading   bool
	lastGroup int // size of the previous group
	closed    bool

	// writer state (mu): held by the group leader while it writes.
	mu       sync.Mutex
	w        cursor // positioned at the end of the log; w.f is the writable active segment
	poison   error
	cuts     []Cut
	wbuf     []byte
	staged   [][]byte
	units    uint64     // commit units written by this Log (for benchmarks)
	live     []*request // runGroup's scratch
	writers  []*request // runGroup's scratch
	lastSeen uint64     // last seq, readable by Last without mu
	lastMu   sync.Mutex

	idx posIndex // verified positions where scans may start (index.go)

	// emit, while Open recovers, receives the records of the last
	// segment that the recovery scan reads anyway (OpenScan).
	emit func(Record) error
}

// Open opens (creating if needed) the log in dir. It takes the writer lock
// briefly to recover the tail: a torn final unit is cut off, its bytes saved
// as <segment>.torn-<offset>, and reported by Cuts. Any other damage in the
// last segment is a *CorruptionError and nothing is modified. Earlier
// segments are not read; Verify checks them.
func Open(dir string, opts *Options) (*Log, error) {
	return open(dir, opts, nil)
}

// OpenScan opens the log like Open and calls fn for every record of the
// log, in order, reading each once: the records of the sealed segments
// first, then those of the last segment as the recovery reads them (a torn
// final unit that recovery cuts is not delivered). It is Open followed by
// Scan(1) without reading the last segment twice — what a caller that
// folds the whole log at open (a replay) wants. fn runs with the writer
// lock held; an error from fn ends the open and is returned.
func OpenScan(dir string, opts *Options, fn func(Record) error) (*Log, error) {
	return open(dir, opts, fn)
}

func open(dir string, opts *Options, fn func(Record) error) (*Log, error) {
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
	if err := o.FS.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", dir, err)
	}
	lk, err := openDirLock(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, fs: o.FS, opts: o, lock: lk, emit: fn}
	l.w = cursor{fs: o.FS, dir: dir, locked: true, strict: true, idx: &l.idx}
	if err := lk.lock(); err != nil {
		lk.close()
		return nil, err
	}
	err = l.recover()
	l.emit = nil
	if uerr := lk.unlock(); err == nil {
		err = uerr
	}
	if err != nil {
		l.w.closeWriter()
		lk.close()
		return nil, err
	}
	return l, nil
}

// recover positions the writer at the end of the log (lock held).
func (l *Log) recover() error {
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
	segs, err := listSegments(l.fs, l.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return l.createSegment(pos{next: 1})
	}
	last := segs[len(segs)-1]
	if l.emit != nil && len(segs) > 1 {
		// Sealed segments, before the last one (which the recovery below
		// reads, and delivers as it goes).
		err := scanDir(context.Background(), l.fs, l.dir, 1, &l.idx, func(r Record) error {
			if r.Seq >= last {
				return errStop
			}
			return l.emit(r)
		})
		if err != nil {
			return err
		}
	}
	if err := l.w.openWriter(last, nil); err != nil {
		return err
	}
	// Open reads the whole free (preallocated) region once: a crash can
	// leave a torn unit whose first sector never reached the disk, which is
	// a zero frame header followed by garbage. Commit's catch-ups only probe
	// the header at the tail (see checkFree).
	l.w.checkFree = true
	defer func() { l.w.checkFree = false }()
	return l.catchUp(context.Background())
}

// openWriter opens segment first read-write as the writer's active segment.
func (c *cursor) openWriter(first uint64, expect *pos) error {
	path := filepath.Join(c.dir, segmentName(first))
	f, err := c.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", path, err)
	}
	h, err := readFileHeader(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("segment: read %s: %w", path, err)
	}
	c.closeWriter()
	c.f, c.name, c.first, c.keepF = f, segmentName(first), first, true
	c.alloc = -1 // unknown: Stat'ed before the next extension decision
	return c.enter(h, expect)
}

func (c *cursor) closeWriter() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}

// catchUp reads what other processes appended and cuts a torn tail left by
// a crashed writer (lock held). The writer cursor keeps its read-write
// handle across rotations made by others.
func (l *Log) catchUp(ctx context.Context) error {
	c := &l.w
	// A scan of this Log may have verified records past the writer's
	// position already: start after them.
	if cp := l.idx.tailPos(); c.f != nil && cp.p.next > c.p.next {
		if cp.first != c.first {
			if err := c.openWriter(cp.first, nil); err != nil {
				return err
			}
		}
		c.p, c.noteOff = cp.p, cp.p.off
	}
	for {
		var from uint64
		if l.emit != nil {
			from = c.first // deliver the last segment's records (OpenScan)
		}
		t, err := c.scanFile(ctx, from, l.emit)
		if err != nil {
			return err
		}
		if c.p.next != c.first && !c.atFree {
			path := c.segmentPath(c.p.next)
			if _, err := l.fs.Stat(path); err == nil {
				if t != nil {
					return c.corrupt(t.off, c.p.next, "sealed segment does not end with a complete record: "+t.reason)
				}
				p := c.p
				if err := c.openWriter(p.next, &p); err != nil {
					return err
				}
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("segment: stat %s: %w", path, err)
			}
		}
		if t != nil {
			if err := l.cut(t); err != nil {
				l.poison = err
				return err
			}
		}
		if c.p.next-1 != l.Last() {
			// Another process appended: it may also have extended or cut
			// the file. The next extension decision asks fstat.
			c.alloc = -1
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
	c.alloc = -1
	if err := c.f.Truncate(t.off); err != nil {
		return fmt.Errorf("segment: cut torn tail of %s at offset %d: %w", path, t.off, err)
	}
	c.alloc = t.off
	if !l.opts.NoSync {
		if err := c.f.Sync(); err != nil {
			return fmt.Errorf("segment: cut torn tail of %s: fsync: %w", path, err)
		}
	}
	l.cuts = append(l.cuts, Cut{File: c.name, Offset: t.off, Bytes: t.size - t.off, SavedTo: saved})
	return nil
}

func (l *Log) syncDir() error {
	if l.opts.NoSync {
		return nil
	}
	d, err := l.fs.OpenFile(l.dir, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("segment: open dir %s: %w", l.dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("segment: fsync dir %s: %w", l.dir, err)
	}
	return nil
}

// createSegment creates the segment starting at p.next with chain seed
// p.sum and makes it the active one. The file (header plus the first
// preallocated zeros) is written under a temporary name, fsynced, renamed
// and the directory fsynced, so a segment file always has a complete header
// and exists durably before anything in it is acknowledged.
func (l *Log) createSegment(p pos) error {
	name := segmentName(p.next)
	path := filepath.Join(l.dir, name)
	tmp := path + ".tmp"
	f, err := l.fs.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("segment: create %s: %w", tmp, err)
	}
	alloc := max(min(preallocMin, l.opts.SegmentSize), fileHeaderSize)
	_, err = f.WriteAt(encodeFileHeader(fileHeader{first: p.next, seed: p.sum}), 0)
	if err == nil {
		alloc, err = l.preallocNew(f, alloc)
	}
	if err == nil && !l.opts.NoSync {
		err = f.Sync()
	}
	if err == nil {
		err = l.fs.Rename(tmp, path)
	}
	if err == nil {
		err = l.syncDir()
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("segment: create segment %s: %w", path, err)
	}
	l.w.closeWriter()
	l.w.f, l.w.name, l.w.first, l.w.keepF = f, name, p.next, true
	l.w.alloc = alloc
	l.w.p = pos{off: fileHeaderSize, next: p.next, sum: p.sum}
	l.w.noteOff = fileHeaderSize
	l.w.noteTail()
	return nil
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
	l.trim()
	var err error
	if l.w.f != nil {
		err = l.w.f.Close()
		l.w.f = nil
	}
	if cerr := l.lock.close(); err == nil {
		err = cerr
	}
	return err
}
