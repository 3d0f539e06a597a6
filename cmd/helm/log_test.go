package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
)

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), got)
}

// TestLogTellsDesignExample plays DESIGN.md's example voyage through the
// CLI, at the example's times, against a local repository and the
// loopback GitHub stand-in, and compares `helm log` with the story printed
// in DESIGN.md.
func TestLogTellsDesignExample(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	for n := 1; n < 45; n++ { // the pull request will be #45
		srv.AddIssue("octo/widgets", ghtest.Issue{Title: "issue " + itoa(n)})
	}
	writeFixture(t, h)
	g.Git(t, "add", ".")
	g.Git(t, "commit", "-q", "-m", "widget")

	h.at(0)
	id := h.start("Resolve #42: fix widget crash", "--kind", "resolve-issue")
	a3b := id[:3]
	h.ok("--voyage", a3b, "observe", "rust-project", ".", "--out", "../obs.json")
	h.at(1)
	h.ok("--voyage", a3b, "bearing", "--reading", "Widget module has a null check missing in init().", "--observation", "../obs.json")
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "src/lib.rs", "pub fn init() { /* null check */ }\n")
	g.Git(t, "add", "src/lib.rs")
	h.at(14)
	h.ok("--voyage", a3b, "action", "commit", "--message", "Fix null check in widget init")
	sha := g.Git(t, "rev-parse", "HEAD")
	h.at(15)
	h.ok("--voyage", a3b, "action", "push", "--branch", "fix-widget")
	h.at(16)
	h.ok("--voyage", a3b, "action", "create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash", "--reviewer", "dyreby")
	h.at(30)
	h.ok("--voyage", a3b, "complete", "--summary", "Fixed null check in widget init. PR #45 merged.")

	story := h.ok("--voyage", a3b, "log")
	golden(t, "design-example.golden", strings.ReplaceAll(story, sha[:7], "abc1234"))

	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", a3b, "log", "--json")), &lj))
	assert.Equal(t, id, lj.Voyage.ID)
	require.Len(t, lj.Entries, 4)
	for i, kind := range []logbook.EntryKind{logbook.EntryBearing, logbook.EntryAction, logbook.EntryAction, logbook.EntryAction} {
		assert.Equal(t, kind, lj.Entries[i].Kind)
		assert.Equal(t, i+1, lj.Entries[i].N)
		assert.Equal(t, logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}, lj.Entries[i].Who)
	}
	assert.Equal(t, 45, lj.Entries[3].Action.Result.Number)
}

func TestLogJSONFieldNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("fields")
	h.ok("observe", "context", "look")
	h.ok("bearing", "--reading", "seen")
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &raw))
	assert.ElementsMatch(t, []string{"voyage", "entries"}, keys(raw))
	entry := raw["entries"].([]any)[0].(map[string]any)
	assert.ElementsMatch(t, []string{"n", "seq", "kind", "at", "who", "bearing"}, keys(entry))
	voyage := raw["voyage"].(map[string]any)
	for _, k := range []string{"id", "intent", "kind", "identity", "created", "status"} {
		assert.Contains(t, voyage, k)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLogTakesNoArguments(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("log")
	h.fails(2, "log", "extra")
}
