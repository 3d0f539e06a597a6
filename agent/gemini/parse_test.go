package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/gemini"
	"github.com/helmlog/helm/agent/internal/hooktest"
)

func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "payloads", name+".json"))
	require.NoError(t, err)
	return b
}

func base(kind agent.Kind) agent.Event {
	return agent.Event{Agent: "gemini-cli", Kind: kind, Session: "g-42", Cwd: "/work/proj",
		Transcript: "/home/u/.gemini/tmp/abcd/chats/session-g-42.json", At: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func with(ev agent.Event, f func(*agent.Event)) agent.Event { f(&ev); return ev }

func TestParseReadsEveryDocumentedEvent(t *testing.T) {
	tests := []struct {
		name string
		want agent.Event
	}{
		{"SessionStart", with(base(agent.SessionStart), func(e *agent.Event) { e.Text = "startup" })},
		{"BeforeAgent", with(base(agent.Prompt), func(e *agent.Event) { e.Text = "Fix the widget crash" })},
		{"BeforeTool", with(base(agent.PreTool), func(e *agent.Event) {
			e.Tool = &agent.ToolCall{Name: "run_shell_command", Input: json.RawMessage(`{"command":"rm -rf build","description":"Remove the build directory"}`)}
		})},
		{"BeforeTool-mcp", with(base(agent.PreTool), func(e *agent.Event) {
			e.Tool = &agent.ToolCall{Name: "mcp__helm__voyage_start", Input: json.RawMessage(`{"title":"Fix the widget"}`)}
		})},
		{"AfterTool", with(base(agent.PostTool), func(e *agent.Event) {
			e.Tool = &agent.ToolCall{Name: "replace",
				Input:    json.RawMessage(`{"file_path":"/work/proj/widget.go","old_string":"func init() {\n\tw.Start()\n}","new_string":"func init() {\n\tif w != nil {\n\t\tw.Start()\n\t}\n}"}`),
				Response: json.RawMessage(`{"llmContent":"Successfully modified file: /work/proj/widget.go (1 replacements).","returnDisplay":"widget.go: 1 replacement"}`)}
		})},
		{"AfterTool-error", with(base(agent.PostTool), func(e *agent.Event) {
			e.Tool = &agent.ToolCall{Name: "read_file", Input: json.RawMessage(`{"file_path":"/work/proj/missing.go"}`),
				Response: json.RawMessage(`{"llmContent":"","returnDisplay":"File not found.","error":{"message":"File not found: /work/proj/missing.go","type":"file_not_found"}}`),
				Failed:   true, Error: "File not found: /work/proj/missing.go"}
		})},
		{"Notification", with(base(agent.Notification), func(e *agent.Event) {
			e.Text = "Gemini CLI needs your permission to run run_shell_command"
		})},
		{"PreCompress", with(base(agent.Compaction), func(e *agent.Event) { e.Text = "auto" })},
		{"AfterAgent", with(base(agent.Stop), func(e *agent.Event) { e.Text = "The crash is fixed." })},
		{"SessionEnd", with(base(agent.SessionEnd), func(e *agent.Event) { e.Text = "exit" })},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gemini.Parse(bytes.NewReader(payload(t, tt.name)))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
		seen[strings.SplitN(tt.name, "-", 2)[0]] = true
	}
	for _, ev := range gemini.Events() {
		assert.True(t, seen[ev], "no golden payload for %s", ev)
	}
}

func TestParseRefusesWhatIsNotAPayload(t *testing.T) {
	tests := []struct {
		name, in, want string
		is             error
	}{
		{name: "model hook helm does not read", in: `{"session_id":"s","hook_event_name":"AfterModel"}`, want: `"AfterModel"`, is: gemini.ErrUnknownEvent},
		{name: "no session", in: `{"hook_event_name":"AfterAgent"}`, want: "no session_id"},
		{name: "bad timestamp", in: `{"session_id":"s","hook_event_name":"SessionEnd","timestamp":"yesterday"}`, want: "not ISO 8601"},
		{name: "tool event without tool", in: `{"session_id":"s","hook_event_name":"BeforeTool"}`, want: "no tool_name"},
		{name: "over the limit", in: `{"session_id":"s","hook_event_name":"BeforeAgent","prompt":"` + strings.Repeat("a", gemini.MaxPayload) + `"}`, want: "larger than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.Parse(strings.NewReader(tt.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.True(t, errors.Is(err, tt.is))
			}
		})
	}
}

