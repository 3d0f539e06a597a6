package segment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/helmlog/helm/chain"
)

// request is one Commit waiting in the group-commit queue. taken and lead
// are guarded by Log.qmu; first and err are written by the leader of the
// group that took the request and read by its owner after the wake (the
// channel send orders them), as is end.
type request struct {
	ctx    context.Context
	decide func(*Tx) ([][]byte, error)
	// stubs are the records of decide's batch, by their index in it, to
	// append as stubs (AppendRecords); their Data in the batch is nil.
	stubs map[int]Record
	// wake receives exactly once: false when the request's group is done
	// (first and err are set), true when its goroutine is to lead the next
	// group. It carries the role so the woken goroutine never reads lead,
	// which the handing-over leader writes under qmu. nil for a request
	// that leads from the start: nobody ever sends to it.
	wake  chan bool
	taken bool // a leader took it into a group
	lead  bool // this request's goroutine leads a group
	first uint64
	end   uint64 // the log's end after its group's unit: durable before the outcome
	err   error
}

// Tx is what a decide function sees: the log as it will be when the
// records staged by the earlier decides of the same group are appended. It
// is valid only during the decide call.
type Tx struct {
	l      *Log
	ctx    context.Context // the Commit's whose decide runs: Scan reads under it
	base   uint64          // last seq on disk
	staged [][]byte        // records staged by earlier decides of this group
	// stubs are the staged records to append as stubs, by their index in
	// staged (AppendRecords): Reclaimed, with Len and Digest.
	stubs map[int]Record
	done  bool
}

// Last returns the last seq, including records staged earlier in this group.
func (tx *Tx) Last() uint64 { return tx.base + uint64(len(tx.staged)) }

