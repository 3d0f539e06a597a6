package toolguard_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/cmd/helm/internal/toolguard"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

func TestCommandsFindsEveryArgvPathAndHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name         string
		src          string
		argvs        [][]string
		paths, hosts []string
	}{
		{"a list", "go vet ./... && go test ./x", [][]string{{"go", "vet", "./..."}, {"go", "test", "./x"}},
			[]string{filepath.Join(dir, "vet"), filepath.Join(dir, "..."), filepath.Join(dir, "test"), filepath.Join(dir, "x")}, nil},
		{"quotes joined", `e"ch"'o' a\ b`, [][]string{{"echo", "a b"}}, []string{filepath.Join(dir, "a b")}, nil},
		{"redirections are paths, descriptors are not", "cat < in > /tmp/out 2>&1", [][]string{{"cat"}}, []string{filepath.Join(dir, "in"), "/tmp/out"}, nil},
		{"URLs are hosts, not paths", "curl -fsS https://Example.COM:8080/x -o out", [][]string{{"curl", "-fsS", "https://Example.COM:8080/x", "-o", "out"}},
			[]string{filepath.Join(dir, "out")}, []string{"example.com"}},
		{"git's scp-like remote", "git clone git@github.com:o/r.git", [][]string{{"git", "clone", "git@github.com:o/r.git"}},
			[]string{filepath.Join(dir, "clone"), filepath.Join(dir, "git@github.com:o/r.git")}, []string{"github.com"}},
		{"a cd moves relative paths", "cd /tmp && cat x", [][]string{{"cd", "/tmp"}, {"cat", "x"}}, []string{"/tmp", "/tmp/x"}, nil},
		{"a here-document to sh", "sh <<'EOF'\nrm -r y\nEOF", [][]string{{"sh"}, {"rm", "-r", "y"}}, []string{filepath.Join(dir, "y")}, nil},
		{"find -delete reads as rm -r -f", "find out -delete", [][]string{{"find", "out", "-delete"}, {"rm", "-r", "-f", "--", "out"}},
			[]string{filepath.Join(dir, "out")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argvs, paths, hosts, err := toolguard.Commands(tc.src, dir)
			require.NoError(t, err)
			assert.Equal(t, tc.argvs, argvs)
			assert.Equal(t, tc.paths, paths)
			assert.Equal(t, tc.hosts, hosts)
		})
	}
}

func TestCommandsMarksWhatItCannotKnow(t *testing.T) {
	t.Parallel()
	argvs, _, _, err := toolguard.Commands("rm -rf x; fi", "/p")
	require.Error(t, err, "a script that does not parse says why")
	require.Len(t, argvs, 1)
	why, ok := policy.Unknown(argvs[0][0])
	require.True(t, ok)
	assert.Contains(t, why, "does not parse")

	argvs, _, _, err = toolguard.Commands(`$CMD -rf x`, "/p")
	require.NoError(t, err)
	why, ok = policy.Unknown(argvs[0][0])
	require.True(t, ok)
	assert.Equal(t, "the command's name comes from $CMD", why)
	assert.Equal(t, []string{"-rf", "x"}, argvs[0][1:])
}

