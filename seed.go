package helm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// Seed writes events as the whole history of a new voyage, as they were
// recorded — their times, who recorded them and their entry numbers kept —
// and opens the voyage: a test's given history (package helmtest), or a
// history read back from an export (replay.ReadEvents). The first event starts
// the voyage, with an id the home does not hold yet. Every event is
// folded before anything is written, so a history that does not fold
// (an entry numbered out of turn, a challenge of no bearing) is an error
// matching ErrInvalid naming the event, and nothing is written; text is
// redacted as any stored text is.
//
// Artifacts' bytes are not part of a history: events that stow, reduce or
// jettison an artifact are refused, and the observations' artifacts
// cannot be read from a seeded voyage.
//
// A history that records no guard rules, seeded in a home that has some,
// ends with the home's rules recorded (a policy-adopted event, no entry):
// what is done to the seeded voyage is done under them, as in a voyage
// started in the home, not as a change of rules.
func (h *Home) Seed(ctx context.Context, events []projection.Event) (*Voyage, error) {
	const op = "seed voyage"
	if len(events) == 0 || events[0].Type != projection.VoyageStarted || events[0].Voyage == nil {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: a history begins with a voyage-started event", ErrInvalid)}
	}
	id := events[0].Voyage.ID
	if _, err := uuid.Parse(id); err != nil || id != uuid.MustParse(id).String() {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: voyage id %q is not a lower-case UUID", ErrInvalid, id)}
	}
	if h.holds(ctx, id) {
		return nil, &VoyageError{Op: op, Voyage: id, Err: fmt.Errorf("%w: the home holds voyage %s already", ErrInvalid, id)}
	}
	red, err := h.redactor()
	if err != nil {
		return nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	var st projection.State
	if h.rules.Digest != "" && !slices.ContainsFunc(events, func(e projection.Event) bool {
		return e.Type == projection.PolicyAdopted || e.Type == projection.PolicyChanged
	}) {
		last := events[len(events)-1]
		events = append(slices.Clip(events), projection.Event{Type: projection.PolicyAdopted, At: last.At, Who: events[0].Who,
			Policy: &logbook.PolicyRecord{Digest: h.rules.Digest, Sources: slices.Clone(h.rules.Sources)}})
	}
	records := make([][]byte, len(events))
	for i := range events {
		switch events[i].Type {
		case projection.ArtifactStowed, projection.ArtifactReduced, projection.ArtifactJettisoned:
			return nil, &VoyageError{Op: op, Voyage: id, Err: fmt.Errorf("%w: event %d (%s): artifacts' bytes are not part of a history; leave their events out", ErrInvalid, i+1, events[i].Type)}
		}
		rec, err := seedRecord(red, &events[i], &st, uint64(i+1))
		if err != nil {
			return nil, &VoyageError{Op: op, Voyage: id, Err: fmt.Errorf("%w: event %d (%s): %v", ErrInvalid, i+1, events[i].Type, err)}
		}
		records[i] = rec
	}
	all := make(map[uint64]bool, len(records)) // a history is events only
	for i := range records {
		all[uint64(i+1)] = true
	}
	err = h.back.create(ctx, id, func(v *Voyage) error {
		return v.appendImported(ctx, records, 0, all, nil, func(last uint64) error {
			if last == 0 {
				return errors.New("the new voyage's log is not empty")
			}
			return fmt.Errorf("a writer appended to the voyage in %s after record %d", h.where(), last)
		})
	})
	var ve *VoyageError
	if errors.As(err, &ve) && ve.Op == "start voyage" {
		ve.Op = op // the voyage's directory, or its key in the store, could not be made
	}
	if err != nil {
		return nil, err
	}
	return h.open(ctx, id)
}

// seedRecord returns the stored form of e, redacted, once it folds into
// st at seq. It works on a deep copy: the caller's event is left as it is.
func seedRecord(red *redact.Redactor, e *projection.Event, st *projection.State, seq uint64) ([]byte, error) {
	c := *e
	c.Seq = seq
	copied, err := importEvent(red, &c, st)
	if err != nil {
		return nil, err
	}
	copied.Seq = 0
	return projection.Encode(copied)
}
