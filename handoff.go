package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
)

// Handoff hands the voyage with this id or prefix to another identity,
// h.To, and returns the handoff's entry. From that entry on the voyage's
// identity (VoyageInfo.CurrentIdentity) is h.To: what is recorded
// without naming an identity is recorded as it, and its actions run with
// its credentials (a CLI picks the identity's gh configuration). Earlier
// entries keep the identity they were recorded with, and a handoff
// changes no method: each later entry records the method its recorder
// gives, checked as ever.
//
// h.From, when given, is the identity the caller expects the voyage to
// have: another one refuses the handoff (someone handed it off
// meanwhile). h.Why is recorded; h.Confirmed says a person confirmed the
// handoff, for a guard rule that asks for confirmation.
//
// It is guarded as an action of kind policy.Handoff, by the home's
// rules over helm's built-in ones (policy.WithDefaults): by default
// only a person (who.Method exactly "human") hands a voyage off; only a
// rule of the system policy loosens that, a rule of the home's may
// tighten it. A refusal is recorded, as the guard's refusals are, and
// matches ErrRefused.
//
// Handoff records through a handle of its own: a Voyage open elsewhere
// sees the handoff once it refreshes, and decides each change of its own
// on the log's tail (what it records without an identity is recorded as
// the new one at once).
//
// Refused without writing: a voyage that is not active (ErrVoyagePaused:
// resume it first; ErrVoyageCompleted: a closed voyage keeps the
// identity it closed with), and (ErrInvalid) a handoff to the identity
// the voyage has, or from one it no longer has, or an identity that is
// not a plain name.
func (h *Home) Handoff(ctx context.Context, idOrPrefix string, who logbook.Who, to logbook.Handoff) (logbook.Entry, error) {
	const op = "handoff"
	to.To, to.From, to.Why = strings.TrimSpace(to.To), strings.TrimSpace(to.From), strings.TrimSpace(to.Why)
	err := errors.Join(checkWho(who), checkText("why", to.Why))
	if err == nil {
		err = logbook.ValidateIdentity(to.To)
		if err != nil {
			err = fmt.Errorf("%w: the identity to hand the voyage to: %v", ErrInvalid, err)
		}
	}
	if err == nil && to.From != "" {
		if e := logbook.ValidateIdentity(to.From); e != nil {
			err = fmt.Errorf("%w: the identity expected to hand the voyage from: %v", ErrInvalid, e)
		}
	}
	if err != nil {
		return logbook.Entry{}, &VoyageError{Op: op, Voyage: idOrPrefix, Err: err}
	}
	id, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return logbook.Entry{}, err
	}
	// Folded from the log, never a snapshot: a snapshot is a cache the
	// recorded agent can rewrite, checksums and all, to say a closed
	// voyage is active or name another current identity. A handoff is
	// rare; it decides on what the log says.
	v, err := h.back.open(ctx, id, false)
	if err != nil {
		return logbook.Entry{}, err
	}
	defer v.Close()
	v.mu.Lock()
	w, err := resolveWho(&v.st, who, true)
	if err == nil {
		err = checkHandoff(&v.st, to)
	}
	v.mu.Unlock()
	if err != nil {
		return logbook.Entry{}, v.fail(op, err, handoffHint(err))
	}
	params, err := json.Marshal(to)
	if err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	target := logbook.ActionTarget{Args: []string{to.To}}
	if err := v.guard(ctx, op, policy.Handoff, params, target, w, to.Why, to.Confirmed); err != nil {
		return logbook.Entry{}, err
	}
	seq, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		if err := checkHandoff(st, to); err != nil {
			return nil, err
		}
		rec := to
		rec.From = st.Voyage.CurrentIdentity()
		return []*projection.Event{{Type: projection.IdentityHandedOff, Who: w, Handoff: &rec}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(ctx, seq)
}

// checkHandoff refuses handoff h of the voyage st folds: one not active,
// one to the identity it has, one from an identity it no longer has.
func checkHandoff(st *projection.State, h logbook.Handoff) error {
	if err := checkActive(st); err != nil {
		if errors.Is(err, ErrVoyageCompleted) {
			return fmt.Errorf("%w: a closed voyage keeps the identity it closed with", err)
		}
		return err
	}
	cur := st.Voyage.CurrentIdentity()
	switch {
	case h.To == cur:
		return fmt.Errorf("%w: the voyage's identity is %s already", ErrInvalid, cur)
	case h.From != "" && h.From != cur:
		return fmt.Errorf("%w: the voyage's identity is %s, not %s (handed off meanwhile?)", ErrInvalid, cur, h.From)
	}
	return nil
}

func handoffHint(err error) hint.Hint {
	switch {
	case errors.Is(err, ErrVoyagePaused):
		return hint.Hint{Kind: hint.Resume, Text: "resume the voyage, then hand it off"}
	case errors.Is(err, ErrVoyageCompleted):
		return hint.Hint{Kind: hint.StartVoyage, Text: "start another voyage for the new identity's work"}
	case errors.Is(err, ErrMissingWho):
		return hint.Hint{Kind: hint.GiveWho, Text: "give the role and the method of whoever hands the voyage off"}
	}
	return hint.Hint{}
}
