package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1   // the operation failed, and nothing was recorded
	exitUsage       = 2   // bad usage or input
	exitRecorded    = 3   // recorded, but what was observed or done reported a failure: not to be retried blindly
	exitRefused     = 4   // refused by a guard rule: the refusal is recorded, nothing was done; retrying will not help
	exitInterrupted = 130 // a signal (Ctrl-C, SIGTERM) interrupted the command: 128 + SIGINT, as shells report it
)

// observedFailures is an observation recorded whose sighting reports
// failures (a file not there, a non-zero exit, an HTTP error): each is a
// "helm: observed, but ..." line, and the status is 3.
type observedFailures struct {
	Failures []helm.Failure
}

func (e *observedFailures) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Message
	}
	return "observed, but " + strings.Join(msgs, "; ")
}

// usageError is bad usage: a missing argument, an unknown flag, a value
// that cannot be. It exits 2, and its Hint is printed as "Try: ...".
type usageError struct {
	Err  error
	Hint string
	// Tool is the hint in the MCP server's words (a tool to call, an
	// argument to give), when the error can reach a tool's caller;
	// empty, the server gives the library's hint, if any.
	Tool string
}

func (e *usageError) Error() string { return e.Err.Error() }
func (e *usageError) Unwrap() error { return e.Err }

// usageErrorf returns a usage error whose hint is command c's --help.
func usageErrorf(c *cobra.Command, format string, args ...any) error {
	return &usageError{Err: fmt.Errorf(format, args...), Hint: "helm " + commandWords(c) + "--help"}
}

// hinted attaches a "Try: ..." hint to an error without changing its exit
// status.
type hinted struct {
	Err  error
	Hint string
	Tool string // as usageError's
}

func (e *hinted) Error() string { return e.Err.Error() }
func (e *hinted) Unwrap() error { return e.Err }

// damagedError is a verify that found damage: the report is printed
// already, the status is 1.
type damagedError struct{ Voyage string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("voyage %s is damaged (the problems are listed above)", e.Voyage)
}

// interruptedError is a command that a signal interrupted before it
// ended. The voyage is consistent: a change is recorded whole or not at
// all, and an action already performed has its outcome recorded.
type interruptedError struct {
	Signal error // what context.Cause says: "interrupt signal received"
	Err    error // what the command returned
}

func (e *interruptedError) Error() string { return "interrupted: " + e.Err.Error() }
func (e *interruptedError) Unwrap() error { return e.Err }

// interrupted wraps err, the command's error, when sigCtx — the context
// main cancels on SIGINT and SIGTERM — was cancelled by a signal while the
// command ran. Call it before stopping sigCtx.
func interrupted(sigCtx context.Context, err error) error {
	if err == nil || sigCtx.Err() == nil {
		return err
	}
	return &interruptedError{Signal: context.Cause(sigCtx), Err: err}
}

// inputErrors are the library's errors that mean the caller's input was
// wrong, not that the operation failed.
var inputErrors = []error{
	helm.ErrInvalid, helm.ErrMissingWho, helm.ErrNoVoyage, helm.ErrAmbiguous,
	helm.ErrNoSuchBearing, helm.ErrNotOnSlate, helm.ErrNoArtifact, helm.ErrNotUndoable,
	marks.ErrInvalid, actions.ErrInvalid,
}

// ExitCode maps an error returned by Main.Run to the process's exit status:
// 0 success, 1 the operation failed and nothing was recorded, 2 bad usage
// or input, 3 recorded but what was observed or done reported a failure
// (a failed observation, an action git or gh refused), 4 refused by a
// guard rule (the refusal recorded, nothing done), 130 interrupted by a
// signal.
func ExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ie *interruptedError
	if errors.As(err, &ie) {
		return exitInterrupted
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var of *observedFailures
	if errors.As(err, &of) {
		return exitRecorded
	}
	if errors.Is(err, helm.ErrRefused) || errors.Is(err, helm.ErrNeedsConfirmation) {
		return exitRefused
	}
	var ae *helm.ActionError
	if errors.As(err, &ae) && !errors.Is(err, actions.ErrInvalid) {
		if helm.HintOf(err).Kind == helm.HintCheckWorld {
			return exitFailed // its outcome could not be recorded
		}
		return exitRecorded // the world refused, and the failure is recorded
	}
	for _, target := range inputErrors {
		if errors.Is(err, target) {
			return exitUsage
		}
	}
	return exitFailed
}

// ReportError prints err as "helm: what failed" with a "Try: ..." line
// where one helps, and returns the exit status. An interrupted command is
// one line, "helm: interrupted"; an observation recorded with failures is
// a "helm: observed, but ..." line for each. Errors quote what callers
// and the world wrote (file names, git's messages), so they are escaped
// for the terminal as every output is; their line breaks stay.
func ReportError(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var of *observedFailures
	if errors.As(err, &of) && !errors.As(err, new(*interruptedError)) {
		for _, f := range of.Failures {
			fmt.Fprintf(w, "helm: observed, but %s\n", printable(f.Message))
		}
		return ExitCode(err)
	}
	fmt.Fprintf(w, "helm: %s\n", block(message(err), ""))
	if h := hint(err); h != "" {
		fmt.Fprintf(w, "Try: %s\n", printable(h))
	}
	return ExitCode(err)
}