func TestAnswerWritesGeminiCLIsDecisionForms(t *testing.T) {
	tests := []struct {
		name, payload string
		d             agent.Decision
		msg           string
	}{
		{name: "before-tool-deny", payload: "BeforeTool", d: agent.Decision{Verdict: agent.Deny, Reason: "no rm -rf (policy.toml:3)"}},
		{name: "before-tool-allow", payload: "BeforeTool", d: agent.Decision{Verdict: agent.Allow}},
		{name: "before-tool-ask", payload: "BeforeTool", d: agent.Decision{Verdict: agent.Ask}},
		{name: "before-tool-block-denies", payload: "BeforeTool", d: agent.Decision{Verdict: agent.Block}},
		{name: "before-tool-no-verdict", payload: "BeforeTool"},
		{name: "after-agent-block", payload: "AfterAgent", d: agent.Decision{Verdict: agent.Block, Reason: "the tests have not been observed passing"}},
		{name: "after-agent-allow", payload: "AfterAgent", d: agent.Decision{Verdict: agent.Allow}},
		{name: "after-tool-takes-none", payload: "AfterTool", d: agent.Decision{Verdict: agent.Deny}},
		{name: "prompt-unrecorded", payload: "BeforeAgent", msg: "helm could not record this prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := gemini.Parse(bytes.NewReader(payload(t, tt.payload)))
			require.NoError(t, err)
			out, code := gemini.AnswerWithMessage(ev, tt.d, tt.msg)
			assert.Equal(t, 0, code)
			if len(out) > 0 {
				assert.True(t, json.Valid(out), "%s", out)
			}
			hooktest.Golden(t, filepath.Join("testdata", "answers", tt.name+".json"), out)
		})
	}
}

func TestStepOfShowsWhatAPersonReads(t *testing.T) {
	for _, name := range []string{"SessionStart", "BeforeAgent", "BeforeTool", "BeforeTool-mcp", "AfterTool", "AfterTool-error", "Notification", "PreCompress", "AfterAgent", "SessionEnd"} {
		t.Run(name, func(t *testing.T) {
			ev, err := gemini.Parse(bytes.NewReader(payload(t, name)))
			require.NoError(t, err)
			hooktest.Golden(t, filepath.Join("testdata", "steps", name+".txt"), hooktest.StepText(gemini.StepOf(ev)))
		})
	}
}

func TestStepOfToolTexts(t *testing.T) {
	tests := []struct {
		name, tool, input, want string
	}{
		{"shell in a directory", "run_shell_command", `{"command":"go test ./...","dir_path":"widget"}`, "go test ./...\n# in widget"},
		{"read with range", "read_file", `{"absolute_path":"/a/b.go","offset":5,"limit":10}`, "/a/b.go (offset 5, limit 10)"},
		{"write", "write_file", `{"file_path":"/a/n.txt","content":"x\n"}`, "/a/n.txt (2 bytes)\nx\n"},
		{"fetch", "web_fetch", `{"prompt":"summarise https://go.dev/doc"}`, "summarise https://go.dev/doc"},
		{"search", "google_web_search", `{"query":"go iterators"}`, "go iterators"},
		{"glob", "glob", `{"pattern":"**/*.go","dir_path":"/w"}`, "**/*.go in /w"},
		{"grep", "search_file_content", `{"pattern":"init"}`, "init"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := agent.Event{Agent: "gemini-cli", Kind: agent.PreTool, Session: "s", Tool: &agent.ToolCall{Name: tt.tool, Input: json.RawMessage(tt.input)}}
			assert.Equal(t, tt.want, gemini.StepOf(ev).Text)
		})
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := gemini.Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		assert.Equal(t, "gemini-cli", ev.Agent)
		assert.NotEmpty(t, ev.Session)
		out, _ := gemini.Answer(ev, agent.Decision{Verdict: agent.Deny, Reason: "r"})
		if ev.Kind == agent.PreTool {
			require.NotNil(t, ev.Tool)
			assert.Contains(t, string(out), `"decision":"deny"`)
		}
		_ = gemini.StepOf(ev)
	})
}
