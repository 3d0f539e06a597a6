package policy_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/policy"
)

// readmeRules are the rules the README shows, in its order.
const readmeRules = `# Guard rules: the first rule that matches decides.

[[rule]]
name = "agents may not merge"
action = "merge-pull-request"
actor = "agent"
decision = "deny"

[[rule]]
name = "nobody pushes to main"
action = "push"
branch = "main"
decision = "deny"

[[rule]]
name = "no rm -rf"
action = "observe-command"
args = "*rm -rf*"
decision = "deny"

[[rule]]
name = "merges need a person's yes"
action = "merge-pull-request"
decision = "confirm"
`

func mustParse(t *testing.T, text string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(text), "policy.toml")
	require.NoError(t, err)
	return p
}

func TestREADMERulesDecideAsDocumented(t *testing.T) {
	t.Parallel()
	p := mustParse(t, readmeRules)
	require.Len(t, p.Rules, 4)
	assert.Equal(t, policy.Rule{Name: "agents may not merge", Decision: policy.Deny, Action: "merge-pull-request", Actor: "agent", Line: 3}, p.Rules[0])
	assert.Equal(t, []int{3, 9, 15, 21}, []int{p.Rules[0].Line, p.Rules[1].Line, p.Rules[2].Line, p.Rules[3].Line})

	agent := policy.Request{Identity: "john-agent", Role: "coder", Method: "claude-code", Repo: "octo/widgets"}
	human := policy.Request{Identity: "john", Role: "lead", Method: "human", Repo: "octo/widgets"}
	with := func(r policy.Request, action, branch string, args ...string) policy.Request {
		r.Action, r.Branch, r.Args = action, branch, args
		return r
	}
	for _, tc := range []struct {
		name    string
		req     policy.Request
		want    policy.Decision
		rule    string
		message string
	}{
		{"an agent's merge is denied", with(agent, "merge-pull-request", "", "45"), policy.Deny, "agents may not merge", `denied by rule "agents may not merge" (policy.toml:3)`},
		{"a person's merge waits for a yes", with(human, "merge-pull-request", "", "45"), policy.Confirm, "merges need a person's yes", `held for confirmation by rule "merges need a person's yes" (policy.toml:21)`},
		{"a push to main is denied, to anyone", with(human, "push", "main", "origin", "main"), policy.Deny, "nobody pushes to main", `denied by rule "nobody pushes to main" (policy.toml:9)`},
		{"a push to a branch is allowed", with(agent, "push", "fix-widget", "origin", "fix-widget"), policy.Allow, "", "allowed: no rule matched"},
		{"a push to main-next is allowed (anchored)", with(agent, "push", "main-next", "origin", "main-next"), policy.Allow, "", "allowed: no rule matched"},
		{"rm -rf in a command is denied", with(agent, "observe-command", "", "sh", "-c", "cd build && rm -rf ."), policy.Deny, "no rm -rf", `denied by rule "no rm -rf" (policy.toml:15)`},
		{"rm -rf as the whole command is denied", with(agent, "observe-command", "", "rm", "-rf", "/tmp/x"), policy.Deny, "no rm -rf", ""},
		{"rm -r alone is allowed", with(agent, "observe-command", "", "rm", "-r", "build"), policy.Allow, "", ""},
		{"another command is allowed", with(agent, "observe-command", "", "go", "test", "./..."), policy.Allow, "", ""},
		{"rm -rf in an action's args is not a command", with(agent, "comment-issue", "", "42", "--body", "never rm -rf"), policy.Allow, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := p.Check(tc.req)
			assert.Equal(t, tc.want, v.Decision)
			if tc.rule == "" {
				assert.Nil(t, v.Rule)
				assert.NoError(t, v.Err())
			} else {
				require.NotNil(t, v.Rule)
				assert.Equal(t, tc.rule, v.Rule.Name)
				assert.Same(t, &p.Rules[indexOf(p, tc.rule)], v.Rule, "the verdict points into the policy")
			}
			if tc.message != "" {
				assert.Equal(t, tc.message, v.String())
			}
		})
	}
}

func indexOf(p *policy.Policy, name string) int {
	for i, r := range p.Rules {
		if r.Name == name {
			return i
		}
	}
	return -1
}

