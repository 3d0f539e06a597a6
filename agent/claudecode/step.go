package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
	"github.com/helmlog/helm/agent/udiff"
	"github.com/helmlog/helm/logbook"
)

// writeHead is how many lines of a Write's content its step shows.
const writeHead = 20

// StepOf is the step a person reads of ev: its kind, and for a tool call
// the text of the call (Bash: the command; Read: the path and range;
// Edit, MultiEdit: a unified diff; Write: the path, size and first
// lines; WebFetch: the URL; WebSearch: the query; Grep, Glob: the
// pattern and path; Agent, Task: the subagent's description; mcp__*: the
// server, tool and input) and, after it ran, its result. The Voyage of a
// subagent step is the caller's. A prompt that is Claude Code's own
// <task-notification> (a background subagent is done) is a notification.
func StepOf(ev agent.Event) logbook.Step {
	s := hookio.Step(ev, tools{})
	if ev.Kind == agent.Prompt && strings.HasPrefix(strings.TrimSpace(ev.Text), taskNotification) {
		s.Kind = logbook.StepNotification
	}
	return s
}

// taskNotification opens the prompt Claude Code submits itself when a
// subagent that ran in the background is done: no person typed it, so
// its step is a notification, not a prompt.
const taskNotification = "<task-notification>"

type tools struct{}

func (tools) Text(name string, input json.RawMessage) string {
	f := hookio.Fields(input)
	s := func(k string) string { return hookio.Str(f, k) }
	switch name {
	case "Bash":
		if d := s("description"); d != "" {
			return s("command") + "\n# " + d
		}
		return s("command")
	case "Read":
		return s("file_path") + lineRange(s("offset"), s("limit"))
	case "Edit":
		return udiff.Unified(s("file_path"), s("old_string"), s("new_string"))
	case "MultiEdit":
		var b strings.Builder
		var edits []struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
		}
		var in struct {
			Edits json.RawMessage `json:"edits"`
		}
		_ = json.Unmarshal(input, &in)
		_ = json.Unmarshal(in.Edits, &edits)
		for _, e := range edits {
			b.WriteString(udiff.Unified(s("file_path"), e.Old, e.New))
		}
		return b.String()
	case "Write":
		content := s("content")
		return fmt.Sprintf("%s (%d bytes, %d lines)\n%s", s("file_path"), len(content), strings.Count(content, "\n")+boolInt(content != "" && !strings.HasSuffix(content, "\n")), hookio.Head(content, writeHead))
	case "NotebookEdit":
		return s("notebook_path") + "\n" + s("new_source")
	case "WebFetch":
		return s("url")
	case "WebSearch":
		return s("query")
	case "Grep", "Glob":
		t := s("pattern")
		if p := s("path"); p != "" {
			t += " in " + p
		}
		return t
	case "Agent", "Task":
		t := s("description")
		if st := s("subagent_type"); st != "" {
			t = st + ": " + t
		}
		return t
	case "TodoWrite":
		return hookio.JSONText(input)
	}
	if server, tool, ok := mcpName(name); ok {
		return server + "/" + tool + " " + hookio.JSONText(input)
	}
	return name + " " + hookio.JSONText(input)
}

// mcpName splits "mcp__SERVER__TOOL".
func mcpName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok
}

func lineRange(offset, limit string) string {
	switch {
	case offset != "" && limit != "":
		return fmt.Sprintf(" (lines from %s, %s lines)", offset, limit)
	case offset != "":
		return fmt.Sprintf(" (lines from %s)", offset)
	case limit != "":
		return fmt.Sprintf(" (%s lines)", limit)
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Result is the text of a tool's response: Bash's stdout, stderr and
// how it ended; Read's file content; any other response as JSON text;
// a failure's error.
func (tools) Result(tc *agent.ToolCall) string {
	var out string
	switch tc.Name {
	case "Bash":
		var r struct {
			Stdout      string `json:"stdout"`
			Stderr      string `json:"stderr"`
			Interrupted bool   `json:"interrupted"`
			ExitCode    *int   `json:"exit_code"`
		}
		if json.Unmarshal(tc.Response, &r) == nil {
			var b strings.Builder
			b.WriteString(r.Stdout)
			if r.Stderr != "" {
				if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
					b.WriteByte('\n')
				}
				b.WriteString("stderr:\n" + r.Stderr)
			}
			if r.ExitCode != nil && *r.ExitCode != 0 {
				fmt.Fprintf(&b, "\nexit status %d", *r.ExitCode)
			}
			if r.Interrupted {
				b.WriteString("\ninterrupted")
			}
			out = b.String()
		} else {
			out = hookio.JSONText(tc.Response)
		}
	case "Read":
		var r struct {
			File struct {
				Content string `json:"content"`
			} `json:"file"`
		}
		if json.Unmarshal(tc.Response, &r) == nil && r.File.Content != "" {
			out = r.File.Content
		} else {
			out = hookio.JSONText(tc.Response)
		}
	default:
		out = hookio.JSONText(tc.Response)
	}
	if tc.Failed && tc.Error != "" {
		if out != "" {
			out += "\n"
		}
		out += "error: " + tc.Error
	}
	return out
}
