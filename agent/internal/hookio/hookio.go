// Package hookio holds what every host adapter does the same way: read
// one hook payload with a bound, decode it strictly, and turn an event
// into the step a person reads. What differs by host (field names, tool
// names, answers) stays in the host's package.
package hookio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/logbook"
)

// MaxPayload bounds one hook payload: 8 MiB holds a Write of a large
// file or a long tool response, and keeps a hostile or broken host from
// making the hook read without end.
const MaxPayload = 8 << 20

// Read reads one payload of at most MaxPayload bytes from r and decodes
// it into v: one JSON object, nothing after it. host names the host in
// errors ("Claude Code").
func Read(r io.Reader, host string, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return fmt.Errorf("read the %s hook payload: %w", host, err)
	}
	if len(data) > MaxPayload {
		return fmt.Errorf("read the %s hook payload: larger than the limit of %d bytes (8 MiB)", host, MaxPayload)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("read the %s hook payload: not a JSON object", host)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read the %s hook payload: %w", host, err)
	}
	return nil
}

// Object returns raw when it is a JSON object, nil when it is absent or
// null, and an error otherwise: tool inputs are objects.
func Object(raw json.RawMessage, field string) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, fmt.Errorf("%s is not a JSON object", field)
	}
	return compact(t), nil
}

// compact is raw without insignificant space: the form inputs and
// responses are kept in, whatever the host's layout.
func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Raw returns raw compacted, nil when absent or null.
func Raw(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	return compact(t)
}

// Tools is what a host's adapter knows of its tools: the text a person
// reads of a call, and of its response.
type Tools interface {
	Text(name string, input json.RawMessage) string
	Result(tc *agent.ToolCall) string
}

// Step is the step a person reads of ev.
func Step(ev agent.Event, tools Tools) logbook.Step {
	s := logbook.Step{Agent: ev.Agent, Session: ev.Session, Usage: ev.Usage}
	switch ev.Kind {
	case agent.SessionStart:
		s.Kind, s.Text = logbook.StepSession, ev.Text
	case agent.SessionEnd:
		// A session step with a Result is the session's end.
		s.Kind, s.Text, s.Result = logbook.StepSession, ev.Text, &logbook.StepResult{}
	case agent.Prompt:
		s.Kind, s.Text = logbook.StepPrompt, ev.Text
	case agent.Notification:
		s.Kind, s.Text = logbook.StepNotification, ev.Text
	case agent.Compaction:
		s.Kind, s.Text = logbook.StepCompaction, ev.Text
	case agent.SubagentStart:
		// A subagent step's ID is the host's id of the subagent.
		s.Kind, s.ID, s.Text = logbook.StepSubagent, ev.Subagent, ev.SubagentType
	case agent.SubagentStop:
		// A subagent step with a Result is its end: its last message.
		s.Kind, s.ID, s.Text, s.Result = logbook.StepSubagent, ev.Subagent, ev.SubagentType, &logbook.StepResult{Output: ev.Text}
	case agent.Stop:
		s.Kind, s.Text = logbook.StepMessage, ev.Text
	case agent.PreTool, agent.PostTool, agent.Permission:
		s.Kind = logbook.StepTool
		if ev.Kind == agent.Permission {
			s.Kind = logbook.StepPermission
		}
		if tc := ev.Tool; tc != nil {
			s.ID, s.Tool, s.Input = tc.ID, tc.Name, tc.Input
			s.Text = tools.Text(tc.Name, tc.Input)
			switch {
			case ev.Kind == agent.PostTool:
				s.Result = &logbook.StepResult{Output: tools.Result(tc), Failed: tc.Failed, Duration: tc.Duration}
			case ev.Kind == agent.Permission && tc.Failed:
				// The host denied it itself (no rule of helm's).
				s.Decision = &logbook.StepDecision{Verdict: agent.Deny, Reason: tc.Error}
			}
		}
	default:
		s.Kind, s.Text = logbook.StepNotification, ev.Text
	}
	return s
}

// Fields returns the string fields of a tool input object, by name.
func Fields(input json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(input, &m) // a missing or odd input has no fields
	return m
}

// Str is field name of m as text: a string as it is, a number or bool
// as JSON, "" when absent.
func Str(m map[string]any, name string) string {
	switch v := m[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// JSONText is raw as a person reads it: a JSON string's text, anything
// else as compact JSON.
func JSONText(raw json.RawMessage) string {
	raw = Raw(raw)
	if raw == nil {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// Head returns the first n lines of s, and a line saying how many were
// left out.
func Head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return s
	}
	out := strings.Join(lines[:n], "")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + fmt.Sprintf("… %d more lines\n", len(lines)-n)
}

// Answer encodes a host's answer: v as one line of JSON, without HTML
// escapes.
func Answer(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("hookio: encode %T: %v", v, err)) // the adapters' own answer types always encode
	}
	return b.Bytes()
}
