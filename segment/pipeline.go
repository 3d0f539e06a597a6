package segment

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// The commit pipeline. A group's unit is written under mu (the write
// stage), then made durable by the sync stage (smu): one fdatasync at a
// time, each covering every unit written before it started. The leader of
// a group hands leadership on as soon as its unit is written, so while one
// fdatasync runs the next groups run their decides and write their units;
// the first of them to find the disk free again syncs them all, and the
// disk is never idle while a commit waits. Acknowledgement order is
// unchanged: a unit is acknowledged only once an fdatasync that started
// after it was written has returned, and the watermark is written after
// that fdatasync, never before.
//
// The writer lock (LOCK and the directory, across processes) is taken by
// the first group of a burst and released once no group is writing and
// every unit written is durable. While it is held no other process can
// append, so the groups in between need neither the lock's system calls
// nor a catch-up read, and the watermark slot to write next is known
// without reading it back. Another process waits for the lock as before.
// When the lock is taken again and the catch-up finds the log where this
// Log's last watermark left it, nobody appended meanwhile, so nobody wrote
// the watermark either: the slot is still known, and the commit writes
// the watermark without reading it first.
//
// A Log whose pipeline never drains (commits back to back from many
// goroutines) would hold the lock for as long as they go on, and another
// process would never get its turn; one that drains and takes the lock
// again at once leaves it free for moments a waiter that polls seldom
// finds. So a Log gives the lock up once it has held it for holdTurn,
// counting the moments it let it go (shorter than turnGap) as held: the
// next group waits until every unit written is durable, releases the
// lock, and leaves it free for turnGap before it takes it again. A
// process waiting for the lock polls at most every maxLockPoll (a third
// of turnGap), so it finds the lock free in that gap.

// unitEnd is where a written unit leaves the log.
type unitEnd struct {
	wm      watermark // what the watermark says once the unit is durable
	file    string    // the segment holding the unit, for errors
	off     int64     // the unit's end in that segment, for errors
	records int
}

// holdTurn is how long a Log holds the writer lock across back-to-back
// groups before it lets other processes have a turn; turnGap is how long
// it leaves the lock free then: three of a waiter's polls, so that one
// whose sleep overran on a loaded machine still tries in it. A busy Log
// gives up turnGap in every holdTurn+turnGap (1.2%); a process waiting
// behind it waits about holdTurn, or a few when it missed a gap.
const (
	holdTurn = 250 * time.Millisecond
	turnGap  = 3 * maxLockPoll
)

// pipeline is the state shared by the write and sync stages, guarded by
// Log.pmu.
type pipeline struct {
	held bool // this Log holds the writer lock
	// run is when this Log took the lock, having held it since but for
	// moments shorter than turnGap (zero: since it gave a turn); freed
	// is when it last released it.
	run, freed time.Time
	writing    bool    // a group is in the write stage
	written    unitEnd // the end of the last unit written
	durable    uint64  // the last seq made durable
	file       File    // the active segment, for the sync stage (set under smu too)
	fault      error   // a failure after a unit was written: later commits fail
	slot       int     // the watermark slot to write next; -1: read it first
	// wmEnd is the last seq of the watermark this Log wrote last (0:
	// none): while the log still ends there, no other process wrote a
	// watermark since (one is written only after a unit is appended), and
	// slot is still the one to write next.
	wmEnd uint64
	stats Stats

	// What the wait before an fdatasync goes by (see syncTo).
	commits   uint64        // commits in the units written so far
	covered   uint64        // ... in the units made durable so far
	lastBatch uint64        // commits the last fdatasync covered
	syncTime  time.Duration // how long fdatasyncs take (a moving average)
	wroteCh   chan struct{} // closed when a unit is written

	syncing   bool          // a committer is running syncOnce
	durableCh chan struct{} // closed when a syncOnce ends
}

// Stats counts what a Log's commits wrote.
type Stats struct {
	Units   uint64 // commit units written (one per group of Commits)
	Records uint64 // records in them
	Syncs   uint64 // fdatasyncs that made units durable (sync passes, with NoSync)
}

