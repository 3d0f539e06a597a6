package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// readmePolicy is the README's example policy.
const readmePolicy = `# Guard rules: the first that matches decides; none matching allows.
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
name = "people confirm merges"
action = "merge-pull-request"
decision = "confirm"
`

// TestGuardRules: each README rule denies, allows or asks as documented,
// through the real git and the GitHub stand-in; a refusal is recorded in
// the story, exits 4 naming the rule, and touches nothing: the stand-in
// sees no request, the remote is unchanged, the command never runs.
func TestGuardRules(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(readmePolicy), 0o600))
	h.start("Ship the widget fix")
	agent := []string{"--as", "bot", "--role", "coder", "--method", "claude"}

	// Agents may not merge: nothing reaches GitHub.
	pr := srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix widget", Head: "main"})
	srv.ClearRequests()
	r := h.fails(4, append(agent, "action", "merge-pull-request", itoa(pr))...)
	assert.Contains(t, r.Stderr, `refused by a guard rule: denied by rule "agents may not merge" (`+filepath.Join(h.Home, "policy.toml")+`:2)`)
	assert.Empty(t, srv.Requests(), "a denied action sends nothing to GitHub")

	// A person's merge needs --yes.
	r = h.fails(4, "action", "merge-pull-request", itoa(pr))
	assert.Contains(t, r.Stderr, `needs confirmation: held for confirmation by rule "people confirm merges"`)
	assert.Contains(t, r.Stderr, "Try: the same command with --yes")
	assert.Empty(t, srv.Requests())
	assert.Contains(t, h.ok("action", "merge-pull-request", itoa(pr), "--yes"), "merged PR #"+itoa(pr))

	// Nobody pushes to main: the bare remote keeps its main.
	before := g.BareRef(t, "main")
	g.WriteFile(t, "fix.txt", "fixed\n")
	g.Git(t, "add", "fix.txt")
	h.ok("action", "commit", "--message", "Fix")
	r = h.fails(4, "action", "push", "--branch", "main")
	assert.Contains(t, r.Stderr, `denied by rule "nobody pushes to main"`)
	assert.Equal(t, before, g.BareRef(t, "main"), "the remote is unchanged")
	r = h.fails(4, "action", "push") // the branch checked out is main: resolved, then denied
	assert.Contains(t, r.Stderr, `"nobody pushes to main"`)
	g.Git(t, "switch", "-q", "-c", "fix")
	h.ok("action", "push")
	assert.NotEmpty(t, g.BareRef(t, "fix"), "another branch is allowed")

	// No rm -rf: the command never runs.
	marker := filepath.Join(t.TempDir(), "ran")
	r = h.fails(4, "observe", "command", "--", "sh", "-c", "touch "+marker+"; rm -rf /nonexistent-helm-test")
	assert.Contains(t, r.Stderr, `denied by rule "no rm -rf"`)
	assert.NoFileExists(t, marker)
	h.ok("observe", "command", "--", "sh", "-c", "touch "+marker)
	assert.FileExists(t, marker)

	// Every refusal is in the story, numbered, naming its rule.
	log := h.ok("log")
	assert.Contains(t, log, "── Action 1 ── 2026-02-26T17:00:00Z · bot (coder)\n  merge-pull-request denied by rule \"agents may not merge\"")
	assert.Contains(t, log, "── Action 2 ── 2026-02-26T17:00:00Z\n  merge-pull-request held for confirmation by rule \"people confirm merges\"")
	assert.Contains(t, log, "  push denied by rule \"nobody pushes to main\"")
	assert.Contains(t, log, "  observe-command denied by rule \"no rm -rf\"")
	var show voyageShow
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "show", "--json")), &show))
	assert.Equal(t, 5, show.Logbook.Refused)

	// policy check explains.
	out := h.ok(append(agent, "policy", "check", "merge-pull-request", "--", "45")...)
	assert.Contains(t, out, "Action: merge-pull-request by bot (role coder, method claude, actor agent), args \"45\"\n")
	assert.Contains(t, out, "Decision: denied by rule \"agents may not merge\"")
	out = h.ok("policy", "check", "push", "--branch", "fix")
	assert.Contains(t, out, `rule "nobody pushes to main" (line 8): branch "fix" does not match "main"`)
	assert.Contains(t, out, "Decision: allowed: no rule matched\n")
	var pc policyCheck
	require.NoError(t, json.Unmarshal([]byte(h.ok("policy", "check", "observe-command", "--json", "--", "rm", "-rf", "x")), &pc))
	assert.Equal(t, "deny", string(pc.Decision))
	assert.Equal(t, "human", pc.Actor)
}

// TestBadPolicyIsAUsageError: a rule helm cannot read stops every
// command, naming the line; a policy named in config.toml must exist.
func TestBadPolicyIsAUsageError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("x")
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte("[[rule]]\nname = \"x\"\nacton = \"push\"\ndecision = \"deny\"\n"), 0o600))
	r := h.fails(2, "note", "hello")
	assert.Contains(t, r.Stderr, `policy.toml:3: unknown field "acton"`)
	require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "config.toml"), []byte("policy = \"rules.toml\"\n"), 0o600))
	r = h.fails(2, "note", "hello")
	assert.Contains(t, r.Stderr, "rules.toml (named in")
	h.fails(2, "policy", "check", "push")
}
