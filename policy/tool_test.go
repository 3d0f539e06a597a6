package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/policy"
)

const toolRules = `[[rule]]
name = "no rm -rf"
tool = "Bash"
command = "rm -rf"
decision = "deny"

[[rule]]
name = "stay in the project"
tool = "Read|Edit|Write"
path = "outside-project"
decision = "deny"

[[rule]]
name = "MCP asks"
tool = "mcp__*"
decision = "ask"

[[rule]]
name = "our hosts"
host = "*.example.com"
decision = "allow"

[[rule]]
name = "permission requests of bots"
event = "permission"
identity = "bot"
decision = "confirm"
`

func bashReq(argv ...string) policy.Request {
	return policy.Request{Event: policy.EventTool, Tool: "Bash", Commands: [][]string{argv}, Identity: "ann", Method: "claude-code"}
}

func TestToolRulesMatchTheirFields(t *testing.T) {
	t.Parallel()
	p := mustParse(t, toolRules)
	read := func(path string) policy.Request {
		return policy.Request{Event: policy.EventTool, Tool: "Read", Paths: []string{path}, Project: "/work/p"}
	}
	for _, tc := range []struct {
		name string
		req  policy.Request
		want policy.Decision
		rule string
	}{
		{"rm -rf", bashReq("rm", "-rf", "x"), policy.Deny, "no rm -rf"},
		{"rm -r -f", bashReq("/usr/bin/rm", "-r", "-f", "x"), policy.Deny, "no rm -rf"},
		{"rm --recursive --force", bashReq("rm", "--recursive", "--force"), policy.Deny, "no rm -rf"},
		{"rm -r", bashReq("rm", "-r", "x"), policy.Allow, ""},
		{"rm -- -rf", bashReq("rm", "--", "-rf"), policy.Allow, ""},
		{"rm -rf by another tool", policy.Request{Event: policy.EventTool, Tool: "Shell", Commands: [][]string{{"rm", "-rf"}}}, policy.Allow, ""},
		{"an unknown command is anything to a deny", bashReq(policy.UnknownCommand("$X"), "x"), policy.Deny, "no rm -rf"},
		{"an unknown flag is any flag to a deny", bashReq("rm", policy.UnknownWord("$F"), "x"), policy.Deny, "no rm -rf"},
		{"a path outside", read("/etc/passwd"), policy.Deny, "stay in the project"},
		{"a path beside the project", read("/work/p2/x"), policy.Deny, "stay in the project"},
		{"a path inside", read("/work/p/x"), policy.Allow, ""},
		{"the project itself", read("/work/p"), policy.Allow, ""},
		{"an unknown path is outside to a deny", read(policy.UnknownWord("$HOME/x")), policy.Deny, "stay in the project"},
		{"no project: every path is outside", policy.Request{Event: policy.EventTool, Tool: "Edit", Paths: []string{"/x"}}, policy.Deny, "stay in the project"},
		{"mcp tool", policy.Request{Event: policy.EventTool, Tool: "mcp__github__merge"}, policy.Ask, "MCP asks"},
		{"a listed host", policy.Request{Event: policy.EventTool, Tool: "WebFetch", Hosts: []string{"Docs.Example.com"}}, policy.Allow, "our hosts"},
		{"an unknown host is not allowed", policy.Request{Event: policy.EventTool, Tool: "WebFetch", Hosts: []string{policy.UnknownWord("$U")}}, policy.Allow, ""},
		{"confirm on a tool call asks", policy.Request{Event: policy.EventPermission, Tool: "Bash", Identity: "bot"}, policy.Ask, "permission requests of bots"},
		{"a permission rule decides no pre-tool call", policy.Request{Event: policy.EventTool, Tool: "Bash", Identity: "bot"}, policy.Allow, ""},
		{"a tool rule decides permission requests", policy.Request{Event: policy.EventPermission, Tool: "Bash", Commands: [][]string{{"rm", "-fr", "/"}}}, policy.Deny, "no rm -rf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := p.Check(tc.req)
			assert.Equal(t, tc.want, v.Decision)
			if tc.rule == "" {
				assert.Nil(t, v.Rule)
			} else if assert.NotNil(t, v.Rule) {
				assert.Equal(t, tc.rule, v.Rule.Name)
			}
		})
	}
}

