package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/logbook"
)

// The captured session (testdata/transcript, see its README): Claude
// Code 2.1.332's own transcript of the scripted session, its subagent's
// beside it, and the payloads its hooks got (testdata/hooks).
const (
	capturedSession  = "4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11"
	capturedSubagent = "<agent-1>"
)

// capturedSubagents opens the captured subagent's transcript by the id
// the session names (the capture keeps it as subagent.jsonl).
type capturedSubagents struct{}

func (capturedSubagents) Open(id string) (io.ReadCloser, error) {
	if id != capturedSubagent {
		return nil, fs.ErrNotExist
	}
	return os.Open(filepath.Join("testdata", "transcript", "subagent.jsonl"))
}

func readCaptured(t *testing.T, subs claudecode.Subagents) []agent.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "transcript", "session.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var events []agent.Event
	for ev, err := range claudecode.Transcript(f, subs) {
		require.NoError(t, err)
		events = append(events, ev)
	}
	return events
}

func TestTranscriptYieldsTheSessionsSteps(t *testing.T) {
	type row struct {
		Kind     agent.Kind
		Subagent string
		Tool     string
		Text     string
		Failed   bool
		Decision string
	}
	var got []row
	for _, ev := range readCaptured(t, capturedSubagents{}) {
		s := claudecode.StepOf(ev)
		r := row{Kind: ev.Kind, Subagent: ev.Subagent, Tool: s.Tool, Text: firstLine(s.Text)}
		if s.Result != nil {
			r.Failed = s.Result.Failed
		}
		if ev.Kind == agent.PreTool && ev.Tool.Failed {
			r.Decision = "deny: " + ev.Tool.Error
		}
		if ev.Kind == agent.SubagentStart || ev.Kind == agent.SubagentStop {
			r.Subagent = "started " + ev.Subagent
		}
		got = append(got, r)
		assert.Equal(t, capturedSession, ev.Session, "every event is the session's")
		assert.Equal(t, "claude-code", ev.Agent)
		assert.Equal(t, "<project>", ev.Cwd)
	}
	const denied = "deny: PreToolUse:Bash hook error: helm guard: rm -rf is denied in this project (rule no-rm-rf)"
	want := []row{
		{Kind: agent.Prompt, Text: "Tidy the notes: mark them final, write a summary, have a helper count the lines, and clear out the victim directory."},
		{Kind: agent.PreTool, Tool: "Bash", Text: "ls"},
		{Kind: agent.PostTool, Tool: "Bash", Text: "ls"},
		{Kind: agent.PreTool, Tool: "Read", Text: "<project>/notes.md"},
		{Kind: agent.PostTool, Tool: "Read", Text: "<project>/notes.md"},
		{Kind: agent.PreTool, Tool: "Edit", Text: "--- a/<project>/notes.md"},
		{Kind: agent.PostTool, Tool: "Edit", Text: "--- a/<project>/notes.md"},
		{Kind: agent.PreTool, Tool: "Write", Text: "<project>/summary.md (31 bytes, 2 lines)"},
		{Kind: agent.PostTool, Tool: "Write", Text: "<project>/summary.md (31 bytes, 2 lines)"},
		{Kind: agent.PreTool, Tool: "Agent", Text: "general-purpose: Count the notes' lines"},
		{Kind: agent.SubagentStart, Subagent: "started <agent-1>", Text: "general-purpose"},
		{Kind: agent.PreTool, Subagent: capturedSubagent, Tool: "Bash", Text: "wc -l notes.md"},
		{Kind: agent.PostTool, Subagent: capturedSubagent, Tool: "Bash", Text: "wc -l notes.md"},
		{Kind: agent.SubagentStop, Subagent: "started <agent-1>", Text: "general-purpose"},
		{Kind: agent.PostTool, Tool: "Agent", Text: "general-purpose: Count the notes' lines"},
		{Kind: agent.PreTool, Tool: "Bash", Text: "rm -r -f victim", Decision: denied},
		{Kind: agent.Stop, Text: "Done: notes.md is final, summary.md written, notes.md has 3 lines; removing victim/ was denied."},
		{Kind: agent.Prompt, Text: "What did you change?"},
		{Kind: agent.Stop, Text: "I marked notes.md final and wrote summary.md; victim/ is untouched."},
	}
	assert.Equal(t, want, got)
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestTranscriptGivesWhatTheHooksGave: the hooks' payloads of the same
// session through Parse and StepOf, and its transcript through
// Transcript and StepOf, give the same prompts, tool calls (tool, input,
// result), results and subagents, each kind in the same order; the
// denial the transcript shows is the call the hook denied.
func TestTranscriptGivesWhatTheHooksGave(t *testing.T) {
	hooked := map[agent.Kind][]logbook.Step{}
	paths, err := filepath.Glob(filepath.Join("testdata", "hooks", "*.json"))
	require.NoError(t, err)
	sort.Slice(paths, func(i, j int) bool { return hookOrder(paths[i]) < hookOrder(paths[j]) })
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		ev, err := claudecode.Parse(bytes.NewReader(data))
		if errors.Is(err, claudecode.ErrUnknownEvent) {
			continue // events helm does not read (MessageDisplay, PostToolBatch)
		}
		require.NoError(t, err, p)
		hooked[ev.Kind] = append(hooked[ev.Kind], shared(ev))
	}
	imported := map[agent.Kind][]logbook.Step{}
	for _, ev := range readCaptured(t, capturedSubagents{}) {
		imported[ev.Kind] = append(imported[ev.Kind], shared(ev))
	}
	for _, kind := range []agent.Kind{agent.Prompt, agent.PostTool, agent.SubagentStart, agent.SubagentStop} {
		require.NotEmpty(t, hooked[kind], "the hooks gave %s events", kind)
		assert.Equal(t, hooked[kind], imported[kind], "%s events", kind)
	}
	// Every call the hooks saw is in the transcript, in order; the one
	// the hook denied is the one the transcript shows denied.
	require.Len(t, imported[agent.PreTool], len(hooked[agent.PreTool]))
	for i, h := range hooked[agent.PreTool] {
		assert.Equal(t, h, imported[agent.PreTool][i])
	}
	assert.Equal(t, "toolu_07HarnessBashRmVictim", imported[agent.PreTool][6].ID)
	assert.Len(t, hooked[agent.PostTool], len(imported[agent.PostTool]), "the denied call has no result in either")
	assert.Equal(t, hooked[agent.Stop], imported[agent.Stop], "each turn's answer")
}