func TestVerdictErrWrapsItsDecision(t *testing.T) {
	t.Parallel()
	p := mustParse(t, readmeRules)
	err := p.Check(policy.Request{Action: "merge-pull-request", Method: "codex"}).Err()
	assert.ErrorIs(t, err, policy.ErrDenied)
	assert.EqualError(t, err, `denied by rule "agents may not merge" (policy.toml:3)`)
	err = p.Check(policy.Request{Action: "merge-pull-request", Method: "human"}).Err()
	assert.ErrorIs(t, err, policy.ErrNeedsConfirmation)
	assert.NotErrorIs(t, err, policy.ErrDenied)
	assert.NoError(t, p.Check(policy.Request{Action: "create-issue"}).Err())
}

func TestEveryFieldMatchesItsOwnValue(t *testing.T) {
	t.Parallel()
	base := policy.Request{
		Action: "push", Identity: "john-agent", Role: "coder", Method: "claude-code",
		Repo: "octo/widgets", Branch: "release/1.2", Args: []string{"origin", "release/1.2"},
	}
	for _, tc := range []struct {
		field, pattern string
		match          bool
	}{
		{"action", "push", true},
		{"action", "pu?h", true},
		{"action", "merge-*", false},
		{"identity", "*-agent", true},
		{"identity", "john", false},
		{"role", "coder", true},
		{"role", "reviewer", false},
		{"method", "claude-*", true},
		{"method", "human", false},
		{"actor", "agent", true},
		{"actor", "human", false},
		{"actor", "*", true},
		{"repo", "octo/*", true},
		{"repo", "octo/gadgets", false},
		{"repo", "OCTO/widgets", true}, // GitHub names are case-insensitive
		{"branch", "Release/*", false},
		{"branch", "release/*", true},
		{"branch", "release", false},
		{"args", "origin release/*", true},
		{"args", "origin", false},
		{"args", "*release/1.[0-9]", true},
	} {
		t.Run(tc.field+"="+tc.pattern, func(t *testing.T) {
			p := mustParse(t, "[[rule]]\nname = \"r\"\n"+tc.field+" = \""+tc.pattern+"\"\ndecision = \"deny\"\n")
			want := policy.Allow
			if tc.match {
				want = policy.Deny
			}
			assert.Equal(t, want, p.Check(base).Decision)
		})
	}
}

func TestActorIsHumanOnlyForTheHumanMethod(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "human", policy.Request{Method: "human"}.Actor())
	assert.Equal(t, "agent", policy.Request{Method: "claude-code"}.Actor())
	assert.Equal(t, "agent", policy.Request{}.Actor())
	assert.Equal(t, "agent", policy.Request{Method: "Human"}.Actor())
}

func TestFirstMatchingRuleWins(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `
[[rule]]
name = "release branches are fine"
branch = "release/*"
decision = "allow"

[[rule]]
name = "everything else needs a yes"
decision = "confirm"

[[rule]]
name = "never reached"
decision = "deny"
`)
	v := p.Check(policy.Request{Action: "push", Branch: "release/2"})
	assert.Equal(t, policy.Allow, v.Decision)
	require.NotNil(t, v.Rule)
	assert.Equal(t, "release branches are fine", v.Rule.Name)
	assert.Equal(t, `allowed by rule "release branches are fine" (policy.toml:2)`, v.String())
	v = p.Check(policy.Request{Action: "push", Branch: "main"})
	assert.Equal(t, policy.Confirm, v.Decision)
	assert.Equal(t, "everything else needs a yes", v.Rule.Name)
}

func TestNoRulesAllowEverything(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "\n# nothing yet\n"} {
		p := mustParse(t, text)
		assert.Empty(t, p.Rules)
		v := p.Check(policy.Request{Action: "merge-pull-request"})
		assert.Equal(t, policy.Verdict{Decision: policy.Allow, Source: "policy.toml"}, v)
	}
	var none *policy.Policy
	assert.Equal(t, policy.Allow, none.Check(policy.Request{Action: "push"}).Decision)
	assert.Nil(t, none.Explain(policy.Request{Action: "push"}))
	assert.NoError(t, none.Validate())
}

