package codex_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/codex"
	"github.com/helmlog/helm/agent/internal/hooktest"
	"github.com/helmlog/helm/logbook"
)

const rollout = "rollout-2025-12-08T10-00-00-0199a5c2-7f10-7d42-9c1e-3b7f6a2d9e01.jsonl"

func readRollout(t *testing.T) []agent.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", rollout))
	require.NoError(t, err)
	defer f.Close()
	var events []agent.Event
	for ev, err := range codex.Transcript(f) {
		require.NoError(t, err)
		events = append(events, ev)
	}
	return events
}

// TestTranscriptGivesTheRolloutsSteps: the documented rollout's steps, as
// a person reads them, against testdata/steps.golden.
func TestTranscriptGivesTheRolloutsSteps(t *testing.T) {
	var b bytes.Buffer
	for i, ev := range readRollout(t) {
		assert.Equal(t, "0199a5c2-7f10-7d42-9c1e-3b7f6a2d9e01", ev.Session)
		assert.Equal(t, "codex", ev.Agent)
		assert.Equal(t, "/work/proj", ev.Cwd)
		assert.False(t, ev.At.IsZero(), "the time of its line")
		s := codex.StepOf(ev)
		fmt.Fprintf(&b, "── %d %s\n", i+1, ev.Kind)
		b.Write(hooktest.StepText(s))
		if u := s.Usage; u != nil {
			fmt.Fprintf(&b, "usage: %s in %d out %d cache read %d\n", u.Model, u.InputTokens, u.OutputTokens, u.CacheReadTokens)
		}
	}
	hooktest.Golden(t, filepath.Join("testdata", "steps.golden"), b.Bytes())
}

func TestTranscriptMapsCodexToolsToSteps(t *testing.T) {
	type row struct {
		Kind   agent.Kind
		Tool   string
		Text   string
		Failed bool
	}
	var got []row
	var total logbook.Usage
	for _, ev := range readRollout(t) {
		s := codex.StepOf(ev)
		r := row{Kind: ev.Kind, Tool: s.Tool, Text: s.Text}
		if s.Result != nil {
			r.Failed = s.Result.Failed
		}
		got = append(got, r)
		if ev.Usage != nil {
			total.Add(*ev.Usage)
		}
	}
	patch := "*** Begin Patch\n*** Update File: notes.md\n@@\n # Notes\n-status: draft\n+status: final\n*** End Patch\n"
	assert.Equal(t, []row{
		{Kind: agent.Prompt, Text: "Mark the notes final and count their lines."},
		{Kind: agent.PreTool, Tool: "shell", Text: "cat notes.md"},
		{Kind: agent.PostTool, Tool: "shell", Text: "cat notes.md"},
		{Kind: agent.PreTool, Tool: "apply_patch", Text: patch},
		{Kind: agent.PostTool, Tool: "apply_patch", Text: patch},
		{Kind: agent.PreTool, Tool: "shell", Text: "wc -l notes.md 'missing file.md'"},
		{Kind: agent.PostTool, Tool: "shell", Text: "wc -l notes.md 'missing file.md'", Failed: true},
		{Kind: agent.Stop, Text: "notes.md is final; it has 2 lines."},
		{Kind: agent.Compaction, Text: "The user asked to mark notes.md final; done, 2 lines."},
		{Kind: agent.Prompt, Text: "Thanks."},
		{Kind: agent.Stop, Text: "You're welcome."},
	}, got)
	// The last token_count's total: input less the cached part, the
	// cached part, output.
	assert.Equal(t, logbook.Usage{Model: "gpt-5-codex", InputTokens: 15700 - 12000, CacheReadTokens: 12000, OutputTokens: 155}, total)
}

