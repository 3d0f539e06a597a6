package helm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Entries of text: notes (a status, a decision) and judgements (an
// evaluation of the voyage by someone who took no part in it).

// Note records an entry of text alone: a status, a decision, what is
// being waited for. who needs a role and a method.
func (v *Voyage) Note(ctx context.Context, text string, who logbook.Who) (logbook.Entry, error) {
	const op = "note"
	if err := errors.Join(checkText("note", text), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: the note is empty", ErrInvalid), hint.Hint{})
	}
	seq, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.NoteAdded, Who: w, Note: &logbook.Note{Text: text}}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(ctx, seq)
}

// Judge records an evaluation of the voyage by who, an identity that
// recorded nothing in it (else the error matches ErrJudgeTookPart): a
// score from 1 to 10 on a dimension ("correctness", "care"), citing the
// entries it rests on by number, with what the judge says. A voyage may
// be judged whatever its status, as judging mostly follows the end.
func (v *Voyage) Judge(ctx context.Context, j logbook.Judgement, who logbook.Who) (logbook.Entry, error) {
	const op = "judge"
	if err := errors.Join(checkText("dimension", j.Dimension), checkText("judgement", j.Text), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	j.Dimension, j.Text = strings.TrimSpace(j.Dimension), strings.TrimSpace(j.Text)
	switch {
	case j.Score < 1 || j.Score > 10:
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: score %d is not from 1 to 10", ErrInvalid, j.Score), hint.Hint{})
	case j.Dimension == "" || j.Text == "":
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: a judgement needs a dimension and what the judge says", ErrInvalid), hint.Hint{})
	case len(j.Evidence) == 0:
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: a judgement cites the entries it rests on; none given", ErrInvalid), hint.Hint{Kind: hint.ReadLogbook, Text: "read the logbook for the entries' numbers"})
	}
	j.Evidence = slices.Compact(slices.Sorted(slices.Values(j.Evidence)))
	seq, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		if _, took := slices.BinarySearch(st.Voyage.Crew, w.Identity); took {
			return nil, fmt.Errorf("%w: %s recorded events in it; a judge is someone who did not", ErrJudgeTookPart, w.Identity)
		}
		n := st.Counts().Entries
		for _, e := range j.Evidence {
			if e < 1 || e > n {
				return nil, fmt.Errorf("%w: evidence %d is not an entry of the story (it has %d)", ErrInvalid, e, n)
			}
		}
		return []*projection.Event{{Type: projection.Judged, Who: w, Judgement: &j}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(ctx, seq)
}