func TestUnnamedRulesAreNamedByPlace(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "[[rule]]\naction = \"pull\"\ndecision = \"allow\"\n[[rule]]\nname = \"  \"\naction = \"push\"\ndecision = \"deny\"\n")
	assert.Equal(t, "rule 1 (line 1)", p.Rules[0].Name)
	assert.Equal(t, "rule 2 (line 4)", p.Rules[1].Name)
	assert.Equal(t, `denied by rule "rule 2 (line 4)" (policy.toml:4)`, p.Check(policy.Request{Action: "push"}).String())
}

func TestParseRejectsWhatItDoesNotUnderstand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string // the error's lines
	}{
		{"unknown field names its line", readmeRules + "\n[[rule]]\nname = \"typo\"\nacton = \"push\"\ndecision = \"deny\"\n",
			[]string{`policy.toml:28: unknown field "acton" in [[rule]] 5 (known: name, decision, action, identity, role, method, actor, repo, branch, args, ref, force, delete, status, tool, command, path, host, event, until, reason)`}},
		{"unknown fields each reported, in order", "[[rule]]\nzeta = 1\ndecision = \"deny\"\nalpha = \"x\"\n",
			[]string{`policy.toml:2: unknown field "zeta" in [[rule]] 1`, `policy.toml:4: unknown field "alpha" in [[rule]] 1`}},
		{"a sub-table is an unknown field", "[[rule]]\ndecision = \"deny\"\n[rule.when]\nbranch = \"main\"\n",
			[]string{`policy.toml:3: unknown field "when" in [[rule]] 1`}},
		{"a dotted key is an unknown field", "[[rule]]\ndecision = \"deny\"\nwhen.branch = \"main\"\n",
			[]string{`policy.toml:3: unknown field "when" in [[rule]] 1`}},
		{"no decision", "[[rule]]\nname = \"r\"\naction = \"push\"\n",
			[]string{`policy.toml:1: [[rule]] 1 ("r"): no decision: give decision = "allow", "deny", "ask" or "confirm" ("block" for a gate)`}},
		{"unknown decision", "[[rule]]\nname = \"r\"\ndecision = \"stop\"\n",
			[]string{`policy.toml:3: [[rule]] 1 ("r"): decision "stop" is not allow, deny, ask or confirm (or block, for a gate)`}},
		{"block is a gate's decision", "[[rule]]\nname = \"r\"\ndecision = \"block\"\n",
			[]string{`policy.toml:3: [[rule]] 1 ("r"): decision "block" is for a gate`}},
		{"decision is case-sensitive", "[[rule]]\ndecision = \"Deny\"\n",
			[]string{`policy.toml:2: [[rule]] 1 ("rule 1 (line 1)"): decision "Deny" is not allow, deny, ask or confirm (or block, for a gate)`}},
		{"actor that matches no actor", "[[rule]]\nname = \"r\"\nactor = \"bot\"\ndecision = \"deny\"\n",
			[]string{`policy.toml:3: [[rule]] 1 ("r"): actor "bot" matches neither agent nor human`}},
		{"unclosed class", "\n[[rule]]\nname = \"r\"\nbranch = \"feat[\"\ndecision = \"deny\"\n",
			[]string{`policy.toml:4: [[rule]] 1 ("r"): branch "feat[" has a '[' at byte 4 that is never closed (write \[ for a bracket)`}},
		{"lone backslash", "[[rule]]\nname = \"r\"\nargs = 'rm \\'\ndecision = \"deny\"\n",
			[]string{`policy.toml:3: [[rule]] 1 ("r"): args "rm \\" ends with a lone '\'`}},
		{"a field that is not a string", "[[rule]]\nname = \"r\"\nargs = [\"rm\", \"-rf\"]\ndecision = \"deny\"\n",
			[]string{`policy.toml:3: [[rule]] 1: args is an array, not a string`}},
		{"a number", "[[rule]]\nname = 3\ndecision = \"deny\"\n",
			[]string{`policy.toml:2: [[rule]] 1: name is an integer, not a string`}},
		{"unknown top-level key", "version = 2\n[[rule]]\ndecision = \"deny\"\n",
			[]string{`policy.toml:1: unknown key "version" (a policy holds [[rule]] tables and a [hooks] table)`}},
		{"unknown table", "[[rule]]\ndecision = \"deny\"\n[defaults]\ndecision = \"allow\"\n",
			[]string{`policy.toml:3: unknown key "defaults" (a policy holds [[rule]] tables and a [hooks] table)`}},
		{"hooks recording that is not a setting", "[[rule]]\ndecision = \"deny\"\n\n[hooks]\nrecording = \"closed\"\n",
			[]string{`policy.toml:5: [hooks] recording is closed: write "fail-open" or "fail-closed"`}},
		{"an unknown hooks key", "[hooks]\nrecording = \"fail-open\"\ntimeout = 3\n",
			[]string{`policy.toml:3: unknown key "timeout" in [hooks] (it holds recording)`}},
		{"hooks as a value", "hooks = \"fail-closed\"\n",
			[]string{`policy.toml:1: hooks is a string: write it as a [hooks] table`}},
		{"a single [rule] table", "[rule]\ndecision = \"deny\"\n",
			[]string{`policy.toml:1: rule is a table: write each rule as a [[rule]] table`}},
		{"rule as a value", "rule = \"deny\"\n",
			[]string{`policy.toml:1: rule is a string: write each rule as a [[rule]] table`}},
		{"not TOML", "[[rule]]\nname = \"unterminated\n",
			[]string{`policy.toml:2: strings cannot contain newlines`}},
		{"a repeated key", "[[rule]]\ndecision = \"deny\"\ndecision = \"allow\"\n",
			[]string{`policy.toml:3: Key 'rule.decision' has already been defined.`}},
		{"several problems", "[[rule]]\nname = \"a\"\ndecision = \"no\"\n[[rule]]\nname = \"b\"\nrole = \"[\"\ndecision = \"deny\"\n",
			[]string{`policy.toml:3: [[rule]] 1 ("a"): decision "no"`, `policy.toml:6: [[rule]] 2 ("b"): role "["`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := policy.Parse([]byte(tc.text), "policy.toml")
			require.Error(t, err)
			assert.Nil(t, p)
			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, len(tc.want), err.Error())
			for i, want := range tc.want {
				assert.True(t, strings.HasPrefix(lines[i], want), "line %d:\n got %s\nwant %s...", i, lines[i], want)
			}
			var pe *policy.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "policy.toml", pe.Source)
		})
	}
}

