package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/policy"
)

func parse(t *testing.T, text, source string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(text), source)
	require.NoError(t, err)
	return p
}

func TestStatusMatchesAVoyageStatusOrAClass(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, status string
		match                 bool
	}{
		{"closed names completed", "closed", "completed", true},
		{"closed names cancelled", "closed", "cancelled", true},
		{"closed is not active", "closed", "active", false},
		{"closed is not blocked", "closed", "blocked", false},
		{"open names partial", "open", "partial", true},
		{"a glob", "c*", "completed", true},
		{"a request without a status matches no class", "closed", "", false},
		{"nor a word", "completed", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, "[[rule]]\nname = \"r\"\nstatus = \""+tc.pattern+"\"\ndecision = \"deny\"\n", "p.toml")
			got := p.Check(policy.Request{Action: "jettison", Status: tc.status}).Decision == policy.Deny
			assert.Equal(t, tc.match, got)
		})
	}
}

func TestStatusIsAnActionsField(t *testing.T) {
	_, err := policy.Parse([]byte("[[rule]]\ntool = \"Bash\"\nstatus = \"closed\"\ndecision = \"deny\"\n"), "p.toml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status is an action's field")
}

func TestBuiltInRulesRefuseAnAgentCuratingAClosedVoyage(t *testing.T) {
	agent := policy.Request{Action: "jettison", Identity: "j", Method: "claude", Status: "completed"}
	person := agent
	person.Method = "human"
	active := agent
	active.Status = "active"
	sys := policy.System(parse(t, "[[rule]]\nname = \"agents prune\"\naction = \"jettison\"\ndecision = \"allow\"\n", "/etc/helm/policy.toml"))
	home := parse(t, "[[rule]]\nname = \"planted\"\ndecision = \"allow\"\n", "policy.toml")
	for _, tc := range []struct {
		name string
		p    *policy.Policy
		r    policy.Request
		want policy.Decision
	}{
		{"no policy: an agent is refused", nil, agent, policy.Deny},
		{"no policy: a person is not", nil, person, policy.Allow},
		{"no policy: an active voyage is not guarded", nil, active, policy.Allow},
		{"a home rule cannot loosen them", home, agent, policy.Deny},
		{"a home rule over a system one that says nothing cannot either", policy.Stack(policy.System(parse(t, "", "/etc/helm/policy.toml")), home), agent, policy.Deny},
		{"a system rule can", policy.Stack(sys, home), agent, policy.Allow},
		{"a system rule alone can", sys, agent, policy.Allow},
		{"a home rule over a system allow can still tighten", policy.Stack(sys, parse(t, "[[rule]]\nname = \"no\"\naction = \"jettison\"\ndecision = \"deny\"\n", "policy.toml")), agent, policy.Deny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := policy.WithDefaults(tc.p)
			v := p.Check(tc.r)
			assert.Equal(t, tc.want, v.Decision, v.String())
			traces := p.Explain(tc.r)
			require.NotEmpty(t, traces, "Explain says how the rules fared")
		})
	}
}

func TestExplainNamesTheBuiltInRuleThatDecides(t *testing.T) {
	p := policy.WithDefaults(policy.Stack(policy.System(parse(t, "", "/etc/helm/policy.toml")), parse(t, "", "policy.toml")))
	traces := p.Explain(policy.Request{Action: "reduce", Method: "claude", Status: "failed"})
	var matched []string
	for _, tr := range traces {
		if tr.Matched {
			matched = append(matched, tr.String())
		}
	}
	require.Len(t, matched, 1)
	assert.Contains(t, matched[0], `"a person reduces a closed voyage's evidence" (helm's built-in rules:`)
}

// TestBuiltInRuleRefusesAnAgentsHandoff: a voyage is handed off by a
// person; "Human" is no person; only a system rule loosens the rule, and
// a home rule may tighten it.
func TestBuiltInRuleRefusesAnAgentsHandoff(t *testing.T) {
	req := func(method string) policy.Request {
		return policy.Request{Action: policy.Handoff, Identity: "ann", Method: method}
	}
	home := parse(t, "[[rule]]\nname = \"planted\"\naction = \"handoff\"\ndecision = \"allow\"\n", "policy.toml")
	sys := policy.System(parse(t, "[[rule]]\nname = \"bots hand off\"\naction = \"handoff\"\nidentity = \"bot-*\"\ndecision = \"allow\"\n", "/etc/helm/policy.toml"))
	confirm := parse(t, "[[rule]]\nname = \"ask\"\naction = \"handoff\"\ndecision = \"confirm\"\n", "policy.toml")
	for _, tc := range []struct {
		name string
		p    *policy.Policy
		r    policy.Request
		want policy.Decision
	}{
		{"no policy: an agent is refused", nil, req("claude"), policy.Deny},
		{"no policy: Human is no person", nil, req("Human"), policy.Deny},
		{"no policy: a person", nil, req("human"), policy.Allow},
		{"other actions are the policy's alone", nil, policy.Request{Action: "push", Method: "claude"}, policy.Allow},
		{"a home rule cannot loosen it", home, req("claude"), policy.Deny},
		{"a system rule can, for what it matches", sys, policy.Request{Action: policy.Handoff, Identity: "bot-1", Method: "claude"}, policy.Allow},
		{"and only that", sys, req("claude"), policy.Deny},
		{"a home rule can tighten a person's", confirm, req("human"), policy.Confirm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := policy.WithDefaults(tc.p)
			v := p.Check(tc.r)
			assert.Equal(t, tc.want, v.Decision, v.String())
		})
	}
}
