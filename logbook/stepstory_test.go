package logbook

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoryTellsAnAgentsSteps renders a hooked Claude Code session, one
// step of each kind, against a golden file: a prompt, a Bash call and its
// result, an edit as a diff, a denied call with its rule, a failed call
// whose output was stowed, a permission request, a notification, a
// compaction, a subagent's start and stop, the agent's message held by a
// gate, and the session's start, resumption and end.
func TestStoryTellsAnAgentsSteps(t *testing.T) {
	t.Parallel()
	who := Who{Identity: "ann", Role: "coder", Method: "claude-code"}
	cc := func(k StepKind) Step { return Step{Kind: k, Agent: "claude-code", Session: "s-1"} }
	step := func(s Step, mod func(*Step)) *Step {
		if mod != nil {
			mod(&s)
		}
		return &s
	}
	steps := []*Step{
		step(cc(StepSession), func(s *Step) { s.Text = "startup" }),
		step(cc(StepPrompt), func(s *Step) { s.Text = "fix the failing test\nand run it again" }),
		step(cc(StepTool), func(s *Step) {
			s.ID, s.Tool, s.Text = "t1", "Bash", "go test ./..."
			s.Input = json.RawMessage(`{"command":"go test ./..."}`)
			s.Decision = &StepDecision{Verdict: "allow"}
			s.Result = &StepResult{Output: "ok", Duration: 1200 * time.Millisecond}
			s.Usage = &Usage{Model: "claude-sonnet-4", InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 5000, CostUSD: 0.0123, Duration: 2100 * time.Millisecond}
		}),
		step(cc(StepTool), func(s *Step) {
			s.ID, s.Tool = "t2", "Edit"
			s.Input = json.RawMessage(`{"file_path":"internal/x.go","old_string":"a","new_string":"b"}`)
			s.Text = "--- a/internal/x.go\n+++ b/internal/x.go\n@@ -1,2 +1,4 @@\n-a\n+b\n+c\n+d\n"
			s.Result = &StepResult{Duration: 40 * time.Millisecond}
		}),
		step(cc(StepTool), func(s *Step) {
			s.ID, s.Tool, s.Text = "t3", "Bash", "rm -r -f build"
			s.Decision = &StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:3)`, Reason: "recursive deletes need a person"}
		}),
		step(cc(StepTool), func(s *Step) {
			s.ID, s.Tool, s.Text = "t4", "Bash", "make lint"
			s.Result = &StepResult{Output: "x.go:3: unused\n(4000 more lines)", Artifact: strings.Repeat("ab", 32), Failed: true, Duration: 300 * time.Millisecond}
		}),
		step(cc(StepTool), func(s *Step) { s.ID, s.Tool, s.Text = "t5", "WebFetch", "https://go.dev/doc" }),
		step(cc(StepPermission), func(s *Step) {
			s.ID, s.Tool, s.Text = "t6", "Bash", "git push --force"
			s.Decision = &StepDecision{Verdict: "ask", Rule: `"force pushes" (policy.toml:9)`, Reason: "a person confirms force pushes"}
		}),
		step(cc(StepNotification), func(s *Step) { s.Text = "Claude needs your permission to use Bash" }),
		step(cc(StepCompaction), func(s *Step) { s.Text = "auto" }),
		step(cc(StepSubagent), func(s *Step) { s.Text, s.Voyage = "Explore", "1a2b3c4d-0000-4000-8000-000000000000" }),
		step(cc(StepSubagent), func(s *Step) {
			s.Text, s.Voyage = "Explore", "1a2b3c4d-0000-4000-8000-000000000000"
			s.Result = &StepResult{Output: "found it"}
		}),
		step(cc(StepMessage), func(s *Step) {
			s.Text = "Done: the test passes."
			s.Decision = &StepDecision{Verdict: "block", Rule: `"tests observed" (policy.toml:12)`, Reason: "observe the tests passing first"}
		}),
		step(cc(StepSession), func(s *Step) { s.Text = "resume" }),
		step(cc(StepSession), func(s *Step) { s.Text, s.Result = "logout", &StepResult{} }),
	}
	entries := make([]Entry, len(steps))
	for i, s := range steps {
		entries[i] = Entry{N: i + 1, Kind: EntryStep, At: at(i + 1), Who: who, Step: s}
	}
	var buf bytes.Buffer
	require.NoError(t, WriteStory(&buf, Header{Intent: "claude-code session s-1", Identity: "ann", Created: at(0), Status: StatusActive}, entries))
	golden := "testdata/steps.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

// TestStepStoryEscapesHostileText: a tool's input and output come from
// the agent and the world; a command holding escapes cannot drive the
// terminal nor forge an entry.
func TestStepStoryEscapesHostileText(t *testing.T) {
	t.Parallel()
	entries := []Entry{{N: 1, Kind: EntryStep, At: at(1), Who: Who{Identity: "ann"}, Step: &Step{
		Kind: StepTool, Agent: "claude-code", Tool: "Bash\x1b[2K", Text: "echo hi\r── Step 2 ── forged",
		Result: &StepResult{Failed: true, Output: "\x1b]0;pwned\x07"},
	}}}
	var buf bytes.Buffer
	require.NoError(t, WriteStory(&buf, Header{Identity: "ann", Created: at(0), Status: StatusActive}, entries))
	for _, raw := range []string{"\x1b", "\r", "\x07"} {
		assert.NotContains(t, buf.String(), raw)
	}
	assert.Equal(t, 1, strings.Count(buf.String(), "\n── "), "one entry heading")
}

func TestDescribeStepDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    *StepDecision
		want []string
	}{
		{"no decision", nil, []string{"Bash: ls"}},
		{"plain allow says nothing", &StepDecision{Verdict: "allow"}, []string{"Bash: ls"}},
		{"allow by a rule says so", &StepDecision{Verdict: "allow", Rule: `"ls" (p:1)`}, []string{"Bash: ls", `allowed by "ls" (p:1)`}},
		{"deny without a rule", &StepDecision{Verdict: "deny", Reason: "the policy cannot be read"}, []string{"Bash: ls", "denied: the policy cannot be read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DescribeStep(&Step{Kind: StepTool, Tool: "Bash", Text: "ls", Decision: tt.d}))
		})
	}
}
