package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helm's built-in rule decides a handoff only when no rule of the
// policy matches it: an agent is denied, a person allowed, and a rule
// of the policy that matches decides instead, whichever way.
func TestBuiltinRuleDecidesWhatThePolicyLeaves(t *testing.T) {
	t.Parallel()
	allowAnn, err := Parse([]byte("[[rule]]\nname = \"to ann\"\naction = \"handoff\"\nargs = \"ann\"\ndecision = \"allow\"\n"), "policy.toml")
	require.NoError(t, err)
	denyAll, err := Parse([]byte("[[rule]]\nname = \"never\"\naction = \"handoff\"\ndecision = \"deny\"\n"), "policy.toml")
	require.NoError(t, err)
	other, err := Parse([]byte("[[rule]]\nname = \"no merges\"\naction = \"merge-pull-request\"\ndecision = \"deny\"\n"), "policy.toml")
	require.NoError(t, err)
	req := func(method, to string) []Request {
		return []Request{{Action: Handoff, Identity: "x", Role: "r", Method: method, Args: []string{to}}}
	}
	tests := []struct {
		name   string
		p      *Policy
		reqs   []Request
		want   Decision
		source string
	}{
		{"no policy: an agent is denied", nil, req("claude", "ann"), Deny, BuiltinSource},
		{"no policy: Human is no person", nil, req("Human", "ann"), Deny, BuiltinSource},
		{"no policy: a person", nil, req("human", "ann"), Allow, BuiltinSource},
		{"a rule about something else", other, req("claude", "ann"), Deny, BuiltinSource},
		{"a rule that allows it", allowAnn, req("claude", "ann"), Allow, "policy.toml"},
		{"a rule that does not match", allowAnn, req("claude", "bob"), Deny, BuiltinSource},
		{"a rule that denies a person", denyAll, req("human", "ann"), Deny, "policy.toml"},
		{"a stack whose layer allows it", Stack(other, allowAnn), req("claude", "ann"), Allow, "policy.toml"},
		{"other actions are the policy's alone", nil, []Request{{Action: "push", Method: "claude"}}, Allow, BuiltinSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.p.CheckWithBuiltin(tt.reqs)
			assert.Equal(t, tt.want, v.Decision, v.String())
			assert.Equal(t, tt.source, v.Source)
			traces := tt.p.ExplainWithBuiltin(tt.reqs[0])
			if v.Rule != nil {
				require.NotEmpty(t, traces)
				last := traces[len(traces)-1]
				assert.True(t, last.Matched, "the trace ends with the rule that decides")
				assert.Equal(t, v.Rule.Name, last.Rule.Name)
			}
		})
	}
}