// shared is what a hook and a transcript both know of ev's step: kind,
// tool, id, text, input (as JSON values) and result output.
func shared(ev agent.Event) logbook.Step {
	s := claudecode.StepOf(ev)
	s.Usage = nil
	if len(s.Input) > 0 {
		var v any
		if json.Unmarshal(s.Input, &v) == nil {
			s.Input, _ = json.Marshal(v) // keys sorted: the hook and the transcript order them otherwise
		}
	}
	if s.Result != nil {
		s.Result.Duration = 0
	}
	return s
}

// hookOrder sorts the captured payloads by event, then by their number.
func hookOrder(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	ev, n, _ := strings.Cut(name, "-")
	return ev + "-" + strings.Repeat("0", 4-len(n)) + n
}

func TestTranscriptCountsEachMessagesUsageOnce(t *testing.T) {
	var total logbook.Usage
	withUsage := 0
	for _, ev := range readCaptured(t, capturedSubagents{}) {
		if ev.Usage != nil {
			total.Add(*ev.Usage)
			withUsage++
		}
	}
	// 10 model messages (8 the session's, 2 the subagent's), some over
	// several lines, each 1200 in, 34 out, 800 cache read, 50 written.
	assert.Equal(t, 10, withUsage)
	assert.Equal(t, logbook.Usage{Model: "claude-opus-5-5", InputTokens: 12000, OutputTokens: 340, CacheReadTokens: 8000, CacheWriteTokens: 500}, total)
}

