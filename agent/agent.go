// Package agent is the one event model for the agent hosts helm records
// at their own tool boundary (Claude Code, Gemini CLI, ...): what a hook
// reports, whatever the host. Each host has an adapter (a subpackage)
// that reads its hook payloads and session logs into Events and writes
// the guard's decisions back in the host's own form.
//
// The root package never imports this one: a program that embeds helm
// pays nothing for the adapters.
package agent

import (
	"encoding/json"
	"time"

	"github.com/helmlog/helm/logbook"
)

// Kind names a hook event, whatever the host calls it.
type Kind string

// Event kinds.
const (
	SessionStart  Kind = "session-start"  // Text: the source (startup, resume, clear, compact)
	Prompt        Kind = "prompt"         // Text: the prompt
	PreTool       Kind = "pre-tool"       // Tool: the call about to run; answered with a Decision
	PostTool      Kind = "post-tool"      // Tool: the call and its response
	Permission    Kind = "permission"     // Tool: the call the host asks permission for; answered with a Decision
	Notification  Kind = "notification"   // Text: the message
	Compaction    Kind = "compaction"     // Text: the trigger (manual, auto)
	SubagentStart Kind = "subagent-start" // Subagent, SubagentType
	SubagentStop  Kind = "subagent-stop"  // Subagent, SubagentType; answered with a Decision (a gate may hold it)
	Stop          Kind = "stop"           // Text: the last message; answered with a Decision (a gate may hold it)
	SessionEnd    Kind = "session-end"    // Text: the reason
)

// Event is one hook event. Session is the host's session id; Subagent
// the id of the subagent it came from ("" for the main agent). Cwd is
// the directory the agent works in and Project the project's top
// directory when the host names it. Transcript is the path of the
// session's own log, where the host names it.
type Event struct {
	Agent        string
	Kind         Kind
	Session      string
	Subagent     string
	SubagentType string
	Cwd          string
	Project      string
	Transcript   string
	Tool         *ToolCall
	Text         string
	// StopActive says the agent is already continuing because a Stop
	// gate held it (Claude Code's stop_hook_active).
	StopActive bool
	At         time.Time
	Usage      *logbook.Usage
}

// ToolCall is a tool call as the host reports it: the host's id for it,
// the tool's name, its input, and after it ran its response and whether
// it failed.
type ToolCall struct {
	ID       string
	Name     string
	Input    json.RawMessage
	Response json.RawMessage
	Failed   bool
	Error    string
	Duration time.Duration
}

// Decision is the answer to an event that takes one (PreTool,
// Permission, Stop, SubagentStop): logbook's verdicts allow, deny, ask
// and, for a gate, block; Reason is shown to the agent.
type Decision = logbook.StepDecision

// Verdicts.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
	Block = "block"
)
