package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

func TestBearing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFixture(t, h)
	h.start("bearing")
	h.ok("observe", "rust-project", ".")
	out := h.ok("bearing", "--reading", "Widget module has a null check missing in init().")
	assert.Equal(t, "Bearing 1 taken for voyage a3b00001\n  Mark: RustProject @ .\n  Reading: Widget module has a null check missing in init().\n", out)
	assert.Contains(t, h.ok("slate", "list"), "is empty", "taking a bearing wipes the slate")

	r := h.fails(1, "bearing", "--reading", "nothing to see")
	assert.Contains(t, r.Stderr, "slate is empty")
	assert.Contains(t, r.Stderr, "Try: helm observe KIND ... first, or pass --observation FILE")
}

func TestBearingWithObservationFiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFixture(t, h)
	// Observations written on another voyage (or by another tool) ...
	other := h.start("elsewhere")
	h.ok("observe", "rust-project", ".", "--out", "obs.json")
	obs, err := os.ReadFile(filepath.Join(h.Dir, "obs.json"))
	require.NoError(t, err)
	h.ok("--voyage", other, "complete", "--summary", "done")
	// ... are sealed into a bearing of this one, from a file and from stdin.
	h.start("here")
	h.ok("observe", "context", "on the slate")
	h.Stdin = `{"mark":{"kind":"context","description":"from stdin"},"sighting":{"kind":"context","description":"from stdin"},"observed_at":"2026-02-26T17:00:00Z"}`
	var e logbook.Entry
	require.NoError(t, json.Unmarshal([]byte(h.ok("bearing", "--reading", "three looks", "--observation", "obs.json", "--observation", "-", "--json")), &e))
	var labels []string
	for _, o := range e.Bearing.Observations {
		labels = append(labels, o.Label)
	}
	assert.ElementsMatch(t, []string{"RustProject @ .", "Context: on the slate", "Context: from stdin"}, labels)
	assert.Equal(t, 1, e.N)
	assert.Equal(t, logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}, e.Who)
	_ = obs

	r := h.fails(2, "bearing", "--reading", "x", "--observation", "missing.json")
	assert.Contains(t, r.Stderr, "missing.json")
	h.writeFile("bad.json", `{"mark": 1}`)
	r = h.fails(2, "bearing", "--reading", "x", "--observation", "bad.json")
	assert.Contains(t, r.Stderr, "--observation bad.json")
	r = h.fails(2, "bearing", "--reading", "x", "--observation", "-", "--observation", "-")
	assert.Contains(t, r.Stderr, "only once")
}

func TestBearingChallenge(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("challenge")
	h.ok("observe", "context", "look")
	h.ok("bearing", "--reading", "first reading")
	out := h.ok("bearing", "challenge", "1", "--with", "it misses the point", "--reading", "second reading")
	assert.Equal(t, "Bearing 1 challenged on voyage a3b00001\n  Mark: Context: look\n  Reading: second reading\n  Was: first reading\n", out)
	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &lj))
	require.Len(t, lj.Entries, 1)
	r := lj.Entries[0].Bearing.Reading
	assert.Equal(t, "second reading", r.Text)
	require.Len(t, r.History, 1)
	assert.Equal(t, "it misses the point", r.History[0].ChallengedWith)
	assert.Contains(t, h.ok("log"), "(reading challenged 1×; last feedback: it misses the point)")

	tests := []struct {
		name string
		code int
		args []string
		want string
	}{
		{"no such bearing", 2, []string{"bearing", "challenge", "7", "--with", "f", "--reading", "r"}, "no such bearing"},
		{"not a number", 2, []string{"bearing", "challenge", "one", "--with", "f", "--reading", "r"}, "positive number"},
		{"missing feedback", 2, []string{"bearing", "challenge", "1", "--reading", "r"}, "--with FEEDBACK"},
		{"missing number", 2, []string{"bearing", "challenge", "--with", "f", "--reading", "r"}, "number N"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Contains(t, h.fails(tt.code, tt.args...).Stderr, tt.want)
		})
	}
}
