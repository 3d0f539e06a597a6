// Package exit says what becomes of helm's errors: the status the
// command exits with, the message it prints, and what to do next, in the
// command line's words and in the MCP server's. The command line and its
// MCP server both build their errors from these types (a usage error, an
// error with a hint) and both read any error through Code and Message,
// so that a failure reads and counts the same from either.
package exit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/sighting"
)

// Exit statuses.
const (
	OK          = 0
	Failed      = 1   // the operation failed, and nothing was recorded
	Usage       = 2   // bad usage or input
	Recorded    = 3   // recorded, but what was observed or done reported a failure: not to be retried blindly
	Refused     = 4   // refused by a guard rule: the refusal is recorded, nothing was done; retrying will not help
	Interrupted = 130 // a signal (Ctrl-C, SIGTERM) interrupted the command: 128 + SIGINT, as shells report it
)

// ObservedFailures is an observation recorded whose sighting reports
// failures (a file not there, a non-zero exit, an HTTP error): each is a
// "helm: observed, but ..." line, and the status is 3.
type ObservedFailures struct {
	Failures []sighting.Failure
	// Erase is the command line that takes the observation off the
	// slate, printed as "Try: ..." after the failures ("": none).
	Erase string
}

func (e *ObservedFailures) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Message
	}
	return "observed, but " + strings.Join(msgs, "; ")
}

// UsageError is bad usage: a missing argument, an unknown flag, a value
// that cannot be. It exits 2, and its Hint is printed as "Try: ...".
type UsageError struct {
	Err  error
	Hint string
	// Tool is the hint in the MCP server's words (a tool to call, an
	// argument to give), when the error can reach a tool's caller;
	// empty, the server gives the library's hint, if any.
	Tool string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Hinted attaches a "Try: ..." hint to an error without changing its exit
// status.
type Hinted struct {
	Err  error
	Hint string
	Tool string // as UsageError's
}

func (e *Hinted) Error() string { return e.Err.Error() }
func (e *Hinted) Unwrap() error { return e.Err }

// InterruptedError is a command that a signal interrupted before it
// ended. The voyage is consistent: a change is recorded whole or not at
// all, and an action already performed has its outcome recorded.
type InterruptedError struct {
	Signal error // what context.Cause says: "interrupt signal received"
	Err    error // what the command returned
}

func (e *InterruptedError) Error() string { return "interrupted: " + e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// inputErrors are the library's errors that mean the caller's input was
// wrong, not that the operation failed.
var inputErrors = []error{
	helm.ErrInvalid, helm.ErrMissingWho, helm.ErrNoVoyage, helm.ErrAmbiguous,
	helm.ErrNoSuchBearing, helm.ErrNotOnSlate, helm.ErrNoArtifact, helm.ErrNotUndoable,
	marks.ErrInvalid, actions.ErrInvalid,
}

// Code is the exit status of err: 0 success, 1 the operation failed and
// nothing was recorded, 2 bad usage or input, 3 recorded but what was
// observed or done reported a failure (a failed observation, an action
// git or gh refused), 4 refused by a guard rule (the refusal recorded,
// nothing done), 130 interrupted by a signal.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var ie *InterruptedError
	if errors.As(err, &ie) {
		return Interrupted
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return Usage
	}
	var of *ObservedFailures
	if errors.As(err, &of) {
		return Recorded
	}
	if errors.Is(err, helm.ErrRefused) || errors.Is(err, helm.ErrNeedsConfirmation) {
		return Refused
	}
	var ae *helm.ActionError
	if errors.As(err, &ae) && !errors.Is(err, actions.ErrInvalid) {
		if helm.HintOf(err).Kind == hint.CheckWorld {
			return Failed // its outcome could not be recorded
		}
		return Recorded // the world refused, and the failure is recorded
	}
	for _, target := range inputErrors {
		if errors.Is(err, target) {
			return Usage
		}
	}
	return Failed
}

// Message is the error's text; a failed git or gh call is shown with the
// program's own message on lines of its own.
func Message(err error) string {
	var ie *InterruptedError
	if errors.As(err, &ie) {
		if errors.Is(ie.Err, context.Canceled) {
			return "interrupted"
		}
		// Something else ended the command as the signal came (a git
		// killed mid-way, recorded as a failed action): say it too.
		return "interrupted: " + Message(ie.Err)
	}
	var ae *helm.ActionError
	var ve *helm.VoyageError
	if errors.As(err, &ae) && errors.As(err, &ve) {
		var xe *runner.ExitError
		if errors.As(ae.Err, &xe) {
			msg := fmt.Sprintf("%s failed on voyage %s (recorded as a failed action): %s exited with status %d",
				ae.Kind, short(ve.Voyage), xe.Cmd, xe.ExitCode)
			if m := strings.TrimSpace(xe.Message()); m != "" {
				msg += "\n" + m
			}
			return msg
		}
		return fmt.Sprintf("%s failed on voyage %s (recorded as a failed action): %v", ae.Kind, short(ve.Voyage), ae.Err)
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted: " + err.Error()
	}
	return err.Error()
}

// short is the first 8 characters of an id: what people type and read.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
