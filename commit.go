package helm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/helmlog/helm/artifact"
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

// commit runs decide under the log's lock, after folding in every event
// appended so far, and appends the events it returns — with the blob
// records of the small artifacts they stow — as one atomic batch. It
// returns the sequence number of the last appended event. decide may look
// an artifact up by its full hash (Voyage.artifact) and stow one, but
// reads neither the logbook nor the whole artifact index (see
// commitReading).
func (v *Voyage) commit(ctx context.Context, op string, decide func(*projection.State, stower) ([]*projection.Event, error)) (uint64, error) {
	return v.commitReading(ctx, op, 0, decide)
}

// commitReading is commit for a decide that reads the sections of the
// views that reads names: those a voyage opened from its snapshot has not
// read yet are read first, and so are those its events need
// (projection.State.Needs). The other sections stay unread.
func (v *Voyage) commitReading(ctx context.Context, op string, reads projection.Sections, decide func(*projection.State, stower) ([]*projection.Event, error)) (uint64, error) {
	v.mu.Lock()
	broken := v.broken
	v.mu.Unlock()
	if broken != nil {
		return 0, v.fail(op, fmt.Errorf("this handle's views cannot be trusted (a write failed earlier, so they may be ahead of what is stored, or they could not be read): %w", broken),
			Hint{HintReopen, "open the voyage again, and read its logbook to see what was recorded"})
	}
	red, err := v.home.redactor()
	if err != nil {
		return 0, v.fail(op, err, Hint{})
	}
	// Before the first change of this handle, the home index learns,
	// durably, that the voyage may change: outside the log's lock, so its
	// fdatasync holds no other writer up. A failure is reported once the
	// log took its lock, so that a home that cannot be written says so
	// about the log first.
	idxErr := v.openIndex()
	var decideErr error
	var last uint64 // the sequence number of this commit's last event
	began := time.Now()
	for attempt := 0; ; attempt++ {
		last, decideErr, err = v.commitOnce(ctx, reads, red, idxErr, decide)
		var ae *appendError
		if errors.As(err, &ae) {
			// A shared store did not append the unit, or did not say; the
			// views have not taken it in, and the next change folds what
			// the store holds.
			if errors.Is(err, store.ErrConflict) && time.Since(began) < v.home.opts.conflictBudget && conflictPause(ctx, attempt) {
				continue // another writer came first: decide again on its events
			}
			switch {
			case errors.Is(err, store.ErrConflict):
				return 0, v.fail(op, fmt.Errorf("%w (nothing was recorded: other writers changed the voyage %d times in %v while this change was decided)", err, attempt+1, time.Since(began).Round(time.Second)),
					Hint{HintRetry, "run the command again"})
			case errors.Is(err, store.ErrTooLarge):
				return 0, v.fail(op, fmt.Errorf("%w: %w (nothing was recorded)", ErrInvalid, err), Hint{})
			}
			return 0, v.fail(op, fmt.Errorf("%w; the store did not confirm the write, so the change may or may not be recorded", err),
				Hint{HintReopen, "read the voyage's logbook to see whether the change was recorded before retrying"})
		}
		break
	}
	if err != nil {
		if decideErr == nil && errors.Is(err, segment.ErrPoisoned) {
			// The write or its fdatasync failed after the views took the
			// change in.
			v.mu.Lock()
			if v.broken == nil {
				v.broken = err
			}
			v.mu.Unlock()
			return 0, v.fail(op, fmt.Errorf("%w; the disk reported a failure, so the change may or may not be recorded", err),
				Hint{HintReopen, "open the voyage again, and read its logbook to see whether the change was recorded before retrying"})
		}
		if decideErr == nil && !errors.Is(err, segment.ErrCorrupt) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			// The log failed before anything was written (its directory,
			// lock or watermark could not be made, or opened).
			return 0, v.fail(op, fmt.Errorf("%w (nothing was recorded)", err), Hint{})
		}
		return 0, v.fail(op, err, Hint{})
	}
	v.mu.Lock()
	v.wrote = true
	v.mu.Unlock()
	return last, nil
}