func TestCommandTextQuotesWhatTheShellWould(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"bash -lc script", `{"command":["bash","-lc","go test ./... && echo ok"]}`, "go test ./... && echo ok"},
		{"plain argv", `{"command":["git","status","--short"]}`, "git status --short"},
		{"argv that needs quotes", `{"command":["rm","-rf","it's here"]}`, `rm -rf 'it'\''s here'`},
		{"a command as one string", `{"command":"ls -la"}`, "ls -la"},
		{"no command", `{}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, codex.CommandText(json.RawMessage(tc.input)))
		})
	}
}

func TestTranscriptReadsOlderAndNewerShapes(t *testing.T) {
	meta := `{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{"id":"s1","cwd":"/p","cli_version":"0.46.0"}}`
	lines := []string{
		meta,
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run it"}]}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"local_shell_call","call_id":"c1","status":"completed","action":{"type":"exec","command":["apply_patch","*** Begin Patch\n*** End Patch\n"]}}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"patch rejected","success":false}}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"codex rollout"}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null}}`,
	}
	events, err := codex.ReadTranscript(strings.NewReader(strings.Join(lines, "\n")))
	require.NoError(t, err)
	var got []string
	for _, ev := range events {
		s := codex.StepOf(ev)
		line := string(ev.Kind) + " " + s.Tool + " " + s.Text
		if s.Result != nil {
			line += fmt.Sprintf(" → %q failed=%v", s.Result.Output, s.Result.Failed)
		}
		if s.Usage != nil {
			line += fmt.Sprintf(" usage %d/%d/%d", s.Usage.InputTokens, s.Usage.CacheReadTokens, s.Usage.OutputTokens)
		}
		got = append(got, line)
	}
	assert.Equal(t, []string{
		"prompt  run it",
		"pre-tool apply_patch *** Begin Patch\n*** End Patch\n usage 60/40/7",
		`post-tool apply_patch *** Begin Patch` + "\n*** End Patch\n" + ` → "patch rejected" failed=true`,
		"pre-tool web_search codex rollout",
		`post-tool web_search codex rollout → "" failed=false`,
	}, got, "a rollout without user_message events takes its prompts from the user's messages; the usage of the response goes to its first call")
}

func TestTranscriptRefusesWhatIsNotARollout(t *testing.T) {
	meta := `{"timestamp":"t","type":"session_meta","payload":{"id":"s1"}}` + "\n"
	for _, tc := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"not JSON", meta + "hello\n", 2, "not a JSON object"},
		{"a Claude Code line", `{"type":"user","sessionId":"s","message":{"content":"hi"}}` + "\n", 1, "Claude Code transcript line"},
		{"a payload of another shape", meta + `{"timestamp":"t","type":"response_item","payload":{"type":"message","content":"x"}}` + "\n", 2, "its response_item payload"},
		{"arguments that are not JSON", meta + `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{oops","call_id":"c"}}` + "\n", 2, "not JSON"},
		{"a session without its id", `{"timestamp":"t","type":"session_meta","payload":{"cwd":"/"}}` + "\n", 1, "without an id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := codex.ReadTranscript(strings.NewReader(tc.in))
			var le *codex.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.line, le.Line)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	t.Run("no session_meta", func(t *testing.T) {
		_, err := codex.ReadTranscript(strings.NewReader(`{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"hi"}}` + "\n"))
		assert.ErrorIs(t, err, codex.ErrNotRollout)
	})
}

func FuzzTranscript(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", rollout))
	require.NoError(f, err)
	f.Add(data)
	lines := bytes.Split(data, []byte("\n"))
	f.Add(bytes.Join(lines[:5], []byte("\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := codex.ReadTranscript(bytes.NewReader(data))
		if err != nil {
			assert.Nil(t, events)
			return
		}
		for _, ev := range events {
			assert.NotEmpty(t, ev.Session)
			s := codex.StepOf(ev)
			if len(s.Input) > 0 {
				assert.True(t, json.Valid(s.Input), "inputs are JSON")
			}
			if u := s.Usage; u != nil {
				assert.GreaterOrEqual(t, u.InputTokens, int64(0))
				assert.GreaterOrEqual(t, u.OutputTokens, int64(0))
				assert.GreaterOrEqual(t, u.CacheReadTokens, int64(0))
			}
		}
	})
}
