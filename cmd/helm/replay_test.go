package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVoyageReplay: record the views of a voyage directory, replay it
// (agrees), then replay it against views a different fold would give
// (diverges: exit 1, the event and the field named).
func TestVoyageReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("Resolve #42")
	h.ok("observe", "context", "the crash report")
	h.ok("bearing", "--reading", "A nil config.")
	h.ok("note", "done")
	// A recording: the voyage directory copied out of the home (a test
	// keeps it under testdata/), its views beside it.
	dir := filepath.Join(t.TempDir(), "recorded", "voyages", id)
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(h.Home, "voyages", id))))

	// Without recorded views, it folds and says how to record them.
	out := h.ok("voyage", "replay", dir)
	assert.Contains(t, out, "no recorded views to compare")
	assert.Contains(t, out, "helm voyage replay --record "+dir)
	before := hashTree(t, filepath.Dir(dir))
	assert.Contains(t, h.ok("voyage", "replay", "--record", dir), "Recorded the views of ")
	assert.FileExists(t, dir+".views.json")
	after := hashTree(t, filepath.Dir(dir))
	delete(after, filepath.Base(dir)+".views.json")
	assert.Equal(t, before, after, "recording writes the views file alone")
	recorded := hashTree(t, filepath.Dir(dir))
	assert.Contains(t, h.ok("voyage", "replay", dir), "OK: ")
	assert.Equal(t, recorded, hashTree(t, filepath.Dir(dir)), "replaying writes nothing")

	// Views recorded by a fold that read the bearing otherwise.
	path := dir + ".views.json"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"text": "A nil config."`, `"text": "Something else."`, 1)), 0o644))
	r := h.fails(1, "voyage", "replay", dir)
	assert.Contains(t, r.Stdout, "the views diverge after event")
	assert.Contains(t, r.Stdout, `Logbook[0].bearing.reading.text: - "Something else." + "A nil config."`)
	assert.Contains(t, r.Stderr, "helm: replay ")
	var res replayResult
	r = h.fails(1, "voyage", "replay", dir, "--json")
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.False(t, res.Agrees)
	assert.NotEmpty(t, res.Fields)
	h.fails(2, "voyage", "replay")
}