func TestErrorCarriesThePlace(t *testing.T) {
	t.Parallel()
	_, err := policy.Parse([]byte("[[rule]]\ndecision = \"deny\"\n\n[[rule]]\nname = \"r\"\nacton = \"push\"\ndecision = \"deny\"\n"), "/home/j/.helm/policy.toml")
	var pe *policy.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, policy.Error{Source: "/home/j/.helm/policy.toml", Line: 6, Rule: 2, Err: pe.Err}, *pe)
	assert.Equal(t, `/home/j/.helm/policy.toml:6: unknown field "acton" in [[rule]] 2 (known: name, decision, action, identity, role, method, actor, repo, branch, args, ref, force, delete, status, tool, command, path, host, event, until, reason)`, err.Error())
}

// TestLinesSurviveTrickyTOML: text inside strings, arrays and inline
// tables that looks like a header or a key does not move the lines.
func TestLinesSurviveTrickyTOML(t *testing.T) {
	t.Parallel()
	text := `# [[rule]] in a comment
[[rule]]
name = """
[[rule]]
acton = "x"
"""
args = '''*rm -rf*''' # [[rule]]
decision = "deny"

[[ "rule" ]]   # spaced, quoted
name = "it's"
decision = "allow"

[[rule]]
"name" = "third"
decision = "confirm"
acton = "x"
`
	_, err := policy.Parse([]byte(text), "p.toml")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `p.toml:17: unknown field "acton" in [[rule]] 3 (known:`), err.Error())

	p := mustParse(t, strings.Replace(text, "acton = \"x\"\n", "", 2))
	require.Len(t, p.Rules, 3)
	assert.Equal(t, []int{2, 9, 13}, []int{p.Rules[0].Line, p.Rules[1].Line, p.Rules[2].Line})
	assert.Equal(t, "[[rule]]\n", p.Rules[0].Name)
	assert.Equal(t, "it's", p.Rules[1].Name)
	assert.Equal(t, "*rm -rf*", p.Rules[0].Args)
}