// Scan calls fn for records from..Last(), from disk and then from the
// records staged earlier in this group. It reads under the ctx given to
// Commit: when that ends, Scan returns its error.
func (tx *Tx) Scan(from uint64, fn func(Record) error) error {
	if tx.done {
		return errors.New("segment: Tx used after its decide returned")
	}
	if from == 0 {
		from = 1
	}
	if from <= tx.base {
		base := tx.base
		err := scanDir(tx.ctx, tx.l.fs, tx.l.dir, from, &tx.l.idx, func(r Record) error {
			if r.Seq > base {
				return errStop
			}
			return fn(r)
		})
		if err != nil {
			return err
		}
	}
	for i, d := range tx.staged {
		if seq := tx.base + uint64(i) + 1; seq >= from {
			r := Record{Seq: seq, Data: d}
			if s, ok := tx.stubs[i]; ok {
				r = Record{Seq: seq, Reclaimed: true, Len: s.Len, Digest: s.Digest}
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Commit is the one write primitive. Under the writer lock (a mutex and
// flock on dir/LOCK) it catches up on records other processes appended
// (cutting a torn tail a crashed writer left), then calls decide. The
// records decide returns are appended as one atomic batch: after a crash
// all or none of them are in the log. An error from decide aborts the batch
// and is returned unchanged. Commit returns the seq of the first appended
// record (0 if decide returned none) only after the records are fdatasynced.
//
// Concurrent Commits in one process are grouped: one leader takes the lock
// once, runs the queued decides one after another (each Tx sees the records
// staged by the earlier ones), writes all batches with one write and one
// fdatasync, then wakes everyone. A failing decide aborts only its batch.
// ctx is honoured while a Commit waits in the queue; once its decide has
// run, Commit waits for the outcome. decide must not retain the Tx, must not
// call methods of the Log that commit, and must not panic.
//
// After a failed write or fsync every later Commit fails with ErrPoisoned
// until the log is reopened.
func (l *Log) Commit(ctx context.Context, decide func(tx *Tx) ([][]byte, error)) (first uint64, err error) {
	return l.commit(ctx, decide, nil)
}

// commit is Commit; stubs are the records of decide's batch to append as
// stubs, by index (AppendRecords).
func (l *Log) commit(ctx context.Context, decide func(tx *Tx) ([][]byte, error), stubs map[int]Record) (first uint64, err error) {
	if decide == nil {
		return 0, errors.New("segment: Commit with nil decide")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r := &request{ctx: ctx, decide: decide, stubs: stubs}
	l.qmu.Lock()
	if l.closed {
		l.qmu.Unlock()
		return 0, ErrClosed
	}
	if !l.leading {
		l.leading, r.lead = true, true
	} else {
		r.wake = make(chan bool, 1)
	}
	l.queue = append(l.queue, r)
	leader := r.lead
	l.qmu.Unlock()

	if !leader {
		var lead bool
		select {
		case lead = <-r.wake:
		case <-ctx.Done():
			l.qmu.Lock()
			if !r.taken && !r.lead {
				for i, q := range l.queue {
					if q == r {
						l.queue = append(l.queue[:i], l.queue[i+1:]...)
						break
					}
				}
				l.qmu.Unlock()
				return 0, ctx.Err()
			}
			l.qmu.Unlock()
			lead = <-r.wake // taken: the outcome is coming; lead: the wake was sent
		}
		if !lead {
			return r.outcome(l)
		}
	}

	// Lead one group (it contains r): run its decides and write its
	// records as one unit, then hand leadership on at once, so that the
	// next group forms and writes while this one's unit is made durable
	// (one fdatasync covers every unit written before it starts: see
	// pipeline.go). Then wake the group.
	l.qmu.Lock()
	group := l.queue
	l.queue = l.spare[:0]
	l.spare = nil
	for _, q := range group {
		q.taken = true
	}
	l.qmu.Unlock()
	end := l.runGroup(group)
	for _, q := range group {
		q.end = end
	}
	l.qmu.Lock()
	if len(l.queue) > 0 {
		next := l.queue[0]
		next.lead = true
		next.wake <- true
	} else {
		l.leading = false
	}
	for _, q := range group {
		if q != r {
			q.wake <- false
		}
	}
	clear(group)
	if cap(group) <= 1024 && l.spare == nil {
		l.spare = group[:0]
	}
	l.qmu.Unlock()
	return r.outcome(l)
}

// outcome waits until the unit holding r's records is durable, and
// returns r's result.
func (r *request) outcome(l *Log) (uint64, error) {
	if r.err == nil && r.end > 0 {
		if err := l.waitDurable(r.end); err != nil {
			r.first, r.err = 0, err
		}
	}
	return r.first, r.err
}

// runGroup runs the decides of a group and writes their records as one
// unit. It returns the unit's last seq (0: nothing was written), which is
// durable once waitDurable says so.
func (l *Log) runGroup(group []*request) (end uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fail := func(err error) {
		for _, q := range group {
			if q.err == nil {
				q.err = err
			}
		}
	}
	if l.isClosed() && l.w.f == nil {
		fail(ErrClosed)
		return
	}
	if err := l.poisoned(); err != nil {
		fail(err)
		return
	}
	live := l.live[:0]
	defer func() { clear(live); l.live = live[:0] }()
	for _, q := range group {
		if err := q.ctx.Err(); err != nil {
			q.err = err
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return
	}
	// Wait for the lock while anyone in the group still wants it.
	giveUp := func() bool {
		for _, q := range live {
			if q.ctx.Err() == nil {
				return false
			}
		}
		return true
	}
	err := l.acquire(live[0].ctx, giveUp)
	if errors.Is(err, errLockWait) {
		for _, q := range live {
			q.err = q.ctx.Err()
		}
		return
	}
	if err != nil {
		fail(err)
		return
	}
	defer l.release()
	l.rechain = false
	defer func() { l.rechain = false }()
	tx := &Tx{l: l, base: l.w.p.next - 1, staged: l.staged[:0]}
	writers := l.writers[:0]
	defer func() { clear(writers); l.writers = writers[:0] }()
	for _, q := range live {
		mark := len(tx.staged)
		tx.ctx = q.ctx
		rechain := l.rechain
		recs, err := q.decide(tx)
		if err == nil {
			for _, d := range recs {
				if int64(len(d)) > l.opts.MaxRecordSize {
					err = fmt.Errorf("%w: record of %d bytes exceeds MaxRecordSize %d (log %s)", ErrTooLarge, len(d), l.opts.MaxRecordSize, l.dir)
					break
				}
			}
		}
		if err == nil && len(q.stubs) > 0 {
			err = l.checkStubs(q.stubs, len(recs))
		}
		if err != nil {
			q.err = err
			tx.staged = tx.staged[:mark]
			l.rechain = rechain
			continue
		}
		if len(recs) > 0 {
			q.first = tx.base + uint64(mark) + 1
			tx.staged = append(tx.staged, recs...)
			writers = append(writers, q)
			for i, s := range q.stubs {
				if tx.stubs == nil {
					tx.stubs = map[int]Record{}
				}
				tx.stubs[mark+i] = s
			}
		}
	}
	tx.done = true
	defer func() {
		clear(tx.staged)
		l.staged = tx.staged[:0]
	}()
	if len(tx.staged) == 0 {
		return
	}
	if err := l.writeUnit(tx.staged, tx.stubs, len(writers)); err != nil {
		for _, q := range writers {
			q.first, q.err = 0, err
		}
		return 0
	}
	return l.w.p.next - 1
}

// takeWriter makes l the log's writer (l.mu held): it takes the writer
// lock, waiting until giveUp says to stop (errLockWait), reads the log on
// to its end and checks the watermark. On failure the lock is released.
func (l *Log) takeWriter(ctx context.Context, giveUp func() bool) error {
	if err := l.lockForWrite(giveUp); err != nil {
		return err
	}
	first := !l.writable
	var err error
	if first || l.w.f == nil {
		// Also while the log had no segment when this Log last looked:
		// another Log may have created the first one since, and this one
		// must read it, not create (and replace) it again.
		err = l.becomeWriter(ctx)
	}
	if err == nil {
		err = l.catchUp(ctx, first)
	}
	if err == nil {
		err = l.ensureWatermark()
	}
	if err != nil {
		if uerr := l.lock.unlock(); uerr != nil && l.poison == nil {
			l.poison = uerr
		}
		return err
	}
	return nil
}

// writeUnit appends recs as one commit unit: rotate if needed, one write;
// the records stubs names by index are written as stubs (checkStubs let
// them in). The sync stage makes it durable (pipeline.go). Any failure
// poisons the writer.
func (l *Log) writeUnit(recs [][]byte, stubs map[int]Record, commits int) error {
	c := &l.w
	if c.f == nil || c.version < legacyVersion {
		l.smu.Lock()
		err := l.upgrade()
		l.smu.Unlock()
		if err != nil {
			return l.setPoison(err)
		}
	}
	rechain := l.rechain
	if rechain && !c.p.linked {
		// Rechain's decide read the link at the log's end (this unit's
		// base: nothing moved since, the lock is held).
		c.p.link, c.p.linked = l.rechainLink, true
	}
	p := c.p
	if len(stubs) > 0 && !(p.linked && (c.version >= 4 || rechain)) {
		// checkStubs let them in: the log cannot have changed format since.
		return fmt.Errorf("segment: write %s at seq %d: a stub in a segment of format %d, which holds none", filepath.Join(l.dir, c.name), p.next, c.version)
	}
	buf := l.wbuf[:0]
	sum, link := p.sum, p.link
	for i, d := range recs {
		seq := p.next + uint64(i)
		if s, ok := stubs[i]; ok {
			buf, sum = appendNewStub(buf, seq, uint32(i), i == len(recs)-1, sum, s.Len, s.Digest)
			link = chain.Next(link, seq, s.Len, s.Digest)
			continue
		}
		buf, sum = appendFrame(buf, seq, uint32(i), i == len(recs)-1, sum, d)
		if p.linked {
			link = chain.Link(link, seq, d)
		}
	}
	if cap(buf) <= 4<<20 {
		l.wbuf = buf[:0]
	}
	if rechain {
		// A unit that starts a format-4 segment, written with it: the file
		// appears (renamed, durable) holding the whole unit, or not at all.
		l.smu.Lock()
		err := l.seal()
		if err == nil {
			err = l.createSegment(p, formatVersion, buf)
		}
		l.smu.Unlock()
		if err != nil {
			return l.setPoison(err)
		}
		c.setPos(pos{off: c.p.off + int64(len(buf)), next: p.next + uint64(len(recs)), sum: sum, unit: c.p.off, seed: p.sum, link: link, linked: true})
		l.setLast(c.p.next - 1)
		c.noteTail()
		l.wrote(unitEnd{wm: l.watermarkAt(), file: c.name, off: c.p.off, records: len(recs)}, commits)
		return nil
	}
	if p.off > c.start && p.off+int64(len(buf)) > l.opts.SegmentSize {
		// The unit's frames were chained from p.sum, which is the new
		// segment's seed: the encoding stays valid. No fdatasync of the
		// old segment may be running when it is sealed and closed.
		l.smu.Lock()
		err := l.seal()
		if err == nil {
			err = l.createSegment(p, l.writeVersion(), nil)
		}
		l.smu.Unlock()
		if err != nil {
			return l.setPoison(err)
		}
	}
	// Preallocate (zeros written, synced by the fdatasync below, before the
	// unit is acknowledged) when the unit does not fit or the free space
	// runs low.
	if err := l.ensureAlloc(c.p.off + int64(len(buf))); err != nil {
		return l.setPoison(err)
	}
	n, err := c.f.WriteAt(buf, c.p.off)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(buf))
	}
	if err != nil {
		// The page cache holds what was written: zero it so the free
		// space after the log's end is zeros again, not a torn unit that
		// a later catch-up (which only probes the tail) would not see.
		l.unwrite(c.p.off, n)
		return l.setPoison(fmt.Errorf("segment: write %s at offset %d: %w", filepath.Join(l.dir, c.name), c.p.off, err))
	}
	c.setPos(pos{off: c.p.off + int64(len(buf)), next: p.next + uint64(len(recs)), sum: sum, unit: c.p.off, seed: p.sum, link: link, linked: p.linked})
	l.setLast(c.p.next - 1)
	if c.p.off-c.noteOff >= indexSpacing {
		l.idx.noteSparse(c.checkpoint())
		c.noteOff = c.p.off
	}
	c.noteTail()
	l.wrote(unitEnd{wm: l.watermarkAt(), file: c.name, off: c.p.off, records: len(recs)}, commits)
	return nil
}

func (l *Log) setPoison(err error) error {
	l.poison = err
	return fmt.Errorf("%w; %w", err, ErrPoisoned)
}

// Append appends records unconditionally as one atomic batch and returns
// the seq of the first.
func (l *Log) Append(ctx context.Context, records ...[]byte) (first uint64, err error) {
	return l.Commit(ctx, func(*Tx) ([][]byte, error) { return records, nil })
}

// AppendRecords appends recs as one atomic batch only if the log's last
// seq is expectLast, as AppendIf does: each record's Data, or, for a
// record with Reclaimed set, a stub (see "Reclaimed records" in
// format.go) that keeps the record's Len and Digest in place of its bytes.
// A stub is a record whose bytes were reclaimed before it came to this
// log — a log copied, record by record as Scan yields them, from one that
// Reclaim shrank — and the chain goes on over it as over the record
// (Record.Link), so the copy's Head is the original's. Seq is ignored.
//
// Only a format-4 log holds stubs that keep a digest: a log that goes on
// in an older format refuses a batch holding one with ErrStubFormat, and
// appends nothing. A stub keeps CRC32C 0 for the record (its bytes never
// reached this log): the CRC32C chain goes on over that, and checks the
// stub against accidents as any frame.
func (l *Log) AppendRecords(ctx context.Context, expectLast uint64, recs ...Record) (first uint64, err error) {
	batch := make([][]byte, len(recs))
	var stubs map[int]Record
	for i, r := range recs {
		if !r.Reclaimed {
			batch[i] = r.Data
			continue
		}
		if stubs == nil {
			stubs = map[int]Record{}
		}
		stubs[i] = Record{Reclaimed: true, Len: r.Len, Digest: r.Digest}
	}
	return l.commit(ctx, func(tx *Tx) ([][]byte, error) {
		if last := tx.Last(); last != expectLast {
			return nil, &ConflictError{Expected: expectLast, Actual: last}
		}
		return batch, nil
	}, stubs)
}

// ErrStubFormat is AppendRecords' error for a stub in a log that goes on
// in a format older than 4, which keeps no digest in a stub.
var ErrStubFormat = errors.New("segment: a stub needs a log of format 4 (one that keeps the BLAKE3 chain)")

// checkStubs checks the stubs of a batch of n records (l.mu held, the
// writer lock taken): the log goes on in format 4 (or the batch starts a
// new log, which is format 4, or Rechain's format-4 segment), and every
// stub's record is of a length the log takes.
func (l *Log) checkStubs(stubs map[int]Record, n int) error {
	c := &l.w
	if !(c.f == nil || l.rechain || (c.version >= 4 && c.p.linked)) {
		return fmt.Errorf("%w: the log in %s goes on in format %d", ErrStubFormat, l.dir, c.version)
	}
	for i, s := range stubs {
		switch {
		case i < 0 || i >= n:
			return fmt.Errorf("segment: a stub at index %d of a batch of %d records (log %s)", i, n, l.dir)
		case s.Len < 0 || int64(s.Len) > l.opts.MaxRecordSize:
			return fmt.Errorf("%w: a stub of a record of %d bytes: MaxRecordSize is %d (log %s)", ErrTooLarge, s.Len, l.opts.MaxRecordSize, l.dir)
		}
	}
	return nil
}

// AppendIf appends records as one atomic batch only if the log's last seq
// (including other processes' appends) is expectLast; otherwise it returns
// a *ConflictError (errors.Is(err, ErrConflict)).
func (l *Log) AppendIf(ctx context.Context, expectLast uint64, records ...[]byte) (first uint64, err error) {
	return l.Commit(ctx, func(tx *Tx) ([][]byte, error) {
		if last := tx.Last(); last != expectLast {
			return nil, &ConflictError{Expected: expectLast, Actual: last}
		}
		return records, nil
	})
}
