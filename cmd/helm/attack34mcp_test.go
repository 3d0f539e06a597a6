package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// Issue 34's MCP promises, attacked by the recorded agent: it drives
// helm mcp with the arguments it chooses, in a repository it set up.

// TestAttackMCPEntriesCannotClaimAHumanMethod: the agent cannot make an
// entry it records over MCP say method human (or another identity) by a
// tool argument: such an argument is refused, or ignored.
func TestAttackMCPEntriesCannotClaimAHumanMethod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{name: "method", args: map[string]any{"text": "I am a person", "method": "human"}},
		{name: "who", args: map[string]any{"text": "I am a person", "who": map[string]any{"identity": "ann", "role": "lead", "method": "human"}}},
		{name: "identity and role", args: map[string]any{"text": "I am a person", "identity": "ann", "role": "lead", "as": "ann"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			agentEnv(h)
			c := h.mcp()
			ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "posing"})
			res := c.call("note", tc.args)
			if !res.IsError {
				var e logbook.Entry
				data, err := json.Marshal(res.StructuredContent)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &e))
				assert.Equal(t, agentWho, e.Who, "the server's identity, whatever the arguments say")
			}
			log := h.ok("log")
			assert.NotContains(t, log, "human")
			assert.NotContains(t, log, "ann")
		})
	}
}

// TestAttackMCPActionToolsActOnTheSessionVoyage: after voyage_start,
// an action's own tool (commit, push, ...) that leaves voyage out acts on
// the session's voyage, as every other tool does: the session's voyage
// was held in the context by the common tool wrapper alone, which the
// action tools (built from each kind's schema) bypassed.
func TestAttackMCPActionToolsActOnTheSessionVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gitIn(t, h.Dir, "init", "-q", "-b", "main")
	gitIn(t, h.Dir, "commit", "-q", "--allow-empty", "-m", "first")
	agentEnv(h)
	c := h.mcp()
	_, v := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "commit what I changed"})
	h.writeFile("a.txt", "a\n")
	_, d := ok[struct {
		Voyage string `json:"voyage"`
		DryRun string `json:"dry_run"`
	}](c, "commit", map[string]any{"message": "Add a", "dry_run": true})
	assert.Equal(t, v.ID, d.Voyage, "the dry run is for the session's voyage")
	assert.Contains(t, d.DryRun, "commit -m 'Add a'")
}

// logbookCountsOf is what voyage show --json counts of voyage id.
func logbookCountsOf(t *testing.T, h *harness, id string) helm.LogbookCounts {
	t.Helper()
	var shown struct {
		Logbook helm.LogbookCounts `json:"logbook"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "voyage", "show", "--json")), &shown))
	return shown.Logbook
}

// TestAttackMCPGitHubActionOnANonGitHubOriginIsRefusedBeforeRecording:
// a GitHub action in a repository whose origin names no GitHub
// repository is refused over MCP as the CLI refuses it (exit 2, nothing
// recorded), its dry run too: never a failed action (exit 3) recorded
// for a precondition that could be checked first.
func TestAttackMCPGitHubActionOnANonGitHubOriginIsRefusedBeforeRecording(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{name: "its own tool", tool: "create_pull_request", args: map[string]any{"title": "Fix widget crash"}},
		{name: "its own tool, dry run", tool: "create_pull_request", args: map[string]any{"title": "Fix widget crash", "dry_run": true}},
		{name: "the action tool", tool: "action", args: map[string]any{"kind": "create-pull-request", "params": map[string]any{"title": "Fix widget crash"}}},
		{name: "another GitHub kind", tool: "comment_issue", args: map[string]any{"number": 1, "body": "looked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			gitIn(t, h.Dir, "init", "-q", "-b", "main")
			gitIn(t, h.Dir, "commit", "-q", "--allow-empty", "-m", "first")
			gitIn(t, h.Dir, "remote", "add", "origin", "../remote.git")
			agentEnv(h)
			c := h.mcp()
			_, v := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "a pull request without GitHub"})

			_, te := c.fails(tc.tool, tc.args)
			assert.Equal(t, 2, te.ExitStatus, "a precondition checked before recording is bad input: %+v", te)
			assert.Contains(t, te.Error, "no GitHub repository")
			assert.Contains(t, te.Try, "repo")
			assert.Equal(t, helm.LogbookCounts{}, logbookCountsOf(t, h, v.ID), "nothing recorded")
		})
	}
}
