package gemini

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
var ErrUnknownEvent = errors.New("unknown Gemini CLI hook event")

var events = []struct {
	name    string
	kind    agent.Kind
	matcher string
}{
	{"SessionStart", agent.SessionStart, ""},
	{"BeforeAgent", agent.Prompt, ""},
	{"BeforeTool", agent.PreTool, "*"},
	{"AfterTool", agent.PostTool, "*"},
	{"Notification", agent.Notification, ""},
	{"PreCompress", agent.Compaction, ""},
	{"AfterAgent", agent.Stop, ""},
	{"SessionEnd", agent.SessionEnd, ""},
}

// Events are the names of the hook events helm reads and installs.
func Events() []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

type payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Timestamp      string `json:"timestamp"`

	Source string `json:"source"` // SessionStart
	Reason string `json:"reason"` // SessionEnd

	Prompt         string `json:"prompt"`          // BeforeAgent, AfterAgent
	PromptResponse string `json:"prompt_response"` // AfterAgent
	StopHookActive bool   `json:"stop_hook_active"`

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`

	NotificationType string `json:"notification_type"`
	Message          string `json:"message"`

	Trigger string `json:"trigger"` // PreCompress
}

// Parse reads one hook payload from r (at most MaxPayload bytes) into an
// Event: Agent "gemini-cli", At from the payload's timestamp. Every
// event needs its session_id, and a tool event its tool_name; an event
// helm does not read is ErrUnknownEvent. Gemini CLI sends no tool call
// id: a call's result is tied to its call by the caller.
func Parse(r io.Reader) (agent.Event, error) {
	var p payload
	if err := hookio.Read(r, "Gemini CLI", &p); err != nil {
		return agent.Event{}, err
	}
	kind, ok := kindOf(p.HookEventName)
	if !ok {
		if p.HookEventName == "" {
			return agent.Event{}, fmt.Errorf("read the Gemini CLI hook payload: no hook_event_name")
		}
		return agent.Event{}, fmt.Errorf("%w %q", ErrUnknownEvent, p.HookEventName)
	}
	if p.SessionID == "" {
		return agent.Event{}, fmt.Errorf("read the Gemini CLI %s payload: no session_id", p.HookEventName)
	}
	ev := agent.Event{Agent: Agent, Kind: kind, Session: p.SessionID, Cwd: p.Cwd, Transcript: p.TranscriptPath}
	if p.Timestamp != "" {
		at, err := time.Parse(time.RFC3339Nano, p.Timestamp)
		if err != nil {
			return agent.Event{}, fmt.Errorf("read the Gemini CLI %s payload: timestamp %q is not ISO 8601", p.HookEventName, p.Timestamp)
		}
		ev.At = at
	}
	switch p.HookEventName {
	case "SessionStart":
		ev.Text = p.Source
	case "SessionEnd":
		ev.Text = p.Reason
	case "BeforeAgent":
		ev.Text = p.Prompt
	case "AfterAgent":
		ev.Text, ev.StopActive = p.PromptResponse, p.StopHookActive
	case "Notification":
		ev.Text = p.Message
	case "PreCompress":
		ev.Text = p.Trigger
	case "BeforeTool", "AfterTool":
		if p.ToolName == "" {
			return agent.Event{}, fmt.Errorf("read the Gemini CLI %s payload: no tool_name", p.HookEventName)
		}
		input, err := hookio.Object(p.ToolInput, "tool_input")
		if err != nil {
			return agent.Event{}, fmt.Errorf("read the Gemini CLI %s payload: %w", p.HookEventName, err)
		}
		tc := &agent.ToolCall{Name: p.ToolName, Input: input, Response: hookio.Raw(p.ToolResponse)}
		if tc.Response != nil {
			tc.Error = responseError(tc.Response)
			tc.Failed = tc.Error != ""
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

// responseError is the error a tool response carries: a string, or an
// object's message.
func responseError(resp json.RawMessage) string {
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(resp, &r) != nil || hookio.Raw(r.Error) == nil {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	if s := hookio.JSONText(r.Error); s != "" && s != "{}" && s != "false" {
		return s
	}
	return ""
}
