package helm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// The commit engine: every change to a voyage is a decision taken under
// the log's lock, on views that hold every event appended so far, whose
// events are appended as one atomic, durable batch.

// stower stores an artifact unless the voyage holds it already. It returns
// the artifact-stowed event to append, or nil when the voyage holds the
// bytes already. A small artifact's blob record is appended just before
// that event, in the same batch; a large one is written to the pack, and
// made durable, before the batch is.
type stower func(a *artifact.Encoded) (*projection.Event, error)

// decideFunc decides a change on the views, which hold every event
// appended so far: it returns the events to append (none: nothing to
// record), or why the change is refused.
type decideFunc func(*projection.State, stower) ([]*projection.Event, error)

// commit runs decide under the log's lock, after folding in every event
// appended so far, and appends the events it returns — with the blob
// records of the small artifacts they stow — as one atomic batch. It
// returns the sequence number of the last appended event. decide may look
// an artifact up by its full hash (Voyage.artifact) and stow one, but
// reads neither the logbook nor the whole artifact index (see
// commitReading).
func (v *Voyage) commit(ctx context.Context, op string, decide decideFunc) (uint64, error) {
	return v.commitReading(ctx, op, 0, decide)
}

// commitReading is commit for a decide that reads the sections of the
// views that reads names: those a voyage opened from its snapshot has not
// read yet are read first, and so are those its events need
// (projection.State.Needs). The other sections stay unread.
func (v *Voyage) commitReading(ctx context.Context, op string, reads projection.Sections, decide decideFunc) (uint64, error) {
	v.mu.Lock()
	broken := v.broken
	v.mu.Unlock()
	if broken != nil {
		return 0, v.fail(op, fmt.Errorf("this handle's views cannot be trusted (a write failed earlier, so they may be ahead of what is stored, or they could not be read): %w", broken),
			hint.Hint{Kind: hint.Reopen, Text: "open the voyage again, and read its logbook to see what was recorded"})
	}
	red, err := v.home.redactor()
	if err != nil {
		return 0, v.fail(op, err, hint.Hint{})
	}
	// Before the first change of this handle, the journal gets ready
	// (the home index learns, durably, that the voyage may change):
	// outside the log's lock, so its fdatasync holds no other writer up.
	// A failure is reported once the log took its lock, so that a home
	// that cannot be written says so about the log first.
	beginErr := v.rec.begin(ctx)
	began := time.Now()
	for attempt := 0; ; attempt++ {
		last, decideErr, err := v.commitOnce(ctx, reads, red, beginErr, decide)
		if err == nil {
			v.mu.Lock()
			v.wrote = true
			v.mu.Unlock()
			return last, nil
		}
		if !v.decideAgain(ctx, err, attempt, began) {
			return 0, v.commitFailed(op, err, decideErr, attempt, began)
		}
	}
}

// decideAgain reports whether a change whose unit a shared store refused,
// another writer having come first, decides again on that writer's
// events: for a while (Options.conflictBudget), pausing a little more at
// each attempt (conflictPause).
func (v *Voyage) decideAgain(ctx context.Context, err error, attempt int, began time.Time) bool {
	return errors.Is(err, store.ErrConflict) && errors.As(err, new(*appendError)) &&
		time.Since(began) < v.home.opts.conflictBudget && conflictPause(ctx, attempt)
}

