package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	require.Equal(t, 1, r.Code, "no match exits 1, as grep does: %s", r)
	assert.Empty(t, r.Stdout)
	assert.Equal(t, "helm: search: 2 voyages read whole: the content index does not cover them as they are now\n"+
		"Try: helm search --reindex\n"+
		"helm: search: no entry matches\n", r.Stderr)
	assert.Equal(t, h.ok("search", "NULL CHECK"), h.ok("search", "null", "check"), "words may come as one argument or several")

	var hits []search.Hit
	require.NoError(t, json.Unmarshal([]byte(h.ok("search", "--pr", "45", "--json")), &hits))
	require.Len(t, hits, 3)
	assert.Equal(t, fix, hits[0].Voyage)
	assert.Equal(t, 2, hits[0].N)
	assert.Equal(t, search.Kind(logbook.EntryNote), hits[0].Kind)
	assert.Equal(t, "Opened PR #45; waiting for CI.", hits[0].Text)
	assert.Equal(t, review, hits[1].Voyage)
	assert.Equal(t, search.KindVoyage, hits[1].Kind)
	r = h.fails(1, "search", "kraken", "--json")
	assert.Equal(t, "[]\n", r.Stdout, "no match: an empty list, and exit 1")

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
		{"nothing to search for", []string{"search"}, "search: nothing to search for: give WORDS, --mark KEY, --pr N, --issue N or --who ID"},
		{"blank text", []string{"search", "  "}, "nothing to search for"},
		{"a place to look unknown", []string{"search", "--in", "logs", "x"}, `--in "logs": words are looked for in "entries" or "sightings"`},
		{"a place to look without words", []string{"search", "--in", "sightings", "--who", "bob"}, "--in sightings narrows WORDS"},
		{"negative limit", []string{"search", "--limit", "-1", "x"}, "--limit -1 is not a number of hits"},
		{"all without reindex", []string{"search", "--all", "x"}, "--all goes with --reindex"},
		{"words of no letter", []string{"search", "--", "--"}, "hold no word"},
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

// TestSearchFindsWordsInsideSightings: words inside a file's contents and
// a command's output, found with the content index and without; the hit
// names the voyage, the bearing, the mark and the artifact, and shows the
// word in a snippet; a jettisoned sighting is never shown.
func TestSearchFindsWordsInsideSightings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.at(0)
	id := h.start("Chase the crash")
	h.writeFile("config.yaml", "retries: 3\nbackend: quagga-cluster\n")
	h.at(1)
	h.ok("observe", "file-contents", "--read", "config.yaml")
	h.at(2)
	h.ok("observe", "command", "--", "echo", "segfault in quagga daemon")
	h.at(3)
	h.ok("bearing", "--reading", "The quagga backend crashes.")

	command := `command:"` + h.Dir + `" "echo" "segfault in quagga daemon"`
	want := "" +
		"2026-02-26T17:01:00Z  a3b00001  1  sighting  john-agent  file-contents:\"" + filepath.Join(h.Dir, "config.yaml") + "\"  retries: 3 backend: quagga-cluster\n" +
		"2026-02-26T17:02:00Z  a3b00001  1  sighting  john-agent  " + command + "  segfault in quagga daemon\n" +
		"2026-02-26T17:03:00Z  a3b00001  1  bearing   john-agent  The quagga backend crashes.\n"
	r := h.run("search", "quagga")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Equal(t, want, r.Stdout)
	assert.Contains(t, r.Stderr, "1 voyage read whole")

	before := hashTree(t, h.Home)
	h.ok("search", "--in", "sightings", "segfault")
	assert.Equal(t, before, hashTree(t, h.Home), "searching never writes, not even the index")

	r = h.run("search", "--reindex")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "indexed 1 voyage")
	r = h.run("search", "quagga")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Equal(t, want, r.Stdout, "the index gives what reading gave")
	assert.Empty(t, r.Stderr, "nothing read whole")

	assert.Equal(t, "2026-02-26T17:03:00Z  a3b00001  1  bearing  john-agent  The quagga backend crashes.\n", h.ok("search", "--in", "entries", "quagga"))
	var hits []search.Hit
	require.NoError(t, json.Unmarshal([]byte(h.ok("search", "--in", "sightings", "segfault", "--json")), &hits))
	require.Len(t, hits, 1)
	assert.Equal(t, id, hits[0].Voyage)
	assert.Equal(t, search.KindSighting, hits[0].Kind)
	assert.Equal(t, command, hits[0].Mark)
	assert.Len(t, hits[0].Artifact, 64)
	assert.Equal(t, "segfault in quagga daemon", hits[0].Snippet)

	r = h.run("search", "quagga", "--limit", "1")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Equal(t, 1, strings.Count(r.Stdout, "\n"))
	assert.Contains(t, r.Stderr, "more hits than the 1 shown")

	h.at(4)
	h.ok("artifact", "jettison", hits[0].Artifact[:12], "--reason", "holds a host name")
	r = h.run("search", "segfault")
	require.Equal(t, 1, r.Code, "%s", r)
	assert.Empty(t, r.Stdout, "the jettisoned sighting is not shown")
	assert.Equal(t, "helm: search: no entry matches\n", r.Stderr, "jettison brought the index up to date: nothing read whole")
	r = h.run("search", "--scan", "segfault")
	require.Equal(t, 1, r.Code, "%s", r)
	assert.Empty(t, r.Stdout, "nor when every voyage is read whole")
}

// TestCompleteIndexesTheVoyageForSearch: helm complete brings the content
// index up to date with the voyage it completed, so that a search reads
// no voyage whole.
func TestCompleteIndexesTheVoyageForSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("Look around")
	h.writeFile("notes.txt", "the ocelot sleeps")
	h.ok("observe", "file-contents", "--read", "notes.txt")
	h.ok("bearing", "--reading", "Quiet.")
	r := h.run("search", "ocelot")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "1 voyage read whole")
	h.ok("complete", "--summary", "Done.")
	r = h.run("search", "ocelot")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stdout, "the ocelot sleeps")
	assert.Empty(t, r.Stderr)
}