func TestInlineRulesParseWithoutLines(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `rule = [{ name = "a", action = "push", decision = "deny" }, { decision = "allow" }]`)
	require.Len(t, p.Rules, 2)
	assert.Equal(t, policy.Rule{Name: "a", Action: "push", Decision: policy.Deny}, p.Rules[0])
	assert.Equal(t, "rule 2", p.Rules[1].Name)
	assert.Equal(t, `denied by rule "a" (policy.toml)`, p.Check(policy.Request{Action: "push"}).String())
}

func TestExplainShowsEachRuleUntilTheOneThatDecides(t *testing.T) {
	t.Parallel()
	p := mustParse(t, readmeRules)
	traces := p.Explain(policy.Request{Action: "merge-pull-request", Method: "human", Args: []string{"45"}})
	require.Len(t, traces, 4)
	assert.Equal(t, policy.Trace{Rule: &p.Rules[0], Field: "actor", Pattern: "agent", Value: "human"}, traces[0])
	assert.Equal(t, policy.Trace{Rule: &p.Rules[1], Field: "action", Pattern: "push", Value: "merge-pull-request"}, traces[1])
	assert.Equal(t, policy.Trace{Rule: &p.Rules[3], Matched: true}, traces[3])
	var lines []string
	for _, tr := range traces {
		lines = append(lines, tr.String())
	}
	assert.Equal(t, []string{
		`rule "agents may not merge" (line 3): actor "human" does not match "agent"`,
		`rule "nobody pushes to main" (line 9): action "merge-pull-request" does not match "push"`,
		`rule "no rm -rf" (line 15): action "merge-pull-request" does not match "observe-command"`,
		`rule "merges need a person's yes" (line 21): matches: confirm`,
	}, lines)

	// The first rule decides: nothing after it is tried.
	traces = p.Explain(policy.Request{Action: "merge-pull-request", Method: "codex"})
	require.Len(t, traces, 1)
	assert.True(t, traces[0].Matched)

	// No rule matches: every rule is shown, none matched.
	traces = p.Explain(policy.Request{Action: "push", Branch: "fix", Args: []string{"origin", "fix"}})
	require.Len(t, traces, 4)
	assert.Equal(t, policy.Trace{Rule: &p.Rules[1], Field: "branch", Pattern: "main", Value: "fix"}, traces[1])
	for _, tr := range traces {
		assert.False(t, tr.Matched)
	}
}

func TestValidateChecksPoliciesBuiltInCode(t *testing.T) {
	t.Parallel()
	p := &policy.Policy{Source: "built-in", Rules: []policy.Rule{
		{Name: "ok", Action: "push", Decision: policy.Deny},
		{Name: "bad", Branch: "[", Decision: "nope", Line: 4},
	}}
	err := p.Validate()
	require.Error(t, err)
	assert.Equal(t, "built-in:4: [[rule]] 2 (\"bad\"): decision \"nope\" is not allow, deny, ask or confirm (or block, for a gate)\nbuilt-in:4: [[rule]] 2 (\"bad\"): branch \"[\" has a '[' at byte 0 that is never closed (write \\[ for a bracket)", err.Error())

	// Check on an invalid policy fails closed on the decision and never
	// matches a malformed glob.
	assert.Equal(t, policy.Allow, p.Check(policy.Request{Action: "pull", Branch: "["}).Decision)
	p.Rules[1].Branch = ""
	assert.Equal(t, policy.Deny, p.Check(policy.Request{Action: "pull"}).Decision)
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.toml")
	_, err := policy.Load(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "the caller decides what a missing file means")

	require.NoError(t, os.WriteFile(path, []byte(readmeRules), 0o600))
	p, err := policy.Load(path)
	require.NoError(t, err)
	assert.Equal(t, path, p.Source)
	assert.Len(t, p.Rules, 4)
	assert.Equal(t, `denied by rule "nobody pushes to main" (`+path+`:9)`, p.Check(policy.Request{Action: "push", Branch: "main"}).String())

	require.NoError(t, os.WriteFile(path, []byte("[[rule]]\nacton = \"push\"\n"), 0o600))
	_, err = policy.Load(path)
	assert.ErrorContains(t, err, path+`:2: unknown field "acton"`)
	assert.False(t, errors.Is(err, fs.ErrNotExist))
}

