package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Action is an operation in the world that a voyage performs and records.
// Package actions implements git's and GitHub's; the voyage knows neither.
// Its JSON encoding is recorded as the action's parameters.
type Action interface {
	// Kind names the action, such as "commit" or "create-pull-request".
	Kind() string
	// Perform does it and reports what it left in the world.
	Perform(ctx context.Context) (logbook.ActionResult, error)
}

// ActionError is a failed action: the world (git, GitHub) refused it. The
// failure is recorded: the action's entry keeps its number and shows it
// failed. Perform returns one only once the failure is
// recorded; an outcome that could not be recorded is an error with a
// HintCheckWorld hint instead, and no ActionError.
type ActionError struct {
	Kind string // the action's kind
	Err  error  // what the action returned
}

func (e *ActionError) Error() string { return e.Err.Error() }
func (e *ActionError) Unwrap() error { return e.Err }

// Witnessed is an Action that writes text into the world (a commit's
// message, a pull request's body) and carries a witness in it. Once the
// intent is recorded, and before Perform, the voyage gives it the trailer
// line naming the voyage at the head of its chain, the intent included
// (chain.Trailer: "Helm-Voyage: <voyage id> <SEQ>:<HEX>"); a head outside
// the home is what Home.Verify checks the log against (VerifyOptions).
// The line is no parameter: the intent records the action as asked. A
// head that cannot be computed fails the action, recorded, before
// Perform runs: it does not run unwitnessed.
type Witnessed interface {
	Witness(line string)
}

// resolver is an Action whose parameters default to the state of the
// world (the actions package's Push): Perform resolves it before its
// parameters are checked and recorded.
type resolver interface {
	Resolve(ctx context.Context) error
}

// PerformOptions tune Perform.
type PerformOptions struct {
	// AllowSecret performs an action whose parameters hold what the
	// redactor finds secret (a token in a commit message or a pull
	// request's body), which is otherwise refused with ErrSecret. The
	// world gets the parameters as they are; the log records them
	// redacted.
	AllowSecret bool
	// Why is the rationale for the action, shown with it in the story.
	Why string
	// Confirmed says a person agreed to the action: a guard rule whose
	// decision is confirm lets it run only then.
	Confirmed bool
	// Undoes is the number of the entry whose action this one takes back
	// (0: none); the action is built from the entry's Inverse (see
	// Undoable). The entry must still be undoable when the intent is
	// recorded, else ErrNotUndoable and nothing is run; the story then
	// shows it undone by this one, once this one is performed.
	Undoes int
}

