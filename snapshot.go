package helm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A voyage's snapshot is its folded views as of some event, beside the log
// (snapshot in the voyage's directory), so that opening a long voyage
// loads it and folds only the events after it. It is a cache, never the
// truth: it records the log's segment.Mark at its event, and opening
// trusts it only when the log still passes through that mark (the unit,
// where it was, with the same chain values: segment.Log.ScanAfter) —
// otherwise, or when it does not check out, the voyage is folded from its
// first event, as if there were none. Writers write it (Close, once
// Options.snapshotEvery events have been folded since the last one), without
// fsync: a snapshot lost or torn by a crash is ignored.
//
// Opening reads the mark and the head of the views (projection.OpenSnapshot)
// and keeps the file open; the logbook and the artifact index are read
// from it when a view or a change first needs them (Voyage.loadSections), each
// block checked then. A block that does not check out then is handled as
// a snapshot that did not check out at open: the views are folded from
// the first event.
//
//	"HELMSNP2" | u32 CRC-32C of the mark's JSON | u32 its length |
//	the mark's JSON | projection.State.EncodeSnapshot
//
// A file of another magic (HELMSNP1: one checksum over the whole, read
// whole) is ignored.
const (
	snapshotName  = "snapshot"
	snapshotMagic = "HELMSNP2"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// snapshotFile is an open snapshot: its mark, and its views with the
// sections not read yet left in the file.
type snapshotFile struct {
	f    *os.File
	mark segment.Mark
	st   *projection.State
}

// openSnapshot opens the snapshot in the voyage directory dir. The caller
// closes s.f.
func openSnapshot(dir string) (*snapshotFile, error) {
	f, err := os.Open(filepath.Join(dir, snapshotName))
	if err != nil {
		return nil, err
	}
	s, err := readSnapshot(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func readSnapshot(f *os.File) (*snapshotFile, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	var pre [len(snapshotMagic) + 8]byte
	if _, err := f.ReadAt(pre[:], 0); err != nil || string(pre[:len(snapshotMagic)]) != snapshotMagic {
		return nil, errors.New("not a helm snapshot of this version")
	}
	n := int64(binary.LittleEndian.Uint32(pre[len(snapshotMagic)+4:]))
	at := int64(len(pre))
	if n > size-at {
		return nil, errors.New("its mark runs past its end")
	}
	mj := make([]byte, n)
	if _, err := f.ReadAt(mj, at); err != nil {
		return nil, err
	}
	if crc32.Checksum(mj, crcTable) != binary.LittleEndian.Uint32(pre[len(snapshotMagic):]) {
		return nil, errors.New("its mark's checksum does not match")
	}
	s := &snapshotFile{f: f}
	if err := json.Unmarshal(mj, &s.mark); err != nil {
		return nil, fmt.Errorf("its mark: %w", err)
	}
	at += n
	if s.st, err = projection.OpenSnapshot(io.NewSectionReader(f, at, size-at), size-at); err != nil {
		return nil, err
	}
	if s.st.Voyage.Seq != s.mark.Last {
		return nil, fmt.Errorf("its views are at event %d, its mark at %d", s.st.Voyage.Seq, s.mark.Last)
	}
	return s, nil
}

// openFromSnapshot opens the voyage's log and folds into v's views snap,
// the voyage's snapshot read with its claims (readClaimsSnapshot), and the
// events after it, or returns false (nothing open) when it is not one to
// trust. It takes snap's file.
func openFromSnapshot(ctx context.Context, v *Voyage, opts *segment.Options, snap *snapshotFile) (*segment.Log, bool) {
	if snap.st.Voyage.ID != v.id {
		snap.f.Close()
		return nil, false
	}
	v.st, v.snapFile = *snap.st, snap.f
	// Most often the mark is in the last segment: the open reads from it.
	events := filepath.Join(v.dir, "events")
	var st stubs // a reclaimed record after the mark must be an artifact's
	apply := st.events(v.id, events, v.applyEvent)
	log, err := segment.OpenAfter(ctx, events, opts, snap.mark, apply)
	if errors.Is(err, segment.ErrMarkElsewhere) { // found before any record was read
		log, err = segment.Open(ctx, events, opts)
		if err == nil {
			if err = log.ScanAfter(ctx, snap.mark, apply); err != nil {
				log.Close()
			}
		}
	}
	if err == nil {
		if err = st.err(v.id, events); err != nil {
			log.Close() // the full open reports it
		}
	}
	if err == nil {
		if err = identitiesOfLog(ctx, log, v.id, events, &v.st.Voyage); err != nil {
			log.Close()
		}
	}
	if err != nil {
		// Not this log's snapshot, a section that does not check out, or
		// damage that the full open reports; the views may hold some of
		// the events after the mark: start anew.
		v.st = projection.State{}
		v.closeSnapshot()
		return nil, false
	}
	v.snapSeq = snap.mark.Last
	v.closeSnapshot() // if the tail needed every section
	return log, true
}

// identitiesOfLog checks the identities the views name against the
// records that set them: the one the voyage started with (the start, its
// first record) and the current one (the last handoff the views name, at
// its seq). A snapshot is a cache the recorded agent can rewrite,
// checksums and all: one naming another current identity would have the
// CLI record the agent's later entries as that identity and act with its
// credentials. Two records are read, not the log. (A snapshot that
// leaves a handoff out is not found so: the views then name an identity
// the voyage had.)
func identitiesOfLog(ctx context.Context, log recordScanner, id, events string, vv *projection.VoyageView) error {
	check := func(seq uint64, ok func(e *projection.Event) bool) error {
		found := false
		err := log.Scan(ctx, seq, eventsOf(id, events, func(at uint64, e *projection.Event) error {
			found = at == seq && ok(e)
			return errStopScan
		}))
		if err != nil && !errors.Is(err, errStopScan) {
			return err
		}
		if !found {
			return fmt.Errorf("the snapshot's identities are not the log's (record %d)", seq)
		}
		return nil
	}
	if err := check(1, func(e *projection.Event) bool {
		return e.Type == projection.VoyageStarted && e.Who.Identity == vv.Identity
	}); err != nil {
		return err
	}
	cur := vv.Identity
	if n := len(vv.Handoffs); n > 0 {
		last := vv.Handoffs[n-1]
		if last.Handoff == nil {
			return errors.New("the snapshot names a handoff without its record")
		}
		cur = last.Handoff.To
		if err := check(last.Seq, func(e *projection.Event) bool {
			return e.Type == projection.IdentityHandedOff && e.Handoff != nil && e.Handoff.To == cur
		}); err != nil {
			return err
		}
	}
	if vv.CurrentIdentity() != cur {
		return errors.New("the snapshot's current identity is not its last handoff's")
	}
	return nil
}

// recordScanner reads records from a sequence number on: a segment log,
// or a shared voyage's journal.
type recordScanner interface {
	Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error
}

// errStopScan ends a scan that found what it read for.
var errStopScan = errors.New("stop scan")

// closeSnapshot closes the snapshot file once the views hold all of it,
// or were folded without it. The caller holds v.mu or owns v.
func (v *Voyage) closeSnapshot() {
	if v.snapFile != nil && v.st.Pending() == 0 {
		v.snapFile.Close()
		v.snapFile = nil
	}
}

// scanFunc scans records from a sequence number on: the log's Scan, or a
// commit's.
type scanFunc func(from uint64, fn func(segment.Record) error) error

func (v *Voyage) logScan(ctx context.Context) scanFunc {
	return func(from uint64, fn func(segment.Record) error) error { return v.rec.Scan(ctx, from, fn) }
}

// loadSections reads the sections of the snapshot that which names, if the views
// still leave them in it. Should one not check out, the views are folded
// anew from the first event with scan, as if there had been no snapshot
// (see fold). The caller holds v.mu.
func (v *Voyage) loadSections(which projection.Sections, scan scanFunc) error {
	if v.st.Pending()&which == 0 {
		return nil
	}
	if err := v.st.Load(which); err != nil {
		return v.fold(scan)
	}
	v.closeSnapshot()
	return nil
}

// loadView is loadSections for a view, outside the log's lock. A log that
// cannot be folded again breaks the handle for changes (as a failed write
// does): the error is returned, for the view to say so rather than show
// what the views hold. A fold that ctx stopped breaks nothing: the views
// are as they were, and the next read folds again. The caller holds v.mu.
func (v *Voyage) loadView(ctx context.Context, which projection.Sections) error {
	err := v.loadSections(which, v.logScan(ctx))
	if err != nil && v.broken == nil && !interrupted(ctx, err) {
		v.broken = fmt.Errorf("a section of the snapshot did not check out, and folding the log instead failed: %w", err)
	}
	return err
}

// interrupted reports whether err is ctx's end rather than the log's:
// a fold it stopped left the views as they were (fold), and the next
// read folds again.
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// fold folds the views anew from the first event, without the snapshot:
// a section of it did not check out when it was read. A fold that fails
// leaves the views as they were, the sections still to read among them
// (which, the snapshot closed, fail to load and fold again): never the
// events it folded before it failed, which a later view would show as
// the story, cut short. The caller holds v.mu.
func (v *Voyage) fold(scan scanFunc) error {
	was := v.st
	v.st = projection.State{}
	v.snapSeq = 0 // a writer's Close writes a good one
	if v.snapFile != nil {
		v.snapFile.Close()
		v.snapFile = nil
	}
	if err := scan(1, v.applyRecord); err != nil {
		v.st = was
		return err
	}
	// A scan outside the log's lock does not see the units of this
	// handle's commits not yet written, whose events the views held:
	// they are applied again (a scan inside a commit sees them).
	for _, f := range v.inflight {
		if f.seq > v.st.Voyage.Seq {
			if err := v.st.Apply(f.seq, f.e); err != nil {
				v.st = was
				return err
			}
		}
	}
	return nil
}

// foldNew folds the events after the views' with scan; should a section
// of the snapshot they need not check out, it folds every event (fold).
// The caller holds v.mu.
func (v *Voyage) foldNew(scan scanFunc) error {
	err := scan(v.st.Voyage.Seq+1, v.applyRecord)
	if errors.Is(err, projection.ErrSnapshotSection) {
		return v.fold(scan)
	}
	return err
}

// dueSnapshotLocked encodes the views for a snapshot when one is due at
// Close: this Voyage changed the voyage, is not broken, and folded
// Options.snapshotEvery events since the last snapshot. Sections still in
// the snapshot the views were opened from are copied from it, checked.
// v.mu is held.
func (v *Voyage) dueSnapshotLocked() (data []byte, seq uint64, due bool) {
	if !v.wrote || v.broken != nil || v.st.Voyage.Seq < v.snapSeq+v.home.opts.snapshotEvery {
		return nil, 0, false
	}
	data, err := v.st.EncodeSnapshot()
	if err != nil {
		return nil, 0, false
	}
	return data, v.st.Voyage.Seq, true
}

// writeSnapshot writes the voyage's snapshot, at Close, when this Voyage
// changed it and Options.snapshotEvery events were folded since the last
// one; it closes the snapshot the views were opened from. Failing to
// write a cache is not an error for the caller.
func (j *diskJournal) writeSnapshot() {
	v := j.v
	v.mu.Lock()
	snap, seq, due := v.dueSnapshotLocked()
	// The voyage is closing: the old snapshot is read no more, and closed
	// before the new one replaces it (a file open on Windows cannot be).
	if v.snapFile != nil {
		v.snapFile.Close()
		v.snapFile = nil
	}
	v.mu.Unlock()
	if !due {
		return
	}
	mark := j.log.Mark()
	if mark.Last != seq {
		return // the log is ahead of these views: a later writer writes it
	}
	mj, err := json.Marshal(mark)
	if err != nil {
		return
	}
	data := make([]byte, len(snapshotMagic)+8, len(snapshotMagic)+8+len(mj)+len(snap))
	copy(data, snapshotMagic)
	binary.LittleEndian.PutUint32(data[len(snapshotMagic):], crc32.Checksum(mj, crcTable))
	binary.LittleEndian.PutUint32(data[len(snapshotMagic)+4:], uint32(len(mj)))
	data = append(append(data, mj...), snap...)
	if !writeCache(v.dir, snapshotName, data) {
		return
	}
	v.mu.Lock()
	v.snapSeq = seq
	v.mu.Unlock()
}

// verifySnapshot checks the voyage's snapshot, if it has one, against the
// views v folded from every event: it reports why opening would ignore
// it, and as damage a snapshot opening would trust whose views, with the
// events after it folded in, are not v's.
func (j *diskJournal) verifySnapshot(ctx context.Context, rep *VerifyReport) {
	v := j.v
	path := filepath.Join(v.dir, snapshotName)
	snap, err := openSnapshot(v.dir)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	rep.Snapshot = &SnapshotReport{}
	if err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	defer snap.f.Close()
	st, mark := snap.st, snap.mark
	// Every section, as opening would read them when needed.
	if err := st.Load(projection.AllSections); err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	rep.Snapshot.Seq = st.Voyage.Seq
	if st.Voyage.ID != v.id {
		rep.Snapshot.Ignored = "it is voyage " + st.Voyage.ID + "'s"
		return
	}
	apply := eventsOf(v.id, j.Dir(), func(seq uint64, e *projection.Event) error { return st.Apply(seq, e) })
	if err := j.log.ScanAfter(ctx, mark, apply); err != nil {
		rep.Snapshot.Ignored = "the log does not go on from it: " + err.Error()
		return
	}
	v.mu.Lock()
	err = v.loadSections(projection.AllSections, v.logScan(ctx))
	same := err == nil && reflect.DeepEqual(st, &v.st)
	v.mu.Unlock()
	if !same {
		rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: path,
			Reason: fmt.Sprintf("the snapshot at event %d, with the events after it, does not give the views its events give; opening trusts it: remove it", rep.Snapshot.Seq)})
	}
}