// Stats returns what this Log's commits wrote since it was opened: the
// records per fdatasync (Records/Syncs) say how well concurrent Commits
// were grouped.
func (l *Log) Stats() Stats {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	return l.pl.stats
}

// acquire makes this Log the writer for one group (mu held): it takes the
// writer lock, catches up and checks the watermark (takeWriter), unless
// the lock is still held from a unit not yet durable. release ends the
// group's write stage.
func (l *Log) acquire(ctx context.Context, giveUp func() bool) error {
	l.pmu.Lock()
	if p := &l.pl; !p.run.IsZero() && (p.held || time.Since(p.freed) < turnGap) && time.Since(p.run) >= holdTurn {
		l.pmu.Unlock()
		if err := l.giveTurn(); err != nil {
			return err
		}
		l.pmu.Lock()
	}
	held := l.pl.held
	l.pl.writing = true
	l.pmu.Unlock()
	if held {
		return nil
	}
	err := l.takeWriter(ctx, giveUp)
	l.pmu.Lock()
	defer l.pmu.Unlock()
	if err != nil {
		l.pl.writing = false
		return err
	}
	// Others may have appended since this Log last wrote: what is on disk
	// now is durable (its writers synced it before releasing the lock).
	c := &l.w
	if end := c.p.next - 1; l.pl.wmEnd == 0 || end != l.pl.wmEnd || l.pl.file != c.f {
		l.pl.slot = -1 // another process may have appended, and written the watermark
	}
	now := time.Now()
	if l.pl.run.IsZero() || now.Sub(l.pl.freed) >= turnGap {
		l.pl.run = now
	}
	l.pl.held, l.pl.file = true, c.f
	l.pl.written = unitEnd{wm: l.watermarkAt(), file: c.name, off: c.p.off}
	l.pl.durable = c.p.next - 1
	return nil
}

// giveTurn lets other processes take the writer lock (mu held, no group
// writing): it waits until every unit written is durable, releases the
// lock, and leaves it free for turnGap.
func (l *Log) giveTurn() error {
	if err := l.syncAll(); err != nil {
		return err
	}
	l.pmu.Lock()
	l.releaseIfIdle()
	l.pl.run = time.Time{}
	fault := l.pl.fault
	l.pmu.Unlock()
	if fault != nil {
		return fmt.Errorf("%w (after: %w)", ErrPoisoned, fault)
	}
	time.Sleep(turnGap)
	return nil
}

// release ends a group's write stage (mu held), releasing the writer lock
// if nothing written waits for its fdatasync.
func (l *Log) release() {
	l.pmu.Lock()
	l.pl.writing = false
	l.releaseIfIdle()
	l.pmu.Unlock()
}

// releaseIfIdle releases the writer lock once no group is writing and
// every unit written is durable, or the pipeline failed (pmu held).
func (l *Log) releaseIfIdle() {
	p := &l.pl
	if !p.held || p.writing || (p.durable < p.written.wm.last && p.fault == nil) {
		return
	}
	p.held, p.freed = false, time.Now()
	if err := l.lock.unlock(); err != nil && p.fault == nil {
		p.fault = err
	}
}

// wrote records a unit of commits written by the write stage (mu held).
func (l *Log) wrote(end unitEnd, commits int) {
	l.pmu.Lock()
	p := &l.pl
	p.written = end
	p.stats.Units++
	p.stats.Records += uint64(end.records)
	p.commits += uint64(commits)
	if p.wroteCh != nil {
		close(p.wroteCh)
		p.wroteCh = nil
	}
	l.pmu.Unlock()
}

// poisoned returns the error every Commit fails with after a failed write,
// fdatasync or unlock (mu held), or nil.
func (l *Log) poisoned() error {
	err := l.poison
	if err == nil {
		l.pmu.Lock()
		err = l.pl.fault
		l.pmu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("%w (after: %w)", ErrPoisoned, err)
	}
	return nil
}