// Perform records the intent to perform a (durably, before the world is
// touched), performs it, and records the outcome. A crash in between
// leaves the entry with status ActionOutcomeUnknown. A failed action
// returns an *ActionError once its failure is recorded in its entry.
// who needs a role and a method; opts may be nil.
func (v *Voyage) Perform(ctx context.Context, a Action, who logbook.Who, opts *PerformOptions) (logbook.Entry, error) {
	if opts == nil {
		opts = &PerformOptions{}
	}
	op := "perform " + a.Kind()
	if err := errors.Join(checkWho(who), checkText("why", opts.Why)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	why := strings.TrimSpace(opts.Why)
	if r, ok := a.(resolver); ok {
		// Parameters that default to the state of the world (a push's
		// branch and what git resolves it to) are resolved before they
		// are checked and recorded.
		if err := r.Resolve(ctx); err != nil {
			return logbook.Entry{}, v.fail(op, err, hint.Hint{})
		}
	}
	params, err := json.Marshal(a)
	if err != nil {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: encode parameters: %v", ErrInvalid, err), hint.Hint{})
	}
	if err := refuseWitnessLine(a, params, v.id); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{Kind: hint.Witness, Text: "take the " + chain.TrailerKey + " line out (or quote it, \"> ...\"): helm adds the one line naming the voyage itself"})
	}
	red, err := v.home.redactor()
	if err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	if redacted, n := red.JSON(params); n > 0 && !opts.AllowSecret {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w (%s): nothing was run or recorded", ErrSecret, strings.Join(secretRules(redacted), ", ")),
			hint.Hint{Kind: hint.AllowSecret, Text: "take the secret out of the parameters, or allow it (PerformOptions.AllowSecret): the log records it redacted"})
	}
	if opts.Undoes != 0 {
		// Checked again with the intent; here, so that an undo that could
		// not be made is not put to the guard rules either.
		if _, err := v.Undoable(ctx, opts.Undoes); err != nil {
			return logbook.Entry{}, err
		}
	}
	if v.home.opts.Policy != nil {
		var target logbook.ActionTarget
		if t, ok := a.(Targeted); ok {
			if target, err = t.Target(ctx); err != nil {
				return logbook.Entry{}, v.fail(op, fmt.Errorf("find what the action acts on, for the guard rules: %w", err), hint.Hint{})
			}
		}
		if err := v.guard(ctx, op, a.Kind(), params, target, who, why, opts.Confirmed); err != nil {
			return logbook.Entry{}, err
		}
	}
	id := v.home.opts.NewID().String()
	var w logbook.Who
	var reads projection.Sections
	if opts.Undoes != 0 {
		reads = projection.SectionEntries
	}
	intent, err := v.commitReading(ctx, op, reads, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		if opts.Undoes != 0 {
			if _, err := undoable(st.Entries, opts.Undoes); err != nil {
				return nil, err
			}
		}
		if w, err = resolveWho(st, who, true); err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ActionIntended, Who: w, Action: &logbook.ActionRecord{
			ID: id, Kind: a.Kind(), Params: params, Why: why, Undoes: opts.Undoes,
		}}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	var result logbook.ActionResult
	perr := v.witness(ctx, a)
	if perr == nil {
		result, perr = a.Perform(ctx)
	}
	outcome := &projection.Event{Type: projection.ActionPerformed, Who: w, Action: &logbook.ActionRecord{ID: id, Kind: a.Kind(), Result: &result}}
	if perr == nil {
		// How to take it back: asked of the world as the action left it.
		outcome.Action.Inverse = inverseOf(context.WithoutCancel(ctx), red, a, result, opts.Undoes)
	} else {
		failed := &logbook.ActionRecord{ID: id, Kind: a.Kind(), Error: perr.Error()}
		if !reflect.DeepEqual(result, logbook.ActionResult{}) {
			failed.Result = &result // partly done: a PR created, its review request refused
		}
		outcome = &projection.Event{Type: projection.ActionFailed, Who: w, Action: failed}
	}
	// Record the outcome even if ctx was cancelled meanwhile: the world
	// has been touched. HasAction finds the intent this handle folded in,
	// whether or not it read the logbook.
	_, err = v.commitReading(context.WithoutCancel(ctx), op, 0, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if !st.HasAction(id) {
			return nil, fmt.Errorf("action %s has no recorded intent", id)
		}
		return []*projection.Event{outcome}, nil
	})
	if err != nil {
		// The world was touched: say so, with what it left, so nobody
		// performs the action a second time on the strength of this error.
		what := "performed: " + logbook.DescribeAction(&logbook.ActionRecord{Kind: a.Kind(), Status: logbook.ActionPerformed, Result: &result})
		if perr != nil {
			what = "attempted and failed (" + perr.Error() + ")"
		}
		return logbook.Entry{}, &VoyageError{
			Op: op, Voyage: v.id,
			Err:  fmt.Errorf("the action was %s, but its outcome could not be recorded, so the logbook shows it as outcome unknown: %w", what, err),
			Hint: hint.Hint{Kind: hint.CheckWorld, Text: "check the world (the repository, the pull request) before performing the action again"},
		}
	}
	if perr != nil {
		return logbook.Entry{}, v.fail(op, &ActionError{Kind: a.Kind(), Err: perr}, hint.Hint{})
	}
	return v.entryAt(ctx, intent)
}

// witness gives a Witnessed action the trailer naming the voyage at the
// head of its chain, read after the intent was recorded. The error is the
// action's failure: it is not run without its witness.
func (v *Voyage) witness(ctx context.Context, a Action) error {
	w, ok := a.(Witnessed)
	if !ok {
		return nil
	}
	head, err := v.rec.head(ctx)
	if err != nil {
		return fmt.Errorf("%s: not run: the head of the voyage's chain could not be computed for its %s witness: %w", a.Kind(), chain.TrailerKey, err)
	}
	w.Witness(chain.Trailer(v.id, head))
	return nil
}
