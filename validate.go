package helm

import (
	"fmt"

	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// The checks every verb applies to what its caller hands it, before
// anything is looked at, performed or recorded. Text must be valid UTF-8:
// the event log is JSON, which would store U+FFFD in place of other bytes,
// so the log would hold something the caller never said. Marks must pass
// the checks their constructors apply (marks.Validate), however they were
// made.

// checkText returns an error wrapping ErrInvalid when s, the caller's
// field, is not valid UTF-8. It names the field, the byte and its offset.
func checkText(field, s string) error {
	if err := safetext.Check(field, s); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// checkWho checks the identity, role and method a caller gives. Empty ones
// are resolved later (from the voyage) or reported missing there.
func checkWho(who logbook.Who) error {
	for _, f := range []struct{ name, val string }{
		{"identity", who.Identity}, {"role", who.Role}, {"method", who.Method},
	} {
		if err := checkText(f.name, f.val); err != nil {
			return err
		}
	}
	return nil
}

// checkObservation checks an observation made elsewhere before it is
// recorded: it has a mark and a sighting of the same kind, and the mark
// passes its kind's checks. what names it in errors ("observation 2").
func checkObservation(what string, o Observation) error {
	if o.Mark == nil || o.Sighting == nil {
		return fmt.Errorf("%w: %s needs a mark and a sighting", ErrInvalid, what)
	}
	if o.Sighting.Kind() != o.Mark.Kind() {
		return fmt.Errorf("%w: %s: a %s sighting cannot answer a %s mark", ErrInvalid, what, o.Sighting.Kind(), o.Mark.Kind())
	}
	if err := marks.Validate(o.Mark); err != nil {
		return &invalidError{fmt.Errorf("%s: %w", what, err)}
	}
	return nil
}

// invalidError is an error from another package's validation (such as
// marks.ErrInvalid) that is also ErrInvalid for helm's callers, without
// saying "invalid" twice.
type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }
