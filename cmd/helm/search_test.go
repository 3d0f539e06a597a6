package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/search"
)

// searchVoyages records two voyages: john-agent's about PR #45 and bob's
// review, and returns their ids.
func searchVoyages(t *testing.T, h *harness) (string, string) {
	t.Helper()
	h.at(0)
	fix := h.start("Resolve #42: fix widget crash")
	h.at(1)
	h.ok("observe", "context", "The user says init() crashes")
	h.at(2)
	h.ok("bearing", "--reading", "init() lacks a null check.")
	h.at(3)
	h.ok("note", "Opened PR #45;\nwaiting for CI.")
	h.at(4)
	review := h.start("Review PR #45", "--as", "bob")
	h.at(5)
	h.ok("--voyage", review[:8], "note", "--as", "bob", "PR #450 is another matter.")
	h.at(6)
	h.ok("--voyage", review[:8], "note", "--as", "bob", "The null check in PR #45 is right.")
	return fix, review
}

func TestSearchPrintsOneLinePerHit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fix, review := searchVoyages(t, h)
	before := hashTree(t, h.Home)

	assert.Equal(t, ""+
		"2026-02-26T17:03:00Z  a3b00001  2  note    john-agent  Opened PR #45; waiting for CI.\n"+
		"2026-02-26T17:04:00Z  a3b00002  -  voyage  bob         Review PR #45\n"+
		"2026-02-26T17:06:00Z  a3b00002  2  note    bob         The null check in PR #45 is right.\n",
		h.ok("search", "--pr", "45"))
	assert.Equal(t, ""+
		"2026-02-26T17:02:00Z  a3b00001  1  bearing  john-agent  init() lacks a null check.\n"+
		"2026-02-26T17:06:00Z  a3b00002  2  note     bob         The null check in PR #45 is right.\n",
		h.ok("search", "NULL CHECK"))
	assert.Equal(t, "2026-02-26T17:06:00Z  a3b00002  2  note  bob  The null check in PR #45 is right.\n",
		h.ok("search", "--who", "bob", "--pr", "45", "null"), "every criterion must match")
	assert.Equal(t, "2026-02-26T17:02:00Z  a3b00001  1  bearing  john-agent  init() lacks a null check.\n",
		h.ok("search", "--mark", "context:The user"))
	assert.Equal(t, "2026-02-26T17:00:00Z  a3b00001  -  voyage  john-agent  Resolve #42: fix widget crash\n",
		h.ok("search", "--issue", "42"))

	r := h.run("search", "kraken")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Empty(t, r.Stdout)
	assert.Equal(t, "no entry matches\n", r.Stderr)

	var hits []search.Hit
	require.NoError(t, json.Unmarshal([]byte(h.ok("search", "--pr", "45", "--json")), &hits))
	require.Len(t, hits, 3)
	assert.Equal(t, fix, hits[0].Voyage)
	assert.Equal(t, 2, hits[0].N)
	assert.Equal(t, search.Kind(logbook.EntryNote), hits[0].Kind)
	assert.Equal(t, "Opened PR #45; waiting for CI.", hits[0].Text)
	assert.Equal(t, review, hits[1].Voyage)
	assert.Equal(t, search.KindVoyage, hits[1].Kind)
	assert.Equal(t, "[]\n", h.ok("search", "kraken", "--json"))

	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("search", "--pr", "45", "--json")), &raw))
	assert.ElementsMatch(t, []string{"voyage", "intent", "status", "n", "seq", "at", "who", "kind", "text"}, keys(raw[0]))

	assert.Equal(t, before, hashTree(t, h.Home), "reading never writes")
}

func TestSearchUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("usage")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to search for", []string{"search"}, "search: nothing to search for: give --mark KEY, --pr N, --issue N, --who ID or TEXT"},
		{"blank text", []string{"search", "  "}, "nothing to search for"},
		{"two words", []string{"search", "null", "check"}, "one TEXT expected, got 2 arguments (quote the text)"},
		{"negative pr", []string{"search", "--pr", "-1"}, `--pr -1 is not a pull request's number`},
		{"negative issue", []string{"search", "--issue", "-2"}, `--issue -2 is not an issue's number`},
		{"pr not a number", []string{"search", "--pr", "x"}, `invalid argument "x"`},
		{"identity that is a path", []string{"search", "--who", "a/b"}, "path separator"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.fails(2, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Contains(t, r.Stderr, "\nTry: helm search --help\n")
			assert.Empty(t, r.Stdout)
		})
	}
}

// TestSearchReportsAnUnreadableVoyageAfterItsHits: hits first, then the
// voyage that could not be read, exit 1.
func TestSearchReportsAnUnreadableVoyageAfterItsHits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	searchVoyages(t, h)
	broken := "a3b000ff-0000-4000-8000-000000000255"
	require.NoError(t, os.MkdirAll(filepath.Join(h.Home, "voyages", broken, "events"), 0o700))
	r := h.fails(1, "search", "--pr", "45")
	assert.Contains(t, r.Stdout, "Opened PR #45; waiting for CI.")
	assert.Contains(t, r.Stderr, broken)
}
