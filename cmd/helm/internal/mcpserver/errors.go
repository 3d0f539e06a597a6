package mcpserver

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/runner"
)

// A tool's failure is a tool error (a result marked as an error), never a
// protocol error: it says what failed and where, as the command line
// says it, what to do in tools' words, and the exit status the command
// line would have given.

// ToolError is an error as a tool's result carries it: what failed and
// where (as the command line says it), what to do (in tools' words) and
// the exit status the command line would have given.
type ToolError struct {
	Error      string `json:"error"`
	Try        string `json:"try,omitempty"`
	ExitStatus int    `json:"exit_status"`
}

// exitMeanings say what each exit status means to a tool's caller.
var exitMeanings = map[int]string{
	exit.Failed:      "exit status 1: the operation failed",
	exit.Usage:       "exit status 2: bad input; change the arguments",
	exit.Recorded:    "exit status 3: recorded, but what was done reported a failure; look before retrying",
	exit.Refused:     "exit status 4: refused by a guard rule; the refusal is recorded and nothing was done: retrying will not help",
	exit.Interrupted: "exit status 130: interrupted",
}

func toolErrorResult(err error) *mcp.CallToolResult {
	// Escaped as the command line prints them: a host shows them in a
	// terminal.
	te := ToolError{Error: safetext.Block(exit.Message(err), ""), Try: safetext.Line(toolHint(err)), ExitStatus: exit.Code(err)}
	text := "helm: " + te.Error
	if te.Try != "" {
		text += "\nTry: " + te.Try
	}
	text += "\n(" + exitMeanings[te.ExitStatus] + ")"
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: te}
}

// ConfirmHint is what to do about an action a guard rule lets run only
// when a person confirms it: over MCP, nobody can.
const ConfirmHint = "a guard rule lets this run only when a person confirms it, and no person is at the keyboard of an MCP server: ask the person you work for to run it themselves with helm ... --yes, or to change the rule"

// toolHint is what to do about err, in the words of a tool's caller: the
// tool to call, the argument to give, or what a person must do.
func toolHint(err error) string {
	var ue *exit.UsageError
	if errors.As(err, &ue) && ue.Tool != "" {
		return ue.Tool
	}
	var h *exit.Hinted
	if errors.As(err, &h) && h.Tool != "" {
		return h.Tool
	}
	var nl *runner.NotLoggedInError
	if errors.As(err, &nl) {
		return "a person logs " + nl.Identity + " in to GitHub: helm auth login --as " + nl.Identity
	}
	var xe *runner.ExitError
	if errors.As(err, &xe) {
		return "" // the program's own message says what to do
	}
	lh := helm.HintOf(err)
	if w, ok := exit.WordsFor(err, lh.Kind); ok {
		return w.Tool
	}
	switch lh.Kind {
	case hint.Verify:
		if id := exit.DamagedVoyage(err); id != "" {
			return "a person checks the voyage: helm --voyage " + id + " voyage verify"
		}
		return "a person checks the voyage: helm voyage verify"
	case hint.Confirm:
		return ConfirmHint
	}
	return lh.Text
}

// resultTextOf is the text of a tool's result.
func resultTextOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