// waitDurable returns once the units up to seq end are durable. One
// committer at a time is the syncer: it runs one fdatasync, covering every
// unit written when it starts, and wakes every waiter when it is done;
// whoever finds its unit still not durable then becomes the next syncer.
func (l *Log) waitDurable(end uint64) error {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	p := &l.pl
	for {
		if p.durable >= end {
			return nil
		}
		if p.fault != nil {
			return fmt.Errorf("%w (after: %w)", ErrPoisoned, p.fault)
		}
		if !p.syncing {
			if err := l.syncOnce(); err != nil {
				return err
			}
			continue
		}
		if p.durableCh == nil {
			p.durableCh = make(chan struct{})
		}
		ch := p.durableCh
		l.pmu.Unlock()
		<-ch
		l.pmu.Lock()
	}
}

// syncOnce runs one fdatasync of the active segment, covering every unit
// written so far (rotation seals a segment with its own fdatasync before
// it starts the next), then writes the watermark for the new end, and
// wakes the waiters (pmu held; released meanwhile).
func (l *Log) syncOnce() error {
	p := &l.pl
	p.syncing = true
	l.gather()
	w, slot, commits := p.written, p.slot, p.commits
	l.pmu.Unlock()

	start := time.Now()
	var syncErr, wmErr error
	if !l.opts.NoSync {
		l.smu.Lock() // the file is not closed meanwhile
		if err := l.pl.file.Datasync(); err != nil {
			syncErr = fmt.Errorf("segment: fdatasync %s after writing up to offset %d: %w", filepath.Join(l.dir, w.file), w.off, err)
		}
		l.smu.Unlock()
	}
	took := time.Since(start)
	if syncErr == nil {
		slot, wmErr = l.writeWatermark(w.wm, slot)
	}

	l.pmu.Lock()
	p.syncing = false
	if p.durableCh != nil {
		close(p.durableCh)
		p.durableCh = nil
	}
	defer l.releaseIfIdle()
	if syncErr != nil {
		p.fault = syncErr
		return fmt.Errorf("%w; %w", syncErr, ErrPoisoned)
	}
	p.durable, p.slot = w.wm.last, slot
	if wmErr == nil {
		p.wmEnd = w.wm.last
	} else {
		p.wmEnd = 0
	}
	p.stats.Syncs++
	p.lastBatch, p.covered = commits-p.covered, commits
	if p.syncTime == 0 {
		p.syncTime = took
	} else {
		p.syncTime += (took - p.syncTime) / 8
	}
	if wmErr != nil {
		// The units are durable and acknowledged; the writer is not
		// trusted with the next one.
		p.fault = wmErr
	}
	return nil
}

// gather waits, before an fdatasync, for as many commits as the last one
// covered to be written (pmu held; released while waiting): concurrent
// committers come back in a burst after each fdatasync, and one fdatasync
// for all of them costs the disk what one for the first would. The wait
// is signalled by each written unit and ends after at most as long as an
// fdatasync takes (a moving average): a wait longer than that would cost
// more than the second fdatasync it saves. A lone committer (the last
// fdatasync covered one commit) never waits. Measured on this design's
// bench (16 writers): waiting up to half an fdatasync gave 11-14 records
// per fdatasync, up to a whole one 13-18, at the same throughput.
func (l *Log) gather() {
	p := &l.pl
	if p.lastBatch <= 1 || l.opts.NoSync {
		return
	}
	var deadline *time.Timer
	for p.commits-p.covered < p.lastBatch {
		if deadline == nil {
			deadline = time.NewTimer(p.syncTime)
			defer deadline.Stop()
		}
		if p.wroteCh == nil {
			p.wroteCh = make(chan struct{})
		}
		ch := p.wroteCh
		l.pmu.Unlock()
		select {
		case <-ch:
			l.pmu.Lock()
		case <-deadline.C:
			l.pmu.Lock()
			return
		}
	}
}

// syncAll makes every unit written durable (mu held, so nothing more is
// written meanwhile), before the active segment is rewritten or closed.
func (l *Log) syncAll() error {
	l.pmu.Lock()
	end := l.pl.written.wm.last
	l.pmu.Unlock()
	return l.waitDurable(end)
}

// nothingFrom reports whether the log surely holds no record from seq
// from on: this Log holds the writer lock, so no other process appended,
// and from is past what it wrote. A reader that is up to date (the
// facade, before each change) then skips the directory listing and reads
// a scan costs.
func (l *Log) nothingFrom(from uint64) bool {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	return l.pl.held && from > l.pl.written.wm.last
}
