package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// TestCrewRecordFromTheCommandLine: a note, an action's rationale, the
// source of readings, entries by other identities, log --who, a
// resumed voyage, and a judgement.
func TestCrewRecordFromTheCommandLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("Resolve #42")
	assert.Equal(t, "Note 1 recorded for voyage a3b00001\n", h.ok("note", "Reproduced the crash."))
	h.fails(2, "note")
	h.fails(2, "note", "  ")

	h.ok("observe", "context", "the crash report")
	var e helm.Entry
	require.NoError(t, json.Unmarshal([]byte(h.ok("bearing", "--reading", "A nil config.", "--json")), &e))
	assert.Equal(t, helm.SourceUser, e.Bearing.Reading.Source, "method human: the user wrote it")
	h.ok("observe", "context", "more")
	require.NoError(t, json.Unmarshal([]byte(h.ok("--as", "bob", "--role", "coder", "--method", "claude", "bearing", "--reading", "Also the cache.", "--json")), &e))
	assert.Equal(t, helm.SourceAgent, e.Bearing.Reading.Source, "another method: an agent wrote it")
	assert.Equal(t, 3, e.N)
	h.fails(2, "bearing", "challenge", "2", "--with", "x", "--reading", "y", "--source", "robot")
	require.NoError(t, json.Unmarshal([]byte(h.ok("--as", "bob", "--method", "claude", "bearing", "challenge", "2", "--with", "Not nil: empty.", "--reading", "An empty config.", "--source", "user", "--json")), &e))
	assert.Equal(t, helm.SourceUser, e.Bearing.Reading.Source)

	h.fails(3, "action", "commit", "--message", "Fix", "--why", "the test passes") // not a repository: a failed action
	log := h.ok("log")
	assert.Contains(t, log, "── Note 1 ── ")
	assert.Contains(t, log, "── Bearing 3 ── 2026-02-26T17:00:00Z · bob (coder)\n")
	assert.Contains(t, log, "── Action 4 ── ")
	assert.Contains(t, log, "  commit failed: ")
	assert.Contains(t, log, "  Why: the test passes\n")

	bobs := h.ok("log", "--who", "bob")
	assert.Contains(t, bobs, "── Bearing 3 ── ")
	assert.NotContains(t, bobs, "── Note 1 ── ")
	assert.Contains(t, h.ok("log", "--who", "nobody"), "(no entries by nobody)")
	var lj logJSON
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--who", "bob", "--json")), &lj))
	require.Len(t, lj.Entries, 1)
	assert.Equal(t, 3, lj.Entries[0].N)

	// Blocked, then resumed by bob with a reason.
	h.ok("complete", "--outcome", "blocked", "--summary", "Waiting for review.")
	h.fails(2, "voyage", "resume", "extra")
	assert.Equal(t, "Voyage a3b00001 is active again\n", h.ok("--as", "bob", "voyage", "resume", "--reason", "Reviewed."))
	r := h.fails(1, "--voyage", id, "voyage", "resume")
	assert.Contains(t, r.Stderr, "cannot be resumed: it is active already")
	log = h.ok("log")
	assert.Contains(t, log, "Lifecycle:\n")
	assert.Contains(t, log, " blocked by john-agent: Waiting for review.\n")
	assert.Contains(t, log, " resumed by bob: Reviewed.\n")
	h.ok("complete", "--summary", "Fixed.")
	r = h.fails(1, "--voyage", id, "voyage", "resume")
	assert.Contains(t, r.Stderr, "completed")
	assert.Contains(t, r.Stderr, "which is final")

	// A judge who took no part, citing entries.
	h.fails(2, "judge", "--score", "11", "--dimension", "care", "--evidence", "1", "x")
	h.fails(2, "judge", "--score", "5", "--dimension", "care", "--evidence", "one", "x")
	h.fails(2, "judge", "--score", "5", "--dimension", "care", "x")
	r = h.fails(1, "--voyage", id, "judge", "--score", "5", "--dimension", "care", "--evidence", "1", "x")
	assert.Contains(t, r.Stderr, "the judge took part in the voyage: john-agent recorded events in it")
	r = h.fails(2, "--voyage", id, "--as", "carol", "--role", "judge", "--method", "human", "judge", "--score", "8", "--dimension", "care", "--evidence", "1,9", "x")
	assert.Contains(t, r.Stderr, "evidence 9 is not an entry of the story")
	out := h.ok("--voyage", id, "--as", "carol", "--role", "judge", "--method", "human", "judge", "--score", "8", "--dimension", "care", "--evidence", "1,3", "Careful work.")
	assert.Equal(t, "Judgement 5 recorded for voyage a3b00001: care 8/10\n", out)
	log = h.ok("--voyage", id, "log")
	assert.Contains(t, log, "── Judgement 5 ── 2026-02-26T17:00:00Z · carol (judge)\n  care: 8/10 (evidence: 1, 3)\n  Careful work.\n")
}

// TestSubVoyageInARepository: voyage new --parent records the parent;
// started in a git repository, a voyage records it.
func TestSubVoyageInARepository(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=a@example.com", "-c", "user.name=A", "commit", "-q", "--allow-empty", "-m", "first"},
		{"remote", "add", "origin", "git@github.com:octo/widgets.git"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.Dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	head, err := exec.Command("git", "-C", h.Dir, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	parent := h.start("Resolve #42")
	sub := h.start("Write the test", "--parent", parent[:8])
	var info helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", sub, "voyage", "show", "--json")), &struct {
		Voyage *helm.VoyageInfo `json:"voyage"`
	}{&info}))
	assert.Equal(t, parent, info.Parent)
	assert.Equal(t, "octo/widgets", info.Repo)
	assert.Equal(t, strings.TrimSpace(string(head)), info.Base)
	assert.Equal(t, "main", info.Branch)
	assert.Contains(t, h.ok("voyage", "list"), "Write the test (part of a3b00001)")
	r := h.fails(2, "voyage", "new", "--as", "ann", "--parent", "ffff", "orphan")
	assert.Contains(t, r.Stderr, "parent voyage")
}