func TestDecideNamesTheRuleAndTheReason(t *testing.T) {
	t.Parallel()
	p := parse(t, `[[rule]]
name = "no rm -rf"
command = "rm -rf"
decision = "deny"
reason = "use git clean instead"

[[rule]]
name = "no MCP writes"
tool = "mcp__*__write*|mcp__github__*"
decision = "ask"

[[rule]]
name = "edits are fine"
tool = "Edit|Write"
decision = "allow"

[[rule]]
name = "agents merge nothing"
action = "merge-pull-request"
decision = "deny"
`)
	ev := func(kind agent.Kind, tool string, input any) agent.Event {
		in, _ := json.Marshal(input)
		return agent.Event{Kind: kind, Cwd: "/p", Tool: &agent.ToolCall{Name: tool, Input: in}}
	}
	for _, tc := range []struct {
		name string
		ev   agent.Event
		want agent.Decision
	}{
		{"the rule's reason", ev(agent.PreTool, "Bash", map[string]string{"command": "rm -rf x"}),
			agent.Decision{Verdict: agent.Deny, Rule: `"no rm -rf" (policy.toml:1)`, Reason: "use git clean instead"}},
		{"a permission request is a tool call too", ev(agent.Permission, "Bash", map[string]string{"command": "rm -rf x"}),
			agent.Decision{Verdict: agent.Deny, Rule: `"no rm -rf" (policy.toml:1)`, Reason: "use git clean instead"}},
		{"mcp tools by glob", ev(agent.PreTool, "mcp__github__merge", map[string]string{}),
			agent.Decision{Verdict: agent.Ask, Rule: `"no MCP writes" (policy.toml:7)`, Reason: `left to a person by rule "no MCP writes" (policy.toml:7) of helm's guard rules`}},
		{"alternatives", ev(agent.PreTool, "Write", map[string]string{"file_path": "/p/a"}),
			agent.Decision{Verdict: agent.Allow, Rule: `"edits are fine" (policy.toml:12)`}},
		{"no rule: the host's own flow holds", ev(agent.PreTool, "Read", map[string]string{"file_path": "/p/a"}), toolguard.NoDecision},
		{"an action rule decides no tool call", ev(agent.PreTool, "Bash", map[string]string{"command": "gh pr merge 4"}), toolguard.NoDecision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := toolguard.Decide(p, tc.ev, agentWho, "")
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
		})
	}
}

