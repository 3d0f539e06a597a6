package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/runner"
)

// Exit statuses, the errors that carry them and their hints: package
// exit's, which the MCP server shares. The command files name them so.
const (
	exitOK          = exit.OK
	exitFailed      = exit.Failed
	exitUsage       = exit.Usage
	exitRecorded    = exit.Recorded
	exitRefused     = exit.Refused
	exitInterrupted = exit.Interrupted
)

type (
	observedFailures = exit.ObservedFailures
	usageError       = exit.UsageError
	hinted           = exit.Hinted
	interruptedError = exit.InterruptedError
)

// usageErrorf returns a usage error whose hint is command c's --help.
func usageErrorf(c *cobra.Command, format string, args ...any) error {
	return &usageError{Err: fmt.Errorf(format, args...), Hint: "helm " + commandWords(c) + "--help"}
}

// damagedError is a verify that found damage: the report is printed
// already, the status is 1.
type damagedError struct{ Voyage string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("voyage %s is damaged (the problems are listed above)", e.Voyage)
}

// interrupted wraps err, the command's error, when sigCtx — the context
// main cancels on SIGINT and SIGTERM — was cancelled by a signal while the
// command ran. Call it before stopping sigCtx.
func interrupted(sigCtx context.Context, err error) error {
	if err == nil || sigCtx.Err() == nil {
		return err
	}
	return &interruptedError{Signal: context.Cause(sigCtx), Err: err}
}

// ExitCode maps an error returned by Main.Run to the process's exit
// status (see exit.Code).
func ExitCode(err error) int { return exit.Code(err) }

// ReportError prints err as "helm: what failed" with a "Try: ..." line
// where one helps, and returns the exit status. An interrupted command is
// one line, "helm: interrupted"; an observation recorded with failures is
// a "helm: observed, but ..." line for each. Errors quote what callers
// and the world wrote (file names, git's messages), so they are escaped
// for the terminal as every output is; their line breaks stay.
//
// Under --json (Run wraps the error so), the error is one JSON object
// instead, the shape the MCP server's errors have: {"error": ..., "try":
// ..., "exit_status": N}; an observation's failures are its "failures".
func ReportError(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var je *jsonError
	if errors.As(err, &je) {
		return reportJSON(w, je.Err)
	}
	var of *observedFailures
	if errors.As(err, &of) && !errors.As(err, new(*interruptedError)) {
		for _, f := range of.Failures {
			fmt.Fprintf(w, "helm: observed, but %s\n", printable(f.Message))
		}
		if of.Erase != "" {
			fmt.Fprintf(w, "Try: %s%s\n", printable(of.Erase), eraseWhy)
		}
		return ExitCode(err)
	}
	fmt.Fprintf(w, "helm: %s\n", safetext.Text(exit.Message(err), ""))
	if h := tryLine(err); h != "" {
		fmt.Fprintf(w, "Try: %s\n", printable(h))
	}
	return ExitCode(err)
}

// eraseWhy follows the command line that erases a failed observation.
const eraseWhy = " (to take it off the slate; a bearing seals it otherwise)"

func tryLine(err error) string {
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
		lh = hint.Hint{Kind: "login"}
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
	if w, ok := exit.WordsFor(err, lh.Kind); ok {
		return helmWith(w.Drop, w.CLI)
	}
	switch lh.Kind {
	case "":
		return ""
	case "login":
		return helmWith("--as", "auth login --as "+nl.Identity)
	case hint.Verify:
		if id := exit.DamagedVoyage(err); id != "" {
			return helmWith("--voyage", "--voyage "+id+" voyage verify")
		}
		return helmWith("", "voyage verify")
	case hint.Confirm:
		return "the same command with --yes, once a person has agreed to it"
	}
	return lh.Text
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
func short(id string) string { return view.Short(id) }

// jsonError is an error of a command run with --json: ReportError writes
// it as one JSON object.
type jsonError struct{ Err error }

func (e *jsonError) Error() string { return e.Err.Error() }
func (e *jsonError) Unwrap() error { return e.Err }

// errorObject is an error under --json: what failed, what to do, the exit
// status; an observation recorded with failures lists them.
type errorObject struct {
	Error      string   `json:"error"`
	Try        string   `json:"try,omitempty"`
	ExitStatus int      `json:"exit_status"`
	Failures   []string `json:"failures,omitempty"`
}

func reportJSON(w io.Writer, err error) int {
	o := errorObject{Error: exit.Message(err), Try: tryLine(err), ExitStatus: ExitCode(err)}
	var of *observedFailures
	if errors.As(err, &of) && !errors.As(err, new(*interruptedError)) {
		for _, f := range of.Failures {
			o.Failures = append(o.Failures, f.Message)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(o) // an error that cannot be written has no one to tell
	return o.ExitStatus
}
