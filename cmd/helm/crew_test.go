package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/transcript"
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
	var e logbook.Entry
	require.NoError(t, json.Unmarshal([]byte(h.ok("bearing", "--reading", "A nil config.", "--json")), &e))
	assert.Equal(t, logbook.SourceUser, e.Bearing.Reading.Source, "method human: the user wrote it")
	h.ok("observe", "context", "more")
	require.NoError(t, json.Unmarshal([]byte(h.ok("--as", "bob", "--role", "coder", "--method", "claude", "bearing", "--reading", "Also the cache.", "--json")), &e))
	assert.Equal(t, logbook.SourceAgent, e.Bearing.Reading.Source, "another method: an agent wrote it")
	assert.Equal(t, 3, e.N)
	h.fails(2, "bearing", "challenge", "2", "--with", "x", "--reading", "y", "--source", "robot")
	require.NoError(t, json.Unmarshal([]byte(h.ok("--as", "bob", "--method", "claude", "bearing", "challenge", "2", "--with", "Not nil: empty.", "--reading", "An empty config.", "--source", "user", "--json")), &e))
	assert.Equal(t, logbook.SourceUser, e.Bearing.Reading.Source)

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
	var lj view.Log
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

// TestTranscriptAndStatsCommands: a parent voyage and a sub-voyage by
// another identity, merged into one timeline, and their figures.
func TestTranscriptAndStatsCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parent := h.start("Resolve #42")
	h.ok("observe", "context", "the crash report")
	h.ok("bearing", "--reading", "bob fixes it")
	h.at(5)
	sub := strings.TrimSpace(h.ok("voyage", "new", "--as", "bob", "--parent", parent, "Fix init"))
	bob := []string{"--voyage", sub, "--as", "bob", "--role", "coder", "--method", "claude"}
	h.ok(append(bob, "observe", "context", "init.go")...)
	h.ok(append(bob, "bearing", "--reading", "a nil check")...)
	h.ok(append(bob, "note", "done")...)
	h.at(9)
	h.ok("--voyage", parent, "note", "merging")

	out := h.ok("--voyage", parent, "transcript")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 8, out)
	assert.Regexp(t, `^2026-02-26T17:00:00Z  a3b00001  john-agent \(coder\)  started: Resolve #42$`, lines[0])
	assert.Regexp(t, `Bearing 1: bob fixes it \[sealed: Context: the crash report\]$`, lines[2])
	assert.Regexp(t, `^2026-02-26T17:05:00Z  a3b00002  bob \(coder\)\s+started: Fix init \(sub-voyage of a3b00001\)$`, lines[3])
	assert.Regexp(t, `a3b00001  john-agent \(coder\)  Note 2: merging$`, lines[7])
	assert.Equal(t, out, h.ok("transcript", parent[:8]), "a positional voyage is the same")
	h.fails(2, "--voyage", parent, "transcript", sub)
	h.fails(2, "transcript", "--all", sub)
	assert.Len(t, strings.Split(strings.TrimSpace(h.ok("transcript", "--all", "--who", "bob")), "\n"), 4)
	assert.Len(t, strings.Split(strings.TrimSpace(h.ok("transcript", "--all", "--since", "2026-02-26T17:09:00Z")), "\n"), 1)
	h.fails(2, "transcript", "--all", "--since", "yesterday")

	jsonl := h.ok("transcript", "--all", "--json")
	var first transcript.Line
	require.NoError(t, json.Unmarshal([]byte(strings.Split(jsonl, "\n")[0]), &first))
	assert.Equal(t, parent, first.VoyageID)
	assert.Equal(t, uint64(1), first.Seq)

	stats := h.ok("stats", parent)
	assert.Contains(t, stats, "Voyage a3b00001 (Resolve #42) with 1 sub-voyage: a3b00002\n")
	// Stage 0: the main's observation and bearing; stage 1: bob's three
	// steps and the main's note.
	assert.Contains(t, stats, "  Stages:          2\n")
	assert.Contains(t, stats, "  Steps:           6 total, 6 critical, 0 overhead\n")
	assert.Contains(t, stats, "  Parallelism:     1.00 (total / critical)\n", "every step on the critical path")
	assert.Regexp(t, `  bob\s+coder\s+3\s+1\s+1\s+0\s+0\s+0\s+1\s+0s\n`, stats)
	var js []transcript.Stats
	require.NoError(t, json.Unmarshal([]byte(h.ok("stats", "--all", "--json")), &js))
	require.Len(t, js, 1)
	assert.Equal(t, 1.0, js[0].Parallelism)
}
