package policy_test

import (
	"fmt"

	"github.com/helmlog/helm/policy"
)

// Parse reads the rules; Check asks them about one action about to run.
func ExampleParse() {
	p, err := policy.Parse([]byte(`
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
name = "merges need a person's yes"
action = "merge-pull-request"
decision = "confirm"
`), "policy.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []policy.Request{
		{Action: "merge-pull-request", Identity: "john-agent", Method: "claude-code", Repo: "octo/widgets", Args: []string{"45"}},
		{Action: "merge-pull-request", Identity: "john", Method: "human", Repo: "octo/widgets", Args: []string{"45"}},
		{Action: "push", Identity: "john", Method: "human", Repo: "octo/widgets", Branch: "main", Args: []string{"origin", "main"}},
		{Action: "push", Identity: "john-agent", Method: "claude-code", Repo: "octo/widgets", Branch: "fix-widget", Args: []string{"origin", "fix-widget"}},
	} {
		fmt.Println(p.Check(r))
	}
	// Output:
	// denied by rule "agents may not merge" (policy.toml:2)
	// held for confirmation by rule "merges need a person's yes" (policy.toml:14)
	// denied by rule "nobody pushes to main" (policy.toml:8)
	// allowed: no rule matched
}

// Explain says why a rule did or did not apply.
func ExamplePolicy_Explain() {
	p, err := policy.Parse([]byte(`
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
`), "policy.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range p.Explain(policy.Request{Action: "observe-command", Method: "codex", Args: []string{"sh", "-c", "rm -rf build"}}) {
		fmt.Println(t)
	}
	// Output:
	// rule "nobody pushes to main" (line 2): action "observe-command" does not match "push"
	// rule "no rm -rf" (line 8): matches: deny
}