// fail returns err as the *VoyageError of op on this voyage, with hint
// (zero: HintOf reads the one its sentinel implies). Damage is reported as
// a *DamageError, whatever found it. An error that is a *VoyageError
// already is returned as it is.
func (v *Voyage) fail(op string, err error, hint Hint) error {
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
func resolveWho(st *projection.State, who Who, entry bool) (Who, error) {
	if who.Identity == "" {
		who.Identity = st.Voyage.Identity
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

// CheckActive returns an error matching ErrVoyageCompleted when the
// voyage, as last read, is ended for good, and one matching
// ErrVoyagePaused when it is blocked or partial: a caller about to touch
// the world for it (run a command, call an API) asks first. The verbs
// check again, under the log's lock, against the real tail.
func (v *Voyage) CheckActive() error {
	v.mu.Lock()
	err := checkActive(&v.st)
	v.mu.Unlock()
	if err != nil {
		return v.fail("check that the voyage takes changes", err, Hint{})
	}
	return nil
}

// checkActive refuses a change to a voyage that is not active.
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
func withWho(events []*projection.Event, who Who) []*projection.Event {
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
func (v *Voyage) commitOnce(ctx context.Context, reads projection.Sections, red *redact.Redactor, idxErr error, decide func(*projection.State, stower) ([]*projection.Event, error)) (last uint64, decideErr, err error) {
	var first uint64               // the sequence number of the first event appended
	var applyAppended func() error // a shared store's: the views take the unit in once it is appended
	err = v.commitLog(ctx, func(tx logTx) ([][]byte, error) {
		decideErr = nil // a shared store's commit may decide again (remote.commit)
		if idxErr != nil {
			decideErr = idxErr
			return nil, idxErr
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if err := v.foldNew(tx.Scan); err != nil {
			return nil, err
		}
		if err := v.loadSections(reads, tx.Scan); err != nil {
			return nil, err
		}
		blobs := map[*projection.Event][]byte{} // stowed event -> its blob record (nil: in the pack)
		var holdsErr error                      // the index could not be read: the decide fails
		holds := func(hash string) bool {
			held, err := v.artifact(hash, tx.Scan) // a block of the snapshot's index, at most
			if err != nil {
				holdsErr = err
				return false
			}
			if held != nil && held.Status == projection.Stowed {
				return true // stored once per voyage; a jettisoned one is stowed again
			}
			for e := range blobs {
				if e.Artifact.Hash == hash {
					return true
				}
			}
			return false
		}
		stow := func(a *artifact.Encoded) (*projection.Event, error) {
			if a.Streamed() && v.remote != nil {
				// A shared store takes an artifact whole (store.Artifacts).
				if err := a.Settle(); err != nil {
					return nil, err
				}
			}
			if a.Streamed() {
				// Its address is known once it is written.
				r, stored, err := v.pack.StowStream(a, holds)
				if err == nil {
					err = holdsErr
				}
				if err != nil || !stored {
					return nil, err
				}
				ev := &projection.Event{Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: r.Hash, Size: r.Size, StoredSize: r.StoredSize, Offset: r.Offset}}
				blobs[ev] = nil
				return ev, nil
			}
			if holds(a.Hash) || holdsErr != nil {
				return nil, holdsErr
			}
			inline := a.Inline() // compresses it, if it was held when it was prepared
			ref := &projection.ArtifactRef{Hash: a.Hash, Size: a.Size, StoredSize: int64(len(a.Compressed))}
			var blob []byte
			if inline {
				blob = artifact.BlobRecord(a)
			} else if v.remote != nil {
				// The event records the reference the store returns
				// (store.Artifacts.Put): a store that finds an artifact by
				// where it put it (store.Dir's pack) needs its offset; one
				// that finds it by its address alone returns none, and
				// the copy is named by its event (sharedOffset, below).
				r, err := v.remote.arts.Put(ctx, a)
				if err != nil {
					return nil, err
				}
				ref.Offset = r.Offset
			} else {
				r, err := v.pack.Stow(a)
				if err != nil {
					return nil, err
				}
				ref.Offset = r.Offset
			}
			ev := &projection.Event{Type: projection.ArtifactStowed, Artifact: ref}
			blobs[ev] = blob
			return ev, nil
		}
		events, err := decide(&v.st, stow)
		if err != nil {
			decideErr = err
			return nil, err
		}
		events = v.withRules(events)
		// Number the records as the log will: a blob just before the event
		// that names it. Encode and check them all before folding any.
		now := v.home.now()
		seq := tx.Last()
		n := v.st.Counts().Entries // the story's entries so far: numbered in order, for good
		records := make([][]byte, 0, len(events)+len(blobs))
		seqs := make([]uint64, len(events))
		for i, e := range events {
			blob, stowed := blobs[e]
			if blob != nil {
				seq++
				records = append(records, blob)
				e.Artifact.Blob = seq
			} else if stowed && v.remote != nil && e.Artifact.Offset == 0 {
				e.Artifact.Offset = sharedOffset(seq + 1)
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
				decideErr = err
				return nil, err
			}
			seq++
			seqs[i] = seq
			records = append(records, rec)
		}
		// Fold our own events now, so the next decide of this group sees
		// them; if the write fails, v.broken keeps these views from being
		// used again. (A shared store may refuse the unit, another writer
		// having come first: there the views take its events in once it
		// is appended.) The sections they need are read first, as the
		// views stand before any of them (a superset of what each needs
		// when its turn comes).
		var need projection.Sections
		for _, e := range events {
			need |= v.st.Needs(e)
		}
		if err := v.loadSections(need, tx.Scan); err != nil {
			decideErr = err
			return nil, err
		}
		if len(events) > 0 {
			first, last = seqs[0], seq
		}
		if v.remote != nil {
			applyAppended = func() error {
				for i, e := range events {
					if seqs[i] <= v.st.Voyage.Seq {
						continue // folded from the store already, by a later change or a refresh
					}
					if err := v.st.Apply(seqs[i], e); err != nil {
						v.broken = err
						return err
					}
				}
				return nil
			}
			return records, nil
		}
		for i, e := range events {
			if err := v.st.Apply(seqs[i], e); err != nil {
				decideErr = err
				v.broken = err
				return nil, err
			}
			v.inflight = append(v.inflight, inflightEvent{seq: seqs[i], e: e})
		}
		return records, nil
	})
	if err == nil && applyAppended != nil {
		v.mu.Lock()
		err = applyAppended()
		v.mu.Unlock()
	}
	if first != 0 && v.remote == nil {
		v.mu.Lock()
		v.inflight = slices.DeleteFunc(v.inflight, func(f inflightEvent) bool { return f.seq >= first && f.seq <= last })
		v.mu.Unlock()
	}
	return last, decideErr, err
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
	if events[0].Type == projection.VoyageStarted {
		at, t = 1, projection.PolicyAdopted
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