func TestTranscriptWithoutSubagentsKeepsTheirStartAndStop(t *testing.T) {
	var kinds []agent.Kind
	for _, ev := range readCaptured(t, nil) {
		if ev.Subagent != "" && ev.Kind != agent.SubagentStart && ev.Kind != agent.SubagentStop {
			t.Errorf("a subagent's own event without its transcript: %+v", ev)
		}
		kinds = append(kinds, ev.Kind)
	}
	assert.Contains(t, kinds, agent.SubagentStart)
	assert.Contains(t, kinds, agent.SubagentStop)
}

func TestSubagentDirFindsTranscriptsAsClaudeCodeLaysThemOut(t *testing.T) {
	assert.Equal(t, claudecode.SubagentDir(filepath.Join("p", "sess", "subagents")), claudecode.SubagentsOf(filepath.Join("p", "sess.jsonl")))
	dir := t.TempDir()
	meta, err := os.ReadFile(filepath.Join("testdata", "transcript", "subagent.meta.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-a1b2.meta.json"), meta, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-a1b2.jsonl"), []byte("{}\n"), 0o600))
	d := claudecode.SubagentDir(dir)
	id, typ, ok := d.ByToolUse("toolu_05HarnessAgentCount00")
	assert.True(t, ok)
	assert.Equal(t, "a1b2", id)
	assert.Equal(t, "general-purpose", typ)
	f, err := d.Open("a1b2")
	require.NoError(t, err)
	f.Close()
	for _, bad := range []string{"../a1b2", "a/b", "..", ""} {
		_, err := d.Open(bad)
		assert.Error(t, err, "id %q", bad)
	}
	_, err = d.Open("absent")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestTranscriptRefusesWhatIsNotATranscript(t *testing.T) {
	good := `{"type":"user","sessionId":"s1","message":{"role":"user","content":"hi"}}` + "\n"
	for _, tc := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"not JSON", good + "prompt: hi\n", 2, "not a JSON object"},
		{"broken JSON", good + `{"type":` + "\n", 2, "not a Claude Code transcript"},
		{"no type", good + `{"sessionId":"s1"}` + "\n", 2, "no type"},
		{"a Codex rollout", `{"timestamp":"2025-12-08T10:00:00Z","type":"session_meta","payload":{"id":"x"}}` + "\n", 1, "Codex CLI rollout"},
		{"a message without its session", `{"type":"user","message":{"role":"user","content":"hi"}}` + "\n", 1, "without a sessionId"},
		{"content of another shape", `{"type":"assistant","sessionId":"s1","message":{"content":7}}` + "\n", 1, "neither text nor a list"},
		{"a tool input that is no object", `{"type":"assistant","sessionId":"s1","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":[1]}]}}` + "\n", 1, "not a JSON object"},
		{"a line too long", good + `{"type":"user","x":"` + strings.Repeat("a", claudecode.MaxLine) + `"}` + "\n", 2, "longer than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := claudecode.ReadTranscript(strings.NewReader(tc.in), nil)
			var le *claudecode.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.line, le.Line)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	t.Run("no conversation", func(t *testing.T) {
		_, err := claudecode.ReadTranscript(strings.NewReader(`{"type":"last-prompt","lastPrompt":"hi"}`+"\n"), nil)
		assert.ErrorIs(t, err, claudecode.ErrNotTranscript)
	})
}

func TestTranscriptReadsWhatClaudeCodeAddsForWhatItIs(t *testing.T) {
	lines := []string{
		`{"type":"user","sessionId":"s","message":{"content":"<command-name>/review</command-name>\n<command-args>42</command-args>"}}`,
		`{"type":"user","sessionId":"s","isMeta":true,"message":{"content":"<system-reminder>hidden</system-reminder>"}}`,
		`{"type":"user","sessionId":"s","message":{"content":"<local-command-stdout>ok</local-command-stdout>"}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"m","content":[{"type":"tool_use","id":"t1","name":"Agent","input":{"description":"bg","run_in_background":true}}],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"user","sessionId":"s","toolUseResult":{"status":"async_launched","agentId":"bg1"},"message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"launched"}]}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m2","model":"m","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"false"}}],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"Exit code 1","is_error":true}]}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m3","model":"m","content":[{"type":"text","text":"waiting"}],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"user","sessionId":"s","message":{"content":"<task-notification><task-id>bg1</task-id><status>completed</status></task-notification>"}}`,
		`{"type":"system","subtype":"compact_boundary","sessionId":"s","compactMetadata":{"trigger":"auto","preTokens":100}}`,
		`{"type":"user","sessionId":"s","isCompactSummary":true,"message":{"content":"This session is being continued..."}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m4","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
	}
	events, err := claudecode.ReadTranscript(strings.NewReader(strings.Join(lines, "\n")), nil)
	require.NoError(t, err)
	var got []string
	for _, ev := range events {
		s := claudecode.StepOf(ev)
		line := string(ev.Kind) + " " + firstLine(s.Text)
		if s.Result != nil && s.Result.Failed {
			line += " (failed: " + ev.Tool.Error + ")"
		}
		if ev.Subagent != "" {
			line += " [" + ev.Subagent + "]"
		}
		got = append(got, line)
	}
	assert.Equal(t, []string{
		"prompt /review 42",
		"pre-tool bg",
		"subagent-start  [bg1]",
		"subagent-stop  [bg1]",
		"post-tool bg",
		"pre-tool false",
		"post-tool false (failed: Exit code 1)",
		"stop waiting",
		"notification <task-notification><task-id>bg1</task-id><status>completed</status></task-notification>",
		"compaction auto",
		"stop No response requested.",
	}, got)
	var total logbook.Usage
	for _, ev := range events {
		if ev.Usage != nil {
			total.Add(*ev.Usage)
		}
	}
	assert.EqualValues(t, 15, total.InputTokens, "three messages, the synthetic one counts nothing")
}

func TestTranscriptFollowsASubagentOnce(t *testing.T) {
	// A subagent's transcript that starts itself again is read once.
	loop := `{"type":"assistant","sessionId":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Agent","input":{}}]}}` + "\n" +
		`{"type":"user","sessionId":"s","toolUseResult":{"agentId":"x"},"message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}}` + "\n"
	events, err := claudecode.ReadTranscript(strings.NewReader(loop), loopSubagents(loop))
	require.NoError(t, err)
	starts := slices.DeleteFunc(slices.Clone(events), func(ev agent.Event) bool { return ev.Kind != agent.SubagentStart })
	assert.Len(t, starts, 1)
}

type loopSubagents string

func (l loopSubagents) Open(string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(string(l))), nil
}

func FuzzTranscript(f *testing.F) {
	for _, name := range []string{"session.jsonl", "subagent.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", "transcript", name))
		require.NoError(f, err)
		// The conversation's lines only: the fuzzer mutates small inputs
		// well, and the bookkeeping lines (up to 57 KB each) add nothing.
		var kept [][]byte
		for _, l := range bytes.Split(data, []byte("\n")) {
			if bytes.Contains(l, []byte(`"type":"user"`)) || bytes.Contains(l, []byte(`"type":"assistant"`)) {
				kept = append(kept, l)
			}
		}
		f.Add(bytes.Join(kept[:min(len(kept), 4)], []byte("\n")))
	}
	f.Add([]byte(`{"type":"user","sessionId":"s","message":{"content":"hi"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := claudecode.ReadTranscript(bytes.NewReader(data), loopSubagents(data))
		if err != nil {
			assert.Nil(t, events)
			return
		}
		for _, ev := range events {
			assert.NotEmpty(t, ev.Session)
			s := claudecode.StepOf(ev)
			if len(s.Input) > 0 {
				assert.True(t, json.Valid(s.Input), "inputs are JSON")
			}
			if ev.Tool != nil {
				assert.NotNil(t, ev.Tool)
			}
		}
	})
}
