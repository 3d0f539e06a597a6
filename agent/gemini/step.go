package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
	"github.com/helmlog/helm/agent/udiff"
	"github.com/helmlog/helm/logbook"
)

const writeHead = 20

// StepOf is the step a person reads of ev: its kind, and for a tool call
// the text of the call (run_shell_command: the command; read_file: the
// path and range; replace: a unified diff; write_file: the path, size
// and first lines; web_fetch: the prompt with its URLs;
// google_web_search: the query; glob, grep: the pattern and path;
// mcp__*: the server, tool and input) and, after it ran, its result
// (llmContent, else returnDisplay, with the error).
func StepOf(ev agent.Event) logbook.Step { return hookio.Step(ev, tools{}) }

type tools struct{}

func (tools) Text(name string, input json.RawMessage) string {
	f := hookio.Fields(input)
	s := func(keys ...string) string {
		for _, k := range keys {
			if v := hookio.Str(f, k); v != "" {
				return v
			}
		}
		return ""
	}
	path := s("file_path", "absolute_path", "path")
	switch name {
	case "run_shell_command":
		t := s("command")
		if d := s("dir_path", "directory"); d != "" {
			t += "\n# in " + d
		}
		if d := s("description"); d != "" {
			t += "\n# " + d
		}
		return t
	case "read_file":
		t := path
		if o, l := s("offset"), s("limit"); o != "" || l != "" {
			t += fmt.Sprintf(" (offset %s, limit %s)", orDash(o), orDash(l))
		}
		return t
	case "replace":
		return udiff.Unified(path, s("old_string"), s("new_string"))
	case "write_file":
		content := s("content")
		return fmt.Sprintf("%s (%d bytes)\n%s", path, len(content), hookio.Head(content, writeHead))
	case "web_fetch":
		return s("prompt", "url")
	case "google_web_search":
		return s("query")
	case "glob", "search_file_content", "grep_search":
		t := s("pattern")
		if p := s("dir_path", "path"); p != "" {
			t += " in " + p
		}
		return t
	case "list_directory":
		return s("dir_path", "path")
	case "save_memory":
		return s("fact")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return server + "/" + tool + " " + hookio.JSONText(input)
	}
	return name + " " + hookio.JSONText(input)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (tools) Result(tc *agent.ToolCall) string {
	var r struct {
		LLMContent    json.RawMessage `json:"llmContent"`
		ReturnDisplay json.RawMessage `json:"returnDisplay"`
	}
	out := ""
	if json.Unmarshal(tc.Response, &r) == nil {
		var s string
		switch {
		case json.Unmarshal(r.LLMContent, &s) == nil && s != "":
			out = s
		case json.Unmarshal(r.ReturnDisplay, &s) == nil && s != "":
			out = s
		case hookio.Raw(r.LLMContent) != nil:
			out = hookio.JSONText(r.LLMContent)
		default:
			out = hookio.JSONText(tc.Response)
		}
	} else {
		out = hookio.JSONText(tc.Response)
	}
	if tc.Failed && tc.Error != "" && !strings.Contains(out, tc.Error) {
		if out != "" {
			out += "\n"
		}
		out += "error: " + tc.Error
	}
	return out
}