// FuzzParse: no text makes Parse panic, and a policy it returns is valid
// and decides any request without panicking, Explain agreeing with Check.
func FuzzParse(f *testing.F) {
	f.Add([]byte(readmeRules), "merge-pull-request", "human", "main", "45")
	f.Add([]byte("[[rule]]\nname = \"\"\"\n[[rule]]\n\"\"\"\nargs = '*[!a-z]\\**'\ndecision = \"confirm\"\n"), "observe-command", "codex", "", "rm -rf /")
	f.Add([]byte("rule = [{decision = \"deny\", branch = \"[a-]\"}]\n"), "push", "human", "-", "")
	f.Add([]byte("[[rule]]\nacton = 1\n[rule.x]\ny = [[1], {a = 'b'}]\n"), "", "", "", "")
	f.Fuzz(func(t *testing.T, data []byte, action, method, branch, args string) {
		p, err := policy.Parse(data, "fuzz.toml")
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("not a *policy.Error: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid policy: %v", err)
		}
		lines := strings.Split(string(data), "\n")
		for i, r := range p.Rules {
			if r.Line == 0 {
				continue
			}
			if r.Line > len(lines) || !strings.HasPrefix(strings.TrimLeft(lines[r.Line-1], " \t"), "[[") {
				t.Fatalf("rule %d's line %d is not its [[rule]] header", i+1, r.Line)
			}
		}
		req := policy.Request{Action: action, Method: method, Branch: branch, Args: strings.Fields(args)}
		v := p.Check(req)
		traces := p.Explain(req)
		switch {
		case v.Rule == nil:
			if v.Decision != policy.Allow || len(traces) != len(p.Rules) || len(traces) > 0 && traces[len(traces)-1].Matched {
				t.Fatalf("no rule matched, but %v and traces %v", v, traces)
			}
		case len(traces) == 0 || traces[len(traces)-1].Rule != v.Rule || !traces[len(traces)-1].Matched || v.Decision != v.Rule.Decision:
			t.Fatalf("Check says %v, Explain %v", v, traces)
		}
		_ = v.String()
		_ = v.Err()
		for _, tr := range traces {
			_ = tr.String()
		}
	})
}

func TestForceAndDeleteAreFacts(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "[[rule]]\nname = \"no force\"\nforce = true\ndecision = \"deny\"\n\n[[rule]]\nname = \"no deletes of tags\"\nref = \"refs/tags/*\"\ndelete = true\ndecision = \"deny\"\n")
	for _, tc := range []struct {
		name string
		r    policy.Request
		want policy.Decision
	}{
		{"forced", policy.Request{Action: "push", Ref: "refs/heads/main", Force: true}, policy.Deny},
		{"fast-forward", policy.Request{Action: "push", Ref: "refs/heads/main"}, policy.Allow},
		{"tag deleted", policy.Request{Action: "push", Ref: "refs/tags/v1", Delete: true}, policy.Deny},
		{"branch deleted", policy.Request{Action: "push", Ref: "refs/heads/x", Delete: true}, policy.Allow},
		{"tag created", policy.Request{Action: "push", Ref: "refs/tags/v1"}, policy.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, p.Check(tc.r).Decision)
		})
	}
	_, err := policy.Parse([]byte("[[rule]]\nforce = \"true\"\ndecision = \"deny\"\n"), "p.toml")
	assert.ErrorContains(t, err, "force is a string, not true or false")
}

func TestCheckAllDenyWins(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "[[rule]]\nname = \"prod\"\nrepo = \"octo/prod\"\ndecision = \"deny\"\n\n[[rule]]\nname = \"main\"\nbranch = \"main\"\ndecision = \"confirm\"\n")
	dev := policy.Request{Action: "push", Repo: "octo/dev", Branch: "x"}
	prod := policy.Request{Action: "push", Repo: "octo/prod", Branch: "x"}
	main := policy.Request{Action: "push", Repo: "octo/dev", Branch: "main"}
	assert.Equal(t, policy.Allow, p.CheckAll([]policy.Request{dev}).Decision)
	assert.Equal(t, policy.Confirm, p.CheckAll([]policy.Request{dev, main}).Decision)
	v := p.CheckAll([]policy.Request{dev, main, prod})
	assert.Equal(t, policy.Deny, v.Decision, "one request a rule denies denies them all")
	assert.Equal(t, "prod", v.Rule.Name)
	assert.Equal(t, policy.Allow, p.CheckAll(nil).Decision)
}