// commitFailed is the error of a change that recorded nothing, or may
// have: err is what the commit failed with, decideErr the decision's own
// refusal or failure, if that was it.
func (v *Voyage) commitFailed(op string, err, decideErr error, attempt int, began time.Time) error {
	if errors.As(err, new(*appendError)) {
		// A shared store did not append the unit, or did not say; the
		// views have not taken it in, and the next change folds what
		// the store holds.
		switch {
		case errors.Is(err, store.ErrConflict):
			return v.fail(op, fmt.Errorf("%w (nothing was recorded: other writers changed the voyage %d times in %v while this change was decided)", err, attempt+1, time.Since(began).Round(time.Second)),
				hint.Hint{Kind: hint.Retry, Text: "run the command again"})
		case errors.Is(err, store.ErrTooLarge):
			return v.fail(op, fmt.Errorf("%w: %w (nothing was recorded)", ErrInvalid, err), hint.Hint{})
		}
		return v.fail(op, fmt.Errorf("%w; the store did not confirm the write, so the change may or may not be recorded", err),
			hint.Hint{Kind: hint.Reopen, Text: "read the voyage's logbook to see whether the change was recorded before retrying"})
	}
	if errors.As(err, new(*erasureError)) {
		// Recorded; what a shared store could not erase yet, Compact
		// erases (the error says so).
		return v.fail(op, err, hint.Hint{})
	}
	switch {
	case decideErr == nil && errors.Is(err, segment.ErrPoisoned):
		// The write or its fdatasync failed after the views took the
		// change in.
		v.mu.Lock()
		if v.broken == nil {
			v.broken = err
		}
		v.mu.Unlock()
		return v.fail(op, fmt.Errorf("%w; the disk reported a failure, so the change may or may not be recorded", err),
			hint.Hint{Kind: hint.Reopen, Text: "open the voyage again, and read its logbook to see whether the change was recorded before retrying"})
	case decideErr != nil || errors.Is(err, segment.ErrCorrupt) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return v.fail(op, err, hint.Hint{})
	}
	// The log failed before anything was written (its directory, lock or
	// watermark could not be made, or opened).
	return v.fail(op, fmt.Errorf("%w (nothing was recorded)", err), hint.Hint{})
}

// fail returns err as the *VoyageError of op on this voyage, with hint
// (zero: HintOf reads the one its sentinel implies). Damage is reported as
// a *DamageError, whatever found it. An error that is a *VoyageError
// already is returned as it is.
func (v *Voyage) fail(op string, err error, hint hint.Hint) error {
	var ve *VoyageError
	if errors.As(err, &ve) {
		return err
	}
	if d := damageOf(v.id, err); d != nil && d.Err == err {
		err = d
	}
	return &VoyageError{Op: op, Voyage: v.id, Err: err, Hint: hint}
}