// message is the error's text; a failed git or gh call is shown with the
// program's own message on lines of its own.
func message(err error) string {
	var ie *interruptedError
	if errors.As(err, &ie) {
		if errors.Is(ie.Err, context.Canceled) {
			return "interrupted"
		}
		// Something else ended the command as the signal came (a git
		// killed mid-way, recorded as a failed action): say it too.
		return "interrupted: " + message(ie.Err)
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

func hint(err error) string {
	var ie *interruptedError
	if errors.As(err, &ie) {
		return ""
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return ue.Hint
	}
	var h *hinted
	if errors.As(err, &h) {
		return h.Hint
	}
	var nl *runner.NotLoggedInError
	if errors.As(err, &nl) {
		return libraryHint(err, nil)
	}
	var xe *runner.ExitError
	if errors.As(err, &xe) {
		return "" // the program's own message says what to do
	}
	return libraryHint(err, nil)
}

// libraryHint renders the library's hint for err (data: a kind and a
// text) as a command line, prefixed with globals: the global flags the
// user gave (--home DIR, --voyage ID, ...), so that the line runs where
// the failed command ran. A kind the CLI has no command for keeps the
// library's text.
func libraryHint(err error, globals []string) string {
	lh := helm.HintOf(err)
	var nl *runner.NotLoggedInError
	if errors.As(err, &nl) {
		lh = helm.Hint{Kind: "login"}
	}
	helmWith := func(drop string, rest string) string {
		var kept []string
		for i := 0; i < len(globals); i += 2 {
			if globals[i] != drop {
				kept = append(kept, globals[i], globals[i+1])
			}
		}
		if len(kept) == 0 {
			return "helm " + rest
		}
		return "helm " + commandLine(kept) + " " + rest
	}
	if w, ok := wordsFor(err, lh.Kind); ok {
		return helmWith(w.drop, w.cli)
	}
	switch lh.Kind {
	case "":
		return ""
	case "login":
		return helmWith("--as", "auth login --as "+nl.Identity)
	case helm.HintVerify:
		if id := damagedVoyage(err); id != "" {
			return helmWith("--voyage", "--voyage "+id+" voyage verify")
		}
		return helmWith("", "voyage verify")
	case helm.HintConfirm:
		return "the same command with --yes, once a person has agreed to it"
	}
	return lh.Text
}

// hintWording is how the CLI and the MCP server say a hint.
type hintWording struct{ drop, cli, tool string }

// wordsFor returns the renderings of err's hint, of kind k: hintWords',
// but for an entry that cannot be undone, which reads the logbook for
// another reason than a bearing's number.
func wordsFor(err error, k helm.HintKind) (hintWording, bool) {
	if k == helm.HintReadLogbook && errors.Is(err, helm.ErrNotUndoable) {
		return hintWording{"", "log, to see which actions were performed and which were undone", "call log, to see which actions were performed and which were undone"}, true
	}
	w, ok := hintWords[k]
	return w, ok
}

// hintWords are the two renderings of a library hint's kind that need
// nothing from the error: the command line's (helm CLI, keeping the
// global flags given but drop) and the MCP server's (tool).
var hintWords = map[helm.HintKind]hintWording{
	helm.HintObserve:       {"", "observe KIND ... first, or pass --observation FILE", "call observe first, or give bearing_take observation_files"},
	helm.HintStartVoyage:   {"--voyage", `voyage new "INTENT" to start another voyage`, "call voyage_start to start another voyage"},
	helm.HintReadLogbook:   {"", "log, to see the bearings' numbers", "call log, to see the bearings' numbers"},
	helm.HintReadSlate:     {"", "slate list", "call slate_list"},
	helm.HintListVoyages:   {"--voyage", "voyage list --status all", "call voyage_list with status all"},
	helm.HintListArtifacts: {"", "voyage show, to see the artifacts", "call artifact_list"},
	helm.HintResume:        {"", "voyage resume --reason TEXT, to go on with it", "call voyage_resume with a reason, to go on with it"},
	helm.HintReopen:        {"", "log, to see whether the change was recorded, before retrying", "call log, to see whether the change was recorded, before retrying"},
}

// damagedVoyage is the short id of the voyage a damage error names, or "".
func damagedVoyage(err error) string {
	var ve *helm.VoyageError
	var de *helm.DamageError
	if errors.As(err, &ve) && ve.Voyage != "" {
		return short(ve.Voyage)
	} else if errors.As(err, &de) && de.Voyage != "" {
		return short(de.Voyage)
	}
	return ""
}

// withGlobals gives err, when its hint is the library's, a Try: line that
// keeps the global flags of args (the user's command line).
func withGlobals(err error, root *cobra.Command) error {
	var nl *runner.NotLoggedInError
	if err == nil || (helm.HintOf(err).Kind == "" && !errors.As(err, &nl)) {
		return err
	}
	var ue *usageError
	var h *hinted
	if errors.As(err, &ue) || errors.As(err, &h) {
		return err
	}
	globals := givenGlobals(root)
	if len(globals) == 0 {
		return err
	}
	return &hinted{Err: err, Hint: libraryHint(err, globals)}
}

// givenGlobals returns the global flags that take a value and were given
// on the command line, as name-value pairs: ["--home", "/h", "--voyage",
// "d90"]. Values come as parsed, so "--home=/h" and "--home /h" read the
// same.
func givenGlobals(root *cobra.Command) []string {
	var out []string
	for _, name := range []string{"home", "store", "voyage", "as", "role", "method"} {
		f := root.PersistentFlags().Lookup(name)
		if f != nil && f.Changed {
			out = append(out, "--"+name, f.Value.String())
		}
	}
	return out
}

// short is the first 8 characters of an id: what people type and read.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
