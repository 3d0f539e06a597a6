package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// Invertible is an action that says how to take back what it did. Once
// Perform succeeds, the voyage asks it for the inverse of what it left
// in the world and records that with the outcome; Undoable reads it back.
// An action that is not Invertible records no inverse, and cannot be
// undone.
type Invertible interface {
	// Inverse returns the action that takes back what Perform did, given
	// its result, or, when there is none, why (Inverse.None). An error
	// is recorded as the reason there is none; the action stays performed.
	Inverse(ctx context.Context, result logbook.ActionResult) (logbook.Inverse, error)
}

// Undoable returns how to take back the action of entry n, as it was
// recorded: the inverse an undo action is built from (package actions
// builds it). It is an ErrNotUndoable when the entry cannot be undone:
// it is no performed action, it records no inverse or one that says there
// is none (a merge), it is itself an undo, or it is undone already or
// being undone. Perform the undo with PerformOptions.Undoes set to n.
// It first folds in what others recorded since the views were brought
// up to date, as a change does: the entry may be theirs.
func (v *Voyage) Undoable(ctx context.Context, n int) (logbook.Inverse, error) {
	op := fmt.Sprintf("undo entry %d", n)
	if err := v.refresh(ctx); err != nil {
		return logbook.Inverse{}, v.fail(op, err, hint.Hint{})
	}
	v.mu.Lock()
	err := v.loadView(ctx, projection.SectionEntries)
	var a *logbook.ActionRecord
	if err == nil {
		a, err = undoable(v.st.Entries, n)
	}
	var inv logbook.Inverse
	if err == nil {
		inv = *a.Inverse
	}
	v.mu.Unlock()
	if err != nil {
		return logbook.Inverse{}, v.fail(op, err, hint.Hint{})
	}
	return inv, nil
}

// undoable returns the action of entry n when it can be undone now, and
// otherwise an ErrNotUndoable saying why.
func undoable(entries []logbook.Entry, n int) (*logbook.ActionRecord, error) {
	if n < 1 || n > len(entries) {
		return nil, fmt.Errorf("%w: the story has no entry %d (it has %d)", ErrNotUndoable, n, len(entries))
	}
	a := entries[n-1].Action
	if a == nil {
		return nil, fmt.Errorf("%w: entry %d is a %s, not an action", ErrNotUndoable, n, strings.ToLower(logbook.Title(entries[n-1].Kind)))
	}
	what := fmt.Sprintf("entry %d (%s)", n, a.Kind)
	switch a.Status {
	case logbook.ActionFailed:
		if a.Result != nil && !reflect.DeepEqual(*a.Result, logbook.ActionResult{}) {
			left := logbook.DescribeAction(&logbook.ActionRecord{Kind: a.Kind, Status: logbook.ActionPerformed, Result: a.Result})
			return nil, fmt.Errorf("%w: %s failed part way, and helm records no way to take back what it left (%s): do that by hand", ErrNotUndoable, what, left)
		}
		return nil, fmt.Errorf("%w: %s failed, so it left nothing to take back", ErrNotUndoable, what)
	case logbook.ActionRefused:
		return nil, fmt.Errorf("%w: %s was refused, so nothing was run", ErrNotUndoable, what)
	case logbook.ActionOutcomeUnknown:
		return nil, fmt.Errorf("%w: %s has no recorded outcome, so helm cannot tell what it left; check the world and take it back by hand", ErrNotUndoable, what)
	}
	switch {
	case a.Undoes != 0:
		return nil, fmt.Errorf("%w: %s is the undo of entry %d, and an undo is not undone: perform that action again instead", ErrNotUndoable, what, a.Undoes)
	case a.UndoneBy != 0:
		return nil, fmt.Errorf("%w: %s was undone already, by entry %d", ErrNotUndoable, what, a.UndoneBy)
	case a.Inverse == nil:
		return nil, fmt.Errorf("%w: %s records no way to take it back (it was recorded by a helm before undo, or its action declares no inverse)", ErrNotUndoable, what)
	case a.Inverse.Kind == "":
		return nil, fmt.Errorf("%w: %s has no inverse: %s", ErrNotUndoable, what, a.Inverse.None)
	}
	for _, e := range entries[n:] {
		if u := e.Action; u != nil && u.Undoes == n && u.Status == logbook.ActionOutcomeUnknown {
			// In flight, or its process died: never undoable again, as
			// helm cannot tell whether that undo ran.
			return nil, fmt.Errorf("%w: entry %d, an undo of %s, has no recorded outcome: it is running, or it stopped before its outcome was recorded, and then helm cannot tell whether it took entry %d back; if it stays so, check the world, and take it back by hand if it was not", ErrNotUndoable, e.N, what, n)
		}
	}
	return a, nil
}

// inverseOf is the inverse recorded with a's outcome: none for an undo,
// else what an Invertible action declares (nil: it declares nothing),
// checked against red, the home's redactor (every text stored is
// redacted, and parameters redacted would undo something else).
func inverseOf(ctx context.Context, red *redact.Redactor, a Action, result logbook.ActionResult, undoes int) *logbook.Inverse {
	if undoes != 0 {
		return &logbook.Inverse{None: fmt.Sprintf("it is the undo of entry %d, and an undo is not undone: perform that action again instead", undoes)}
	}
	ia, ok := a.(Invertible)
	if !ok {
		return nil
	}
	inv, err := ia.Inverse(ctx, result)
	switch {
	case err != nil:
		return &logbook.Inverse{None: "helm could not tell how to take it back: " + err.Error()}
	case (inv.Kind == "") == (inv.None == ""):
		return &logbook.Inverse{None: fmt.Sprintf("its action named no single way to take it back (kind %q, none %q)", inv.Kind, inv.None)}
	case len(inv.Params) > 0 && !json.Valid(inv.Params):
		return &logbook.Inverse{None: "its action named parameters to take it back that are not JSON"}
	}
	if redacted, n := red.JSON(inv.Params); n > 0 {
		return &logbook.Inverse{None: "the way to take it back holds what looks like a secret (" + strings.Join(secretRules(redacted), ", ") + "), which helm does not store"}
	}
	return &inv
}