// resolveWho fills who.Identity from the voyage and checks that an entry
// has all three of identity, role and method.
func resolveWho(st *projection.State, who logbook.Who, entry bool) (logbook.Who, error) {
	if who.Identity == "" {
		who.Identity = st.Voyage.CurrentIdentity()
	}
	if err := logbook.ValidateIdentity(who.Identity); err != nil {
		return who, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if !entry {
		return who, nil
	}
	var missing []string
	if who.Role == "" {
		missing = append(missing, "the role (Who.Role: coder, reviewer, ...)")
	}
	if who.Method == "" {
		missing = append(missing, "the method (Who.Method: a model name, human, ...)")
	}
	if len(missing) > 0 {
		return who, fmt.Errorf("%w: every logbook entry records who took it; no %s was given", ErrMissingWho, strings.Join(missing, " and no "))
	}
	return who, nil
}

// checkActive refuses a change to a voyage that is not active: one ended
// for good with an error matching ErrVoyageCompleted, one blocked or
// partial with one matching ErrVoyagePaused.
func checkActive(st *projection.State) error {
	v := &st.Voyage
	switch status := projection.NormalStatus(v.Status, v.Outcome); {
	case status == projection.StatusActive:
		return nil
	case status.Resumable():
		return fmt.Errorf("%w: it is %s (since %s): resume it first", ErrVoyagePaused, status, stampOf(v.CompletedAt))
	default:
		return fmt.Errorf("%w (%s at %s)", ErrVoyageCompleted, status, stampOf(v.CompletedAt))
	}
}

func stampOf(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// withWho sets who on every event.
func withWho(events []*projection.Event, who logbook.Who) []*projection.Event {
	for _, e := range events {
		e.Who = who
	}
	return events
}

// inflightEvent is an event applied to the views whose unit the log may
// not have written yet (Voyage.inflight).
type inflightEvent struct {
	seq uint64
	e   *projection.Event
}

// commitOnce decides once, on the log's tail, and appends the unit
// decided: one attempt of commitReading. It returns the sequence number
// of the last event appended, and decideErr when the decision failed.
func (v *Voyage) commitOnce(ctx context.Context, reads projection.Sections, red *redact.Redactor, beginErr error, decide decideFunc) (last uint64, decideErr, err error) {
	var u unit
	err = v.rec.commit(ctx, func(tx logTx) ([][]byte, error) {
		decideErr = beginErr // a shared store's commit may decide again (sharedJournal.commit)
		if beginErr != nil {
			return nil, beginErr
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if err := v.foldNew(tx.Scan); err != nil {
			return nil, err
		}
		if err := v.loadSections(reads, tx.Scan); err != nil {
			return nil, err
		}
		u, decideErr = v.decideUnit(ctx, tx, red, decide)
		return u.records, decideErr
	}, func() error {
		if err := v.applyUnit(&u); err != nil {
			decideErr = err
			return err
		}
		return nil
	})
	v.landed(&u)
	return u.last(), decideErr, err
}

// unit is what one decision appends: its records, numbered from the
// tail it was decided on, and its events with their sequence numbers.
type unit struct {
	records [][]byte
	events  []*projection.Event
	seqs    []uint64
}

// last returns the sequence number of the unit's last event (0: none).
func (u *unit) last() uint64 {
	if len(u.seqs) == 0 {
		return 0
	}
	return u.seqs[len(u.seqs)-1]
}

// decideUnit runs decide on the views, which hold every event up to the
// tail tx reads, and makes the unit of the events it returns: with the
// blob records of the artifacts they stow, and the guard rules recorded
// before them when those changed (withRules). The caller holds v.mu.
func (v *Voyage) decideUnit(ctx context.Context, tx logTx, red *redact.Redactor, decide decideFunc) (unit, error) {
	blobs := map[*projection.Event][]byte{} // stowed event -> its blob record (nil: in the journal)
	events, err := decide(&v.st, v.stower(ctx, tx.Scan, blobs))
	if err != nil {
		return unit{}, err
	}
	u, err := v.number(tx.Last(), red, v.withRules(events), blobs)
	if err != nil {
		return unit{}, err
	}
	// The views take the events in once the unit is bound to be appended
	// (applyUnit): the sections they need are read first, as the views
	// stand before any of them (a superset of what each needs when its
	// turn comes).
	var need projection.Sections
	for _, e := range u.events {
		need |= v.st.Needs(e)
	}
	if err := v.loadSections(need, tx.Scan); err != nil {
		return unit{}, err
	}
	return u, nil
}

// stower returns the stower of one decision, which notes in blobs each
// stow event it returns, with its blob record (nil: the journal holds the
// bytes). The caller holds v.mu.
func (v *Voyage) stower(ctx context.Context, scan scanFunc, blobs map[*projection.Event][]byte) stower {
	var heldErr error // the index could not be read: the decide fails
	held := func(hash string) bool {
		a, err := v.artifact(hash, scan) // a block of the snapshot's index, at most
		if err != nil {
			heldErr = err
			return false
		}
		if a != nil && a.Status == projection.Stowed {
			return true // stored once per voyage; a jettisoned one is stowed again
		}
		for e := range blobs {
			if e.Artifact.Hash == hash {
				return true
			}
		}
		return false
	}
	return func(a *artifact.Encoded) (*projection.Event, error) {
		if err := v.rec.settle(a); err != nil {
			return nil, err
		}
		if !a.Streamed() { // a streamed one's address is known once it is stored
			if held(a.Hash) || heldErr != nil {
				return nil, heldErr
			}
			if v.rec.inline(a) { // compresses it, if it was held when it was prepared
				ev := &projection.Event{Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: a.Hash, Size: a.Size, StoredSize: int64(len(a.Compressed))}}
				blobs[ev] = artifact.BlobRecord(a)
				return ev, nil
			}
		}
		r, stored, err := v.rec.stow(ctx, a, held)
		if err == nil {
			err = heldErr
		}
		if err != nil || !stored {
			return nil, err
		}
		ev := &projection.Event{Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: r.Hash, Size: r.Size, StoredSize: r.StoredSize, Offset: r.Offset}}
		blobs[ev] = nil
		return ev, nil
	}
}

// number numbers the unit's records as the log will, after record last:
// a blob record just before the event that names it; and encodes them,
// every text redacted, each checked before any is folded. Entries are
// numbered after the story's, for good. The caller holds v.mu.
func (v *Voyage) number(last uint64, red *redact.Redactor, events []*projection.Event, blobs map[*projection.Event][]byte) (unit, error) {
	now := v.home.now()
	seq, n := last, v.st.Counts().Entries
	u := unit{records: make([][]byte, 0, len(events)+len(blobs)), events: events, seqs: make([]uint64, len(events))}
	for i, e := range events {
		blob, stowed := blobs[e]
		switch {
		case blob != nil:
			seq++
			u.records = append(u.records, blob)
			e.Artifact.Blob = seq
		case stowed && e.Artifact.Offset == 0:
			e.Artifact.Offset = sharedOffset(seq + 1) // the journal gave no place: the event names the copy
		}
		e.At = now
		if projection.IsEntry(e.Type) {
			n++
			e.N = n
		}
		redactEvent(red, e) // nothing is stored that a rule finds secret
		rec, err := projection.Encode(e)
		if err == nil && len(rec) > segment.DefaultMaxRecordSize {
			err = fmt.Errorf("%w: a %s event of %d bytes exceeds the log's record limit of %d bytes", ErrInvalid, e.Type, len(rec), segment.DefaultMaxRecordSize)
		}
		if err != nil {
			return unit{}, err
		}
		seq++
		u.seqs[i] = seq
		u.records = append(u.records, rec)
	}
	return u, nil
}

// applyUnit folds the unit's events into the views, so the next decision
// sees them; should its write fail, v.broken keeps these views from
// being used again. An event the views hold already (folded from a
// shared store by a later change or a refresh) is passed by. Until the
// unit has landed, the events are in flight (v.inflight).
func (v *Voyage) applyUnit(u *unit) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, e := range u.events {
		if u.seqs[i] <= v.st.Voyage.Seq {
			continue
		}
		if err := v.st.Apply(u.seqs[i], e); err != nil {
			v.broken = err
			return err
		}
		v.inflight = append(v.inflight, inflightEvent{seq: u.seqs[i], e: e})
	}
	return nil
}

