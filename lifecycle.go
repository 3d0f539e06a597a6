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

// A voyage's lifecycle: it is completed with an outcome, and a blocked or
// partial one is resumed.

// Complete ends the voyage with an outcome (empty means OutcomeCompleted)
// and a summary of what came of it; the outcome is its status afterwards.
// Nothing more is observed, sealed or performed on it then, unless it is
// blocked or partial and resumed (Resume); its logbook stays readable.
// A blocked or partial voyage may also be completed with another outcome
// directly.
func (v *Voyage) Complete(ctx context.Context, outcome logbook.Outcome, summary string, who logbook.Who) error {
	const op = "complete"
	if err := errors.Join(checkText("summary", summary), checkWho(who)); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	if outcome == "" {
		outcome = logbook.OutcomeCompleted
	}
	if !slices.Contains(logbook.Outcomes(), outcome) {
		return v.fail(op, fmt.Errorf("%w: outcome %q is not one of %v", ErrInvalid, outcome, logbook.Outcomes()), hint.Hint{})
	}
	_, err := v.commitReading(ctx, op, 0, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		status := projection.NormalStatus(st.Voyage.Status, st.Voyage.Outcome)
		if err := checkActive(st); err != nil && !(status.Resumable() && status != projection.Status(outcome)) {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.VoyageCompleted, Who: w, Completion: &projection.Completion{
			Outcome: projection.Outcome(outcome), Summary: strings.TrimSpace(summary),
		}}}, nil
	})
	if err == nil {
		v.rec.summarize(ctx)
	}
	return err
}

// Resume makes a blocked or partial voyage active again, recording who
// resumed it and why (reason may be empty). A voyage completed, failed
// or cancelled is final: resuming it is an error matching
// ErrNotResumable, as is resuming an active one.
func (v *Voyage) Resume(ctx context.Context, reason string, who logbook.Who) error {
	const op = "resume"
	if err := errors.Join(checkText("reason", reason), checkWho(who)); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		switch status := projection.NormalStatus(st.Voyage.Status, st.Voyage.Outcome); {
		case status == projection.StatusActive:
			return nil, fmt.Errorf("%w: it is active already", ErrNotResumable)
		case !status.Resumable():
			return nil, fmt.Errorf("%w: it is %s (at %s), which is final; start another voyage", ErrNotResumable, status, stampOf(st.Voyage.CompletedAt))
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.VoyageResumed, Who: w, Resumption: &projection.Resumption{Reason: strings.TrimSpace(reason)}}}, nil
	})
	if err == nil {
		v.rec.summarize(ctx)
	}
	return err
}