func TestDecideNeverFailsOpen(t *testing.T) {
	t.Parallel()
	p := parse(t, "[[rule]]\ntool = \"Read\"\ndecision = \"allow\"\n")
	for _, tc := range []struct {
		name  string
		tool  string
		input string
	}{
		{"input that is not JSON", "Bash", `{"command": `},
		{"a command that is not a string", "Bash", `{"command": ["rm", "-rf"]}`},
		{"a Bash call with no command", "Bash", `{}`},
		{"a Read with no file", "Read", `{}`},
		{"a WebFetch of no host", "WebFetch", `{"url": "https:///x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := toolguard.Decide(p, agent.Event{Kind: agent.PreTool, Cwd: "/p", Tool: &agent.ToolCall{Name: tc.tool, Input: json.RawMessage(tc.input)}}, agentWho, "")
			require.ErrorIs(t, err, toolguard.ErrInput)
			assert.Equal(t, agent.Deny, d.Verdict)
			assert.Contains(t, d.Reason, "helm denies a tool call it cannot read")
		})
	}
	d := toolguard.Unreadable(errors.New("policy.toml:3: unknown field \"cmd\""))
	assert.Equal(t, agent.Deny, d.Verdict)
	assert.Contains(t, d.Reason, `policy.toml:3: unknown field "cmd"`)

	// No policy at all: no rule decides.
	d, err := toolguard.Decide(nil, bash("rm -rf /", "/p"), agentWho, "")
	require.NoError(t, err)
	assert.Equal(t, toolguard.NoDecision, d)
}

// step is a voyage entry holding an agent's step.
func step(s logbook.Step) logbook.Entry {
	return logbook.Entry{Kind: logbook.EntryStep, Step: &s}
}

func edit() logbook.Entry {
	return step(logbook.Step{Kind: logbook.StepTool, Tool: "Edit", Input: json.RawMessage(`{"file_path":"/p/a"}`)})
}

func ran(cmd string, failed bool) logbook.Entry {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return step(logbook.Step{Kind: logbook.StepTool, Tool: "Bash", Input: in, Text: cmd, Result: &logbook.StepResult{Failed: failed}})
}

func held(rule string) logbook.Entry {
	return step(logbook.Step{Kind: logbook.StepMessage, Decision: &logbook.StepDecision{Verdict: agent.Block, Rule: rule}})
}

var bearing = logbook.Entry{Kind: logbook.EntryBearing, Bearing: &logbook.Bearing{}}

func TestGateHoldsUntilTheConditionHolds(t *testing.T) {
	t.Parallel()
	p := parse(t, `[[rule]]
name = "bearing before stopping"
event = "stop"
until = "bearing-since-edit"
decision = "block"

[[rule]]
name = "tests pass"
event = "subagent-stop"
until = "tests-pass"
command = "go test"
decision = "block"
`)
	stop := agent.Event{Kind: agent.Stop}
	sub := agent.Event{Kind: agent.SubagentStop}
	denied := edit()
	denied.Step.Decision = &logbook.StepDecision{Verdict: agent.Deny}
	for _, tc := range []struct {
		name    string
		ev      agent.Event
		entries []logbook.Entry
		verdict string
	}{
		{"nothing edited", stop, nil, ""},
		{"an edit, no bearing", stop, []logbook.Entry{bearing, edit()}, agent.Block},
		{"a bearing after the edit", stop, []logbook.Entry{edit(), bearing}, ""},
		{"an edit after the bearing", stop, []logbook.Entry{edit(), bearing, edit()}, agent.Block},
		{"a denied edit changed nothing", stop, []logbook.Entry{bearing, denied}, ""},
		{"tests: an edit, no run", sub, []logbook.Entry{edit()}, agent.Block},
		{"tests: a failing run", sub, []logbook.Entry{edit(), ran("go test ./...", true)}, agent.Block},
		{"tests: a passing run", sub, []logbook.Entry{edit(), ran("cd x && go test -race ./...", false)}, ""},
		{"tests: a run before the edit", sub, []logbook.Entry{ran("go test ./...", false), edit()}, agent.Block},
		{"tests: another command", sub, []logbook.Entry{edit(), ran("go vet ./...", false)}, agent.Block},
		{"tests: the words echoed", sub, []logbook.Entry{edit(), ran("echo go test", false)}, agent.Block},
		{"the stop gate is not the subagent's", sub, []logbook.Entry{bearing, edit(), ran("go test", false)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := toolguard.Gate(p, tc.ev, agentWho, tc.entries)
			assert.Equal(t, tc.verdict, d.Verdict, "%+v", d)
			if tc.verdict == agent.Block {
				assert.NotEmpty(t, d.Reason)
				assert.Contains(t, d.Rule, "(policy.toml:")
			}
		})
	}
}

func TestGateLetsGoAfterMaxHolds(t *testing.T) {
	t.Parallel()
	p := parse(t, "[[rule]]\nname = \"b\"\nevent = \"stop\"\nuntil = \"bearing-since-edit\"\ndecision = \"block\"\nreason = \"take a bearing\"\n")
	rule := `"b" (policy.toml:1)`
	active := agent.Event{Kind: agent.Stop, StopActive: true}
	entries := []logbook.Entry{edit()}
	for i := range toolguard.MaxHolds {
		d := toolguard.Gate(p, active, agentWho, entries)
		require.Equal(t, agent.Decision{Verdict: agent.Block, Rule: rule, Reason: "take a bearing"}, d, "hold %d", i+1)
		entries = append(entries, held(rule))
	}
	d := toolguard.Gate(p, active, agentWho, entries)
	assert.Equal(t, agent.Allow, d.Verdict)
	assert.Equal(t, rule, d.Rule)
	assert.Contains(t, d.Reason, "let go after 3 holds")

	// Not while the host says no gate made it go on; and a new prompt
	// starts the count again.
	assert.Equal(t, agent.Block, toolguard.Gate(p, agent.Event{Kind: agent.Stop}, agentWho, entries).Verdict)
	entries = append(entries, step(logbook.Step{Kind: logbook.StepPrompt, Text: "go on"}), held(rule))
	assert.Equal(t, agent.Block, toolguard.Gate(p, active, agentWho, entries).Verdict)
}

func FuzzCommands(f *testing.F) {
	for _, s := range []string{"rm -rf x", `sh -c 'rm -rf x'`, "f(){ rm -rf x; }; f", "sh <<EOF\nrm -rf x\nEOF", `X=rm; $X -rf x`,
		`find . -exec rm -rf {} \;`, `env -S 'a b' c`, `$'\x72m'`, "rm -{r,f}{a,b}", "curl https://a.b/ git@x:y", "cd ~ && ls ../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a1, p1, h1, err1 := toolguard.Commands(src, "/p")
		a2, p2, h2, err2 := toolguard.Commands(src, "/p")
		assert.Equal(t, a1, a2)
		assert.Equal(t, p1, p2)
		assert.Equal(t, h1, h2)
		assert.Equal(t, err1 == nil, err2 == nil)
		if err1 != nil {
			require.NotEmpty(t, a1, "a script that does not parse is an unknown command")
			_, ok := policy.Unknown(a1[len(a1)-1][0])
			assert.True(t, ok)
		}
	})
}