// landed ends the flight of the unit's events: appended, or not.
func (v *Voyage) landed(u *unit) {
	if len(u.seqs) == 0 {
		return
	}
	first, last := u.seqs[0], u.last()
	v.mu.Lock()
	v.inflight = slices.DeleteFunc(v.inflight, func(f inflightEvent) bool { return f.seq >= first && f.seq <= last })
	v.mu.Unlock()
}

// withRules returns events with the guard rules this home runs under
// recorded before them when they are not those the voyage recorded last:
// at its start, a policy-adopted event after the start; later, a
// policy-changed event, an entry of the story, so that a change made
// under other rules says so. A voyage that never ran under rules records
// none until it does.
func (v *Voyage) withRules(events []*projection.Event) []*projection.Event {
	rules := v.home.rules
	if len(events) == 0 || rules.Digest == v.st.Voyage.Policy.Digest {
		return events
	}
	at, t := 0, projection.PolicyChanged
	switch events[0].Type {
	case projection.VoyageStarted:
		at, t = 1, projection.PolicyAdopted
	case projection.ChainRechained:
		at = 1 // the first record of the first format-4 segment
	}
	var who logbook.Who
	for _, e := range events {
		if e.Who.Identity != "" {
			who = e.Who
			break
		}
	}
	e := &projection.Event{Type: t, Who: who, Policy: &logbook.PolicyRecord{Digest: rules.Digest, Sources: slices.Clone(rules.Sources)}}
	return slices.Insert(events, at, e)
}

// conflictPause waits a little before a change decides again, a random
// part of a bound that doubles after each conflict up to 64 ms, so that
// writers that keep meeting on one voyage fall out of step; false if ctx
// ended.
//
// The first conflict of a change costs no pause: it decided on the tail
// last known, and learnt the store's.
func conflictPause(ctx context.Context, attempt int) bool {
	if attempt == 0 {
		return ctx.Err() == nil
	}
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-1, 6)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
