package helm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Event is one event of a voyage's log, as the read path (Voyage.Events,
// Voyage.Follow) yields it: its type, schema version, time, who recorded
// it, the number of the entry it records (0 for an event that records
// none, and in voyages written before numbers were stored), its payload,
// and Seq, its sequence number in the log. Events are decoded and brought
// to the current schema (an older event's form is read as today's). Its
// JSON form is the one exports and transcripts share (docs/transcript.md).
type Event = projection.Event

// Events yields the voyage's events in the order they were recorded, from
// sequence number from (0 and 1 mean from the first), up to the end of
// the log as it is when the iteration reaches it: the events others append
// meanwhile may or may not be among them (Follow waits for them).
// Artifacts' bytes are not events and are not yielded; the events that
// stow, reduce and jettison artifacts are. Each Event is the caller's.
//
// An error ends the sequence: it is yielded once, as a *VoyageError that
// names the voyage, and for a record that does not decode or damage in
// the log, the log and the record (a *DamageError inside). Reading
// writes nothing and takes no lock.
func (v *Voyage) Events(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return v.eventSeq("read events", func(fn func(uint64, *projection.Event) error) error {
		return v.scanEvents(ctx, from, fn)
	})
}

// scanEvents calls fn with each event of the voyage from seq from to the
// end of its log, decoded and upcast: the one call by which the read path
// reaches the log.
func (v *Voyage) scanEvents(ctx context.Context, from uint64, fn func(seq uint64, e *projection.Event) error) error {
	var st stubs
	if err := v.rec.Scan(ctx, from, st.events(v.id, v.rec.Dir(), fn)); err != nil {
		return err
	}
	return st.err(v.id, v.rec.Dir())
}

// errStopped ends a scan whose caller stopped iterating.
var errStopped = errors.New("the caller stopped iterating")

// eventSeq turns scan, which calls its function with each event, into the
// events' sequence: an error scan returns is yielded last, as the error of
// op; one that ends the caller's loop stops the scan.
func (v *Voyage) eventSeq(op string, scan func(fn func(uint64, *projection.Event) error) error) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		err := scan(func(seq uint64, e *projection.Event) error {
			e.Seq = seq
			if !yield(*e, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(Event{}, v.fail(op, err, hint.Hint{}))
		}
	}
}

// eventsOf adapts fn to the records of the event log in dir of voyage id:
// the one path by which a voyage's records become events. Blob records
// (and reclaimed ones) are skipped (an artifact's bytes are read only when the artifact is);
// events are decoded, and upcast to the current schema; a record that
// does not decode is an error naming the voyage, the log and the record.
func eventsOf(id, dir string, fn func(seq uint64, e *projection.Event) error) func(segment.Record) error {
	return (*stubs)(nil).events(id, dir, fn)
}

// stubs follows, through one scan, the reclaimed records it meets and the
// artifact events that name them. A reclaimed record held an artifact's
// bytes (Voyage.Compact reclaims those of jettisoned ones), and the event
// that stowed the artifact names it as its blob record, after it, in the
// same commit: helm writes each blob record just before the event naming
// it, and an import keeps an archive's blob records before their events
// (import.go: a blob is a record before its event that no event is). So a
// stub is named only by an artifact stow (or reduction) whose blob record
// it is, with nothing between the two but blob records (or their stubs)
// and such events, as a batch of them is written. A stub that no event
// names so — none at all, or one further on, past another event — was an
// event, gone from the story: a later event naming it is a forgery that
// would tell the story without it. A read that folds or yields events
// refuses such a log, as it refuses other damage: nothing is left out of
// the story unsaid. (Verify checks every record of the log the same way:
// checkReclaimed.)
type stubs struct {
	// open are the stubs of the run of blob records and artifact events
	// the scan is in, not named yet; hidden are those whose run ended
	// before an event named them.
	open   map[uint64]bool
	hidden []uint64
	// named are the stubs named so far, each with the seq of the event
	// naming it (kept when names is set: Verify's witnesses use them).
	names bool
	named map[uint64]uint64
	// dec, when set, decodes the events (projection.Decoder): for a fn
	// that keeps no event past its call, as folding into a State does.
	dec *projection.Decoder
}

// end closes the run: its stubs left unnamed are hidden records.
func (s *stubs) end() {
	for seq := range s.open {
		s.hidden = append(s.hidden, seq)
		delete(s.open, seq)
	}
}

// events is eventsOf that follows the scan's reclaimed records in s (nil:
// not followed).
func (s *stubs) events(id, dir string, fn func(seq uint64, e *projection.Event) error) func(segment.Record) error {
	return func(r segment.Record) error {
		if r.Reclaimed {
			if s != nil {
				if s.open == nil {
					s.open = map[uint64]bool{}
				}
				s.open[r.Seq] = true
			}
			return nil
		}
		if artifact.IsBlob(r.Data) {
			return nil
		}
		decode := projection.Decode
		if s != nil && s.dec != nil {
			decode = s.dec.Decode
		}
		e, err := decode(r.Data)
		if err != nil {
			return fmt.Errorf("voyage %s, %s, record %d: %w", id, dir, r.Seq, err)
		}
		if s != nil && len(s.open) > 0 {
			if a := e.Artifact; a != nil && (e.Type == projection.ArtifactStowed || e.Type == projection.ArtifactReduced) {
				if s.names && s.open[a.Blob] {
					if s.named == nil {
						s.named = map[uint64]uint64{}
					}
					s.named[a.Blob] = r.Seq
				}
				delete(s.open, a.Blob) // its blob record, in its run
			} else {
				s.end()
			}
		}
		return fn(r.Seq, e)
	}
}

// err is the damage the scan met: the first reclaimed record that no
// event named.
func (s *stubs) err(id, dir string) error {
	if s == nil {
		return nil
	}
	s.end() // the log's end ends the run
	if len(s.hidden) == 0 {
		return nil
	}
	return hiddenRecord(id, dir, slices.Min(s.hidden))
}

// hiddenRecord is the damage of the reclaimed record seq of voyage id's
// log in dir that no artifact event names as its blob record.
func hiddenRecord(id, dir string, seq uint64) *DamageError {
	return &DamageError{Voyage: id, File: dir, Seq: seq,
		Reason: fmt.Sprintf("record %d was reclaimed, but no artifact was stored in it (no artifact event of its commit names it as its blob record): an event's bytes are gone, and the story would be told without it", seq)}
}