func TestStackCannotBeLoosened(t *testing.T) {
	t.Parallel()
	sys := mustParse(t, "[[rule]]\nname = \"nobody pushes to main\"\nbranch = \"main\"\ndecision = \"deny\"\n")
	sys.Source = "/etc/helm/policy.toml"
	home, err := policy.Parse([]byte("[[rule]]\nname = \"anything\"\ndecision = \"allow\"\n\n"), "home.toml")
	require.NoError(t, err)
	tight, err := policy.Parse([]byte("[[rule]]\nname = \"no merges\"\naction = \"merge-pull-request\"\ndecision = \"deny\"\n"), "home.toml")
	require.NoError(t, err)

	s := policy.Stack(sys, home)
	v := s.Check(policy.Request{Action: "push", Branch: "main"})
	assert.Equal(t, policy.Deny, v.Decision, "an allow-all home does not loosen the system's deny")
	assert.Equal(t, "/etc/helm/policy.toml", v.Source)
	assert.Equal(t, policy.Deny, policy.Stack(sys, tight).Check(policy.Request{Action: "merge-pull-request"}).Decision, "the home may tighten")
	assert.Equal(t, []string{"/etc/helm/policy.toml", "home.toml"}, policy.Sources(s))
	traces := s.Explain(policy.Request{Action: "push", Branch: "main"})
	require.Len(t, traces, 2)
	assert.Contains(t, traces[0].String(), "(/etc/helm/policy.toml:1)")
	assert.Contains(t, traces[1].String(), "(home.toml:1)")

	assert.Nil(t, policy.Stack(nil, nil))
	assert.Same(t, home, policy.Stack(nil, home))
}

func TestDigestNamesTheRules(t *testing.T) {
	t.Parallel()
	text := "[[rule]]\nname = \"a\"\ndecision = \"deny\"\n"
	a, err := policy.Parse([]byte(text), "a.toml")
	require.NoError(t, err)
	b, err := policy.Parse([]byte(text+"\n"), "a.toml")
	require.NoError(t, err)
	assert.Equal(t, "sha256:", a.Digest()[:7])
	assert.Len(t, a.Digest(), 7+64)
	assert.NotEqual(t, a.Digest(), b.Digest(), "the file's bytes, as sha256sum sees them")
	assert.Empty(t, (*policy.Policy)(nil).Digest())
	built := &policy.Policy{Rules: []policy.Rule{{Name: "a", Decision: policy.Deny}}}
	other := &policy.Policy{Rules: []policy.Rule{{Name: "a", Decision: policy.Allow}}}
	assert.NotEqual(t, built.Digest(), other.Digest())
	assert.NotEqual(t, policy.Stack(a, b).Digest(), policy.Stack(b, a).Digest())
}

func TestHooksRecordingFailsClosedWhereAnyLayerSaysSo(t *testing.T) {
	t.Parallel()
	parse := func(text string) *policy.Policy {
		p, err := policy.Parse([]byte(text), "policy.toml")
		require.NoError(t, err)
		return p
	}
	closed := parse("[hooks]\nrecording = \"fail-closed\"\n\n[[rule]]\ntool = \"Bash\"\ncommand = \"rm -rf\"\ndecision = \"deny\"\n")
	open := parse("[hooks]\nrecording = \"fail-open\"\n")
	none := parse("[[rule]]\naction = \"push\"\ndecision = \"deny\"\n")
	tests := []struct {
		name string
		p    *policy.Policy
		want bool
	}{
		{"no policy", nil, false},
		{"no [hooks] table", none, false},
		{"fail-open", open, false},
		{"fail-closed", closed, true},
		{"a home's fail-open cannot loosen a system fail-closed", policy.Stack(closed, open), true},
		{"a home's fail-closed tightens", policy.Stack(none, closed), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.p.RecordingFailsClosed())
		})
	}
	assert.Len(t, closed.Rules, 1, "the rules after [hooks] are read")
	assert.Equal(t, 4, closed.Rules[0].Line)
}
