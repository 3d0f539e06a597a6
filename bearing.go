package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Bearings: what the slate's observations meant, and the challenges that
// correct a reading.

// BearingOptions are the optional parts of a bearing.
type BearingOptions struct {
	// Observations are sealed with the slate's: observations made
	// elsewhere, such as read from observation files. One with the same
	// mark key as a slate entry replaces it.
	Observations []Observation
	// Source says who wrote the reading; empty means SourceAgent.
	Source logbook.Source
}

// TakeBearing records a reading over the slate's observations: the
// logbook entry and the wiping of the slate are one atomic event. who
// needs a role and a method: every logbook entry records who took it.
func (v *Voyage) TakeBearing(ctx context.Context, reading string, who logbook.Who, opts *BearingOptions) (logbook.Entry, error) {
	const op = "take bearing"
	if opts == nil {
		opts = &BearingOptions{}
	}
	if err := errors.Join(checkText("reading", reading), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	reading = strings.TrimSpace(reading)
	if reading == "" {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: the reading is empty; say what the observations mean", ErrInvalid), hint.Hint{})
	}
	source := opts.Source
	if source == "" {
		source = logbook.SourceAgent
	}
	red, err := v.home.redactor()
	if err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	extra := make([]*encodedObservation, len(opts.Observations))
	for i, o := range opts.Observations {
		if err := checkObservation(fmt.Sprintf("observation %d", i+1), o); err != nil {
			return logbook.Entry{}, v.fail(op, err, hint.Hint{})
		}
		enc, err := v.encodeObservation(ctx, red, o)
		if err != nil {
			return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: observation %d: %v", ErrInvalid, i+1, err), hint.Hint{})
		}
		extra[i] = enc
	}
	seq, err := v.commit(ctx, op, func(st *projection.State, stow stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		var events []*projection.Event
		for _, e := range extra {
			rec, err := v.sealObservation(e, stow, &events)
			if err != nil {
				return nil, err
			}
			rec.ObservedBy = w
			events = append(events, &projection.Event{Type: projection.Observed, Obs: &rec})
		}
		if len(st.Slate) == 0 && len(extra) == 0 {
			return nil, fmt.Errorf("%w: a bearing needs at least one observation", ErrEmptySlate)
		}
		// The bearing seals the slate as these events leave it: its
		// observations are not stored again (projection.Event.Bearing).
		events = append(events, &projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{
			Reading: logbook.Reading{Text: reading, Source: source},
		}})
		return withWho(events, w), nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(ctx, seq)
}

// Challenge is a correction of a bearing's reading.
type Challenge struct {
	// Feedback says what is wrong with the reading it replaces.
	Feedback string
	// Reading is the new reading.
	Reading string
	// Source says who wrote the new reading; empty means SourceUser.
	Source logbook.Source
}

// Challenge replaces the reading of bearing n (its number in the story)
// with c.Reading, keeping the challenged reading and c.Feedback in its
// history. who needs a role and a method.
func (v *Voyage) Challenge(ctx context.Context, n int, c Challenge, who logbook.Who) (logbook.Entry, error) {
	op := fmt.Sprintf("challenge bearing %d", n)
	if err := errors.Join(checkText("feedback", c.Feedback), checkText("reading", c.Reading), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	feedback, text := strings.TrimSpace(c.Feedback), strings.TrimSpace(c.Reading)
	if feedback == "" || text == "" {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: a challenge needs feedback and the new reading", ErrInvalid), hint.Hint{})
	}
	source := c.Source
	if source == "" {
		source = logbook.SourceUser
	}
	var bseq uint64
	_, err := v.commitReading(ctx, op, projection.SectionEntries, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		var ok bool
		if bseq, ok = st.BearingSeq(n); !ok {
			return nil, fmt.Errorf("%w: entry %d of %d is not a bearing", ErrNoSuchBearing, n, len(st.Entries))
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ReadingChallenged, Who: w, Challenge: &projection.Challenge{
			Bearing: bseq, Feedback: feedback, Text: text, Source: source,
		}}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(ctx, bseq)
}