// TestActionAndToolRulesNeverCross: an existing action policy decides no
// tool call, and a tool-call policy no action.
func TestActionAndToolRulesNeverCross(t *testing.T) {
	t.Parallel()
	actions := mustParse(t, readmeRules)
	tools := mustParse(t, toolRules+"\n[[rule]]\nname = \"every tool\"\ntool = \"*\"\ndecision = \"deny\"\n")
	for _, r := range []policy.Request{
		bashReq("rm", "-rf", "x"),
		{Event: policy.EventTool, Tool: "Bash", Commands: [][]string{{"gh", "pr", "merge", "45"}}, Method: "claude"},
		{Event: policy.EventStop, Method: "claude"},
	} {
		v := actions.Check(r)
		assert.Equal(t, policy.Allow, v.Decision)
		assert.Nil(t, v.Rule, "an action rule decided a tool call: %+v", r)
	}
	for _, r := range []policy.Request{
		{Action: "observe-command", Args: []string{"rm", "-rf", "x"}},
		{Action: "merge-pull-request", Method: "claude"},
	} {
		v := tools.Check(r)
		assert.Equal(t, policy.Allow, v.Decision)
		assert.Nil(t, v.Rule, "a tool rule decided an action: %+v", r)
	}
}

func TestAskOnAnActionIsConfirm(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "[[rule]]\nname = \"ask\"\naction = \"push\"\ndecision = \"ask\"\n")
	v := p.Check(policy.Request{Action: "push"})
	assert.Equal(t, policy.Confirm, v.Decision)
	require.ErrorIs(t, v.Err(), policy.ErrNeedsConfirmation)
}

func TestCheckAllAllowsAToolCallOnlyWhenRulesAllowedEveryPart(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "[[rule]]\nname = \"ls is fine\"\ncommand = \"ls\"\ndecision = \"allow\"\n")
	v := p.CheckAll([]policy.Request{bashReq("ls"), bashReq("curl", "x")})
	assert.Equal(t, policy.Allow, v.Decision)
	assert.Nil(t, v.Rule, "curl is no ls: no rule allowed the whole call")
	v = p.CheckAll([]policy.Request{bashReq("ls"), bashReq("ls", "-l")})
	require.NotNil(t, v.Rule)
	assert.Equal(t, "ls is fine", v.Rule.Name)

	// A stack: a layer with no rule for it leaves the call to the other.
	sys := mustParse(t, "[[rule]]\nname = \"no rm -rf\"\ncommand = \"rm -rf\"\ndecision = \"deny\"\n")
	s := policy.Stack(sys, p)
	v = s.Check(bashReq("ls"))
	require.NotNil(t, v.Rule)
	assert.Equal(t, "ls is fine", v.Rule.Name)
	assert.Equal(t, policy.Deny, s.Check(bashReq("rm", "-fr")).Decision)
}

func TestCommandPatternSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pattern string
		argv          []string
		want          bool
	}{
		{"combined", "rm -rf", []string{"rm", "-fr", "x"}, true},
		{"long synonyms", "rm -rf", []string{"rm", "--force", "--recursive"}, true},
		{"base name", "rm -rf", []string{"/bin/rm", "-R", "-f"}, true},
		{"missing flag", "rm -rf", []string{"rm", "-r"}, false},
		{"after --", "rm -rf", []string{"rm", "--", "-rf"}, false},
		{"another command", "rm -rf", []string{"grep", "-rf", "p"}, false},
		{"git push --force, -f", "git push --force", []string{"git", "push", "-f"}, true},
		{"git push --force, lease", "git push --force", []string{"git", "push", "--force-with-lease=main"}, true},
		{"git push --force, +refspec", "git push --force", []string{"git", "push", "origin", "+main"}, true},
		{"git push --force, global options", "git push --force", []string{"git", "-C", "d", "-c", "a=b", "--no-pager", "push", "-f"}, true},
		{"git push, -C's value is no subcommand", "git push", []string{"git", "-C", "push", "status"}, false},
		{"git push --delete, :ref", "git push --delete", []string{"git", "push", "origin", ":main"}, true},
		{"git branch -D is delete and force", "git branch --delete --force", []string{"git", "branch", "-D", "x"}, true},
		{"operands in order", "git push origin main", []string{"git", "push", "-f", "origin", "main"}, true},
		{"operands out of order", "git push main origin", []string{"git", "push", "origin", "main"}, false},
		{"chmod -R", "chmod -R", []string{"chmod", "--recursive", "700", "d"}, true},
		{"a flag's value", "curl -X POST", []string{"curl", "--request=POST", "u"}, true},
		{"a flag's value combined", "curl -X POST", []string{"curl", "-sXPOST", "u"}, true},
		{"a flag's other value", "curl -X POST", []string{"curl", "-X", "GET", "u"}, false},
		{"a value is no flag", "nice -n", []string{"nice", "-n", "5"}, true},
		{"an unknown word proves nothing", "rm -rf", []string{"rm", policy.UnknownWord("$F")}, false},
		{"an unknown command proves nothing", "rm", []string{policy.UnknownCommand("$X")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, policy.MatchCommand(tc.pattern, tc.argv))
		})
	}
}

func TestParseRejectsBadToolRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"an action field on a tool rule", "[[rule]]\nname = \"r\"\ntool = \"Bash\"\nbranch = \"main\"\ndecision = \"deny\"\n",
			`policy.toml:4: [[rule]] 1 ("r"): branch is an action's field`},
		{"an unknown event", "[[rule]]\nname = \"r\"\nevent = \"start\"\ndecision = \"deny\"\n",
			`policy.toml:3: [[rule]] 1 ("r"): event "start" is not tool, permission, stop or subagent-stop`},
		{"a gate without until", "[[rule]]\nname = \"r\"\nevent = \"stop\"\ndecision = \"block\"\n",
			`policy.toml:3: [[rule]] 1 ("r"): a rule on event "stop" is a gate`},
		{"an unknown until", "[[rule]]\nname = \"r\"\nevent = \"stop\"\nuntil = \"done\"\ndecision = \"block\"\n",
			`policy.toml:4: [[rule]] 1 ("r"): until "done" is not bearing-since-edit or tests-pass`},
		{"tests-pass without a command", "[[rule]]\nname = \"r\"\nevent = \"stop\"\nuntil = \"tests-pass\"\ndecision = \"block\"\n",
			`policy.toml:4: [[rule]] 1 ("r"): until = "tests-pass" needs the command`},
		{"a gate that denies", "[[rule]]\nname = \"r\"\nevent = \"stop\"\nuntil = \"bearing-since-edit\"\ndecision = \"deny\"\n",
			`policy.toml:5: [[rule]] 1 ("r"): a gate holds the agent: decision = "block"`},
		{"until without a stop", "[[rule]]\nname = \"r\"\ntool = \"Bash\"\nuntil = \"bearing-since-edit\"\ndecision = \"deny\"\n",
			`policy.toml:4: [[rule]] 1 ("r"): until is a gate's condition`},
		{"block on a tool call", "[[rule]]\nname = \"r\"\ntool = \"Bash\"\ndecision = \"block\"\n",
			`policy.toml:4: [[rule]] 1 ("r"): decision "block" is for a gate`},
		{"a command that is not a string", "[[rule]]\nname = \"r\"\ncommand = [\"rm\", \"-rf\"]\ndecision = \"deny\"\n",
			`policy.toml:3: [[rule]] 1: command is an array, not a string`},
		{"a blank command", "[[rule]]\nname = \"r\"\ncommand = \"  \"\ndecision = \"deny\"\n",
			`policy.toml:3: [[rule]] 1 ("r"): command is blank`},
		{"a bad tool glob", "[[rule]]\nname = \"r\"\ntool = \"Edit|W[\"\ndecision = \"deny\"\n",
			`policy.toml:3: [[rule]] 1 ("r"): tool "Edit|W[" has a '['`},
		{"a bad path glob", "[[rule]]\nname = \"r\"\npath = \"/etc/[\"\ndecision = \"deny\"\n",
			`policy.toml:3: [[rule]] 1 ("r"): path "/etc/[" has a '['`},
		{"a misspelt field", "[[rule]]\nname = \"r\"\ncomand = \"rm\"\ndecision = \"deny\"\n",
			`policy.toml:3: unknown field "comand" in [[rule]] 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := policy.Parse([]byte(tc.text), "policy.toml")
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %s\nwant %s...", err, tc.want)
		})
	}
}

func TestExplainSaysWhichToolFieldDidNotMatch(t *testing.T) {
	t.Parallel()
	p := mustParse(t, readmeRules+"\n"+toolRules)
	traces := p.Explain(bashReq("rm", "-r", "x"))
	var lines []string
	for _, tr := range traces {
		lines = append(lines, tr.String())
	}
	assert.Equal(t, []string{
		`rule "agents may not merge" (line 3): kind "tool call" does not match "action"`,
		`rule "nobody pushes to main" (line 9): kind "tool call" does not match "action"`,
		`rule "no rm -rf" (line 15): kind "tool call" does not match "action"`,
		`rule "merges need a person's yes" (line 21): kind "tool call" does not match "action"`,
		`rule "no rm -rf" (line 26): command "rm -r x" does not match "rm -rf"`,
		`rule "stay in the project" (line 32): tool "Bash" does not match "Read|Edit|Write"`,
		`rule "MCP asks" (line 38): tool "Bash" does not match "mcp__*"`,
		`rule "our hosts" (line 43): host "" does not match "*.example.com"`,
		`rule "permission requests of bots" (line 48): event "tool" does not match "permission"`,
	}, lines)
	traces = p.Explain(policy.Request{Action: "push", Branch: "fix"})
	assert.Equal(t, `rule "no rm -rf" (line 26): kind "action" does not match "tool call"`, traces[4].String())
}

func TestGatesAllApply(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `[[rule]]
name = "bearing"
event = "stop"
until = "bearing-since-edit"
decision = "block"

[[rule]]
name = "bots test"
event = "stop"
identity = "bot"
until = "tests-pass"
command = "go test"
decision = "block"

[[rule]]
name = "no rm -rf"
command = "rm -rf"
decision = "deny"
`)
	names := func(vs []policy.Verdict) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Rule.Name)
		}
		return out
	}
	assert.Equal(t, []string{"bearing", "bots test"}, names(p.Gates(policy.Request{Event: policy.EventStop, Identity: "bot"})))
	assert.Equal(t, []string{"bearing"}, names(p.Gates(policy.Request{Event: policy.EventStop, Identity: "ann"})))
	assert.Empty(t, p.Gates(policy.Request{Event: policy.EventSubagentStop}))
	assert.Equal(t, policy.Block, p.Check(policy.Request{Event: policy.EventStop}).Decision)
}

func TestDigestOfActionRulesIsUnchanged(t *testing.T) {
	t.Parallel()
	// A policy built in code with action rules only digests as before
	// the tool-call fields existed.
	p := &policy.Policy{Rules: []policy.Rule{{Name: "r", Decision: policy.Deny, Action: "push"}}}
	// sha256 of `"r" "deny" "push" "" "" "" "" "" "" "" "" "" ""` and a newline.
	assert.Equal(t, "sha256:c07dbba198840ffcd5da851cdb73e4268ca57463c6f776b6549c2ecbae31ac21", p.Digest())
	q := &policy.Policy{Rules: []policy.Rule{{Name: "r", Decision: policy.Deny, Action: "push", Tool: "Bash"}}}
	assert.NotEqual(t, p.Digest(), q.Digest())
}

// TestGuardDocExamplesParse: the policy docs/guard.md shows parses, and
// decides as it says.
func TestGuardDocExamplesParse(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "guard.md"))
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(doc), "```toml\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	p := mustParse(t, block)
	assert.Equal(t, policy.Deny, p.Check(bashReq("rm", "-fr", "build")).Decision)
	assert.Equal(t, policy.Allow, p.Check(policy.Request{Event: policy.EventTool, Tool: "WebFetch", Hosts: []string{"docs.example.com"}}).Decision)
	assert.Equal(t, policy.Deny, p.Check(policy.Request{Event: policy.EventTool, Tool: "WebFetch", Hosts: []string{"x.example"}}).Decision)
	assert.Equal(t, policy.Ask, p.Check(policy.Request{Event: policy.EventTool, Tool: "mcp__x__y"}).Decision)
	assert.Len(t, p.Gates(policy.Request{Event: policy.EventStop}), 1)
}
