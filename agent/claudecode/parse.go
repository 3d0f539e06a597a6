package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
)

// MaxPayload bounds one hook payload (8 MiB): a larger one is an error
// naming the limit.
const MaxPayload = hookio.MaxPayload

// ErrUnknownEvent is a payload whose hook_event_name names no event
// helm reads. Recording fails open on it; a decision fails closed.
var ErrUnknownEvent = errors.New("unknown Claude Code hook event")

// events maps Claude Code's event names to helm's kinds, in the order
// the hooks are installed.
var events = []struct {
	name    string
	kind    agent.Kind
	matcher string // "*" where the event has matchers
}{
	{"SessionStart", agent.SessionStart, "*"},
	{"UserPromptSubmit", agent.Prompt, ""},
	{"PreToolUse", agent.PreTool, "*"},
	{"PermissionRequest", agent.Permission, "*"},
	{"PermissionDenied", agent.Permission, "*"},
	{"PostToolUse", agent.PostTool, "*"},
	{"PostToolUseFailure", agent.PostTool, "*"},
	{"Notification", agent.Notification, "*"},
	{"PreCompact", agent.Compaction, "*"},
	{"SubagentStart", agent.SubagentStart, "*"},
	{"SubagentStop", agent.SubagentStop, "*"},
	{"Stop", agent.Stop, ""},
	{"SessionEnd", agent.SessionEnd, "*"},
}

// Events are the names of the hook events helm reads and installs.
func Events() []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

// payload is every field of every event helm reads; each event sets
// its own.
type payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
	AgentID        string `json:"agent_id"`
	AgentType      string `json:"agent_type"`

	Source string `json:"source"` // SessionStart
	Model  string `json:"model"`
	Prompt string `json:"prompt"` // UserPromptSubmit

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
	DurationMS   *float64        `json:"duration_ms"`
	Error        json.RawMessage `json:"error"`        // PostToolUseFailure
	IsInterrupt  bool            `json:"is_interrupt"` // PostToolUseFailure
	Reason       string          `json:"reason"`       // PermissionDenied, SessionEnd

	Message          string `json:"message"` // Notification
	Title            string `json:"title"`
	NotificationType string `json:"notification_type"`

	Trigger string `json:"trigger"` // PreCompact

	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// Parse reads one hook payload from r (at most MaxPayload bytes) into an
// Event. Agent is "claude-code"; Project and At are left for the caller
// (Claude Code names the project in $CLAUDE_PROJECT_DIR, not in the
// payload, and sends no time). Every event needs its session_id, and a
// tool event its tool_name; an unknown event is ErrUnknownEvent.
func Parse(r io.Reader) (agent.Event, error) {
	var p payload
	if err := hookio.Read(r, "Claude Code", &p); err != nil {
		return agent.Event{}, err
	}
	kind, ok := kindOf(p.HookEventName)
	if !ok {
		if p.HookEventName == "" {
			return agent.Event{}, fmt.Errorf("read the Claude Code hook payload: no hook_event_name")
		}
		return agent.Event{}, fmt.Errorf("%w %q", ErrUnknownEvent, p.HookEventName)
	}
	if p.SessionID == "" {
		return agent.Event{}, fmt.Errorf("read the Claude Code %s payload: no session_id", p.HookEventName)
	}
	ev := agent.Event{
		Agent: Agent, Kind: kind, Session: p.SessionID,
		Subagent: p.AgentID, SubagentType: p.AgentType,
		Cwd: p.Cwd, Transcript: p.TranscriptPath,
	}
	switch p.HookEventName {
	case "SessionStart":
		ev.Text = p.Source
	case "UserPromptSubmit":
		ev.Text = p.Prompt
	case "Notification":
		ev.Text = p.Message
		if p.Title != "" && p.Title != p.Message {
			ev.Text = p.Title + ": " + p.Message
		}
	case "PreCompact":
		ev.Text = p.Trigger
	case "SubagentStop":
		ev.Text, ev.StopActive = p.LastAssistantMessage, p.StopHookActive
	case "Stop":
		ev.Text, ev.StopActive = p.LastAssistantMessage, p.StopHookActive
	case "SessionEnd":
		ev.Text = p.Reason
	case "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure":
		if p.ToolName == "" {
			return agent.Event{}, fmt.Errorf("read the Claude Code %s payload: no tool_name", p.HookEventName)
		}
		input, err := hookio.Object(p.ToolInput, "tool_input")
		if err != nil {
			return agent.Event{}, fmt.Errorf("read the Claude Code %s payload: %w", p.HookEventName, err)
		}
		tc := &agent.ToolCall{ID: p.ToolUseID, Name: p.ToolName, Input: input, Response: hookio.Raw(p.ToolResponse)}
		if p.DurationMS != nil && *p.DurationMS > 0 {
			tc.Duration = time.Duration(*p.DurationMS * float64(time.Millisecond))
		}
		switch p.HookEventName {
		case "PostToolUseFailure":
			tc.Failed, tc.Error = true, hookio.JSONText(p.Error)
			if p.IsInterrupt && tc.Error == "" {
				tc.Error = "interrupted"
			}
		case "PermissionDenied":
			tc.Failed, tc.Error = true, p.Reason
		case "PostToolUse":
			tc.Failed, tc.Error = responseFailed(tc.Response)
		}
		ev.Tool = tc
	}
	return ev, nil
}

func kindOf(name string) (agent.Kind, bool) {
	for _, e := range events {
		if e.name == name {
			return e.kind, true
		}
	}
	return "", false
}

// responseFailed reads a failure a tool reported in a response Claude
// Code still sent to PostToolUse: is_error, or an interrupted command.
func responseFailed(resp json.RawMessage) (bool, string) {
	var r struct {
		IsError     bool            `json:"is_error"`
		Interrupted bool            `json:"interrupted"`
		Error       json.RawMessage `json:"error"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return false, ""
	}
	switch {
	case r.IsError:
		return true, hookio.JSONText(r.Error)
	case r.Interrupted:
		return true, "interrupted"
	}
	return false, ""
}

// isDenied says ev is Claude Code's own denial (PermissionDenied): a
// Permission event whose call already failed. It is recorded, not
// decided.
func isDenied(ev agent.Event) bool {
	return ev.Kind == agent.Permission && ev.Tool != nil && ev.Tool.Failed
}
