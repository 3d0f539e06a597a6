package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/store"
)

// A shared voyage's snapshot is its folded views as of some event, kept
// by its store beside its records (store.Snapshots) so that opening a
// long voyage reads it and the events after it, not every event: the
// store's bytes are
//
//	"HELMSSN1" | projection.State.EncodeSnapshot
//
// and the store keeps with them the chain's head after that event, which
// it checks against the log's before it gives them (a request or two).
// It is a cache, as on disk (snapshot.go): a writer puts it at Close,
// once Options.snapshotEvery events were folded since the last one;
// readers never write it. Opening passes by one the store cannot trust
// (its head is not the log's there: replaced by someone with the store's
// credentials; another version) and folds from the first event; verify
// says why it was ignored. One taken after the log's last record is
// evidence, as a summary beyond the log is: opening and verify report the
// voyage damaged. The identities the views name are checked against the
// records that set them (identitiesOfLog), as on disk; the rest of the
// views is verify's to compare with the events.
const sharedSnapshotMagic = "HELMSSN1"

// snapshotTimeout bounds how long a writer's Close may take to put the
// voyage's snapshot in the store: a cache, which a later writer puts.
const snapshotTimeout = 30 * time.Second

// decodeSharedSnapshot decodes the head of the views a shared snapshot
// holds: the logbook and the artifact index are decoded from data, each
// block checked, when a view or a change first needs them
// (Voyage.loadSections).
func decodeSharedSnapshot(data []byte) (*projection.State, error) {
	if len(data) < len(sharedSnapshotMagic) || string(data[:len(sharedSnapshotMagic)]) != sharedSnapshotMagic {
		return nil, errors.New("not a helm snapshot of this version")
	}
	data = data[len(sharedSnapshotMagic):]
	return projection.OpenSnapshot(bytes.NewReader(data), int64(len(data)))
}

// fromSnapshot loads into the views, which are empty, the snapshot the
// store keeps, if it has one it can trust whose views are the voyage's
// and name the identities its records set. An error is damage the store
// found (a snapshot after the log's last record), or ctx's end: any other
// reason to pass the snapshot by leaves the views empty, for the caller
// to fold from the first event.
func (j *sharedJournal) fromSnapshot(ctx context.Context) error {
	if j.snaps == nil {
		return nil
	}
	v := j.v
	snap, err := j.snaps.Snapshot(ctx)
	if err != nil {
		if errors.Is(err, store.ErrDamaged) || ctx.Err() != nil {
			return err
		}
		return nil // none, not this log's, or no answer: the events say
	}
	st, err := decodeSharedSnapshot(snap.Data)
	if err != nil || st.Voyage.ID != v.id || st.Voyage.Seq != snap.Head.Seq {
		return nil
	}
	if err := identitiesOfLog(ctx, j, v.id, j.where, &st.Voyage); err != nil {
		return nil
	}
	v.st, v.snapSeq = *st, snap.Head.Seq
	return nil
}

// writeSnapshot puts the voyage's snapshot in the store, at Close, when
// this Voyage changed it and Options.snapshotEvery events were folded
// since the last one. Failing to put a cache is not an error for the
// caller.
func (j *sharedJournal) writeSnapshot(ctx context.Context) {
	if j.snaps == nil {
		return
	}
	v := j.v
	v.mu.Lock()
	data, seq, due := v.dueSnapshotLocked()
	v.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	if j.snaps.PutSnapshot(ctx, seq, append([]byte(sharedSnapshotMagic), data...)) == nil {
		v.mu.Lock()
		v.snapSeq = seq
		v.mu.Unlock()
	}
}

// verifySnapshot checks the snapshot the store keeps, if any, against the
// views v folded from every event, as on disk (diskJournal.verifySnapshot):
// why opening would pass it by, or, as damage, one that opening would
// trust whose views, with the events after it, are not v's, and one taken
// after the log's last record.
func (j *sharedJournal) verifySnapshot(ctx context.Context, rep *VerifyReport) {
	if j.snaps == nil {
		return
	}
	v := j.v
	snap, err := j.snaps.Snapshot(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return
	case errors.Is(err, store.ErrDamaged):
		rep.Problems = append(rep.Problems, problem(v.id, j.where, err))
		return
	case err != nil:
		rep.Snapshot = &SnapshotReport{Ignored: err.Error()}
		return
	}
	rep.Snapshot = &SnapshotReport{Seq: snap.Head.Seq}
	st, err := decodeSharedSnapshot(snap.Data)
	if err == nil {
		err = st.Load(projection.AllSections)
	}
	if err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	if st.Voyage.ID != v.id || st.Voyage.Seq != snap.Head.Seq {
		rep.Snapshot.Ignored = fmt.Sprintf("it holds the views of voyage %s at event %d", st.Voyage.ID, st.Voyage.Seq)
		return
	}
	if err := identitiesOfLog(ctx, j, v.id, j.where, &st.Voyage); err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	apply := eventsOf(v.id, j.where, func(seq uint64, e *projection.Event) error { return st.Apply(seq, e) })
	if err := j.Scan(ctx, snap.Head.Seq+1, apply); err != nil {
		rep.Snapshot.Ignored = "the log does not go on from it: " + err.Error()
		return
	}
	v.mu.Lock()
	err = v.loadSections(projection.AllSections, v.logScan(ctx))
	same := err == nil && reflect.DeepEqual(st, &v.st)
	v.mu.Unlock()
	if !same {
		rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: j.where + ", its snapshot",
			Reason: fmt.Sprintf("the snapshot at event %d, with the events after it, does not give the views its events give; opening trusts it: a writer replaces it once %d events were recorded after it", snap.Head.Seq, v.home.opts.snapshotEvery)})
	}
}
