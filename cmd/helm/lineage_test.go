package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notedVoyage starts a voyage with four notes, a minute apart.
func notedVoyage(t *testing.T, h *harness) string {
	t.Helper()
	h.at(0)
	id := h.start("Fix the widget")
	for i, n := range []string{"alpha: reproduced the crash", "bravo: found the null check", "charlie: wrote the guard", "delta: tests pass"} {
		h.at(i + 1)
		h.ok("--voyage", id, "note", n)
	}
	return id
}

func TestVoyageForkPrintsOnlyItsIdAndShowNamesTheOrigin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := notedVoyage(t, h)
	h.at(10)
	out := h.ok("voyage", "fork", id[:8], "--at", "2", "--as", "bob", "What if the guard goes in init")
	fork := strings.TrimSpace(out)
	require.Len(t, fork, 36)
	assert.Equal(t, fork+"\n", out, "only the new voyage's id, as voyage new prints it")
	h.at(11)
	h.ok("--voyage", fork, "note", "--as", "bob", "echo: the guard in init instead")

	golden(t, "voyage-show-fork.golden", h.ok("--voyage", fork, "voyage", "show"))
	golden(t, "log-fork.golden", h.ok("--voyage", fork, "log"))
	verify := h.ok("voyage", "verify", fork)
	assert.Contains(t, verify, "  origin:    checked against voyage "+id+" up to record 3\n")
	assert.Contains(t, h.ok("--voyage", id, "log"), "delta: tests pass", "the origin goes on as it was")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no --at", []string{"voyage", "fork", id, "What if"}, 2, "--at N names the entry"},
		{"an entry the origin lacks", []string{"voyage", "fork", id, "--at", "9", "--as", "bob", "What if"}, 2, "has no entry 9 (its story holds 4)"},
		{"no intent", []string{"voyage", "fork", "--at", "1"}, 2, "say what the fork is for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(tc.code, tc.args...)
			assert.Contains(t, r.Stderr, tc.want)
			assert.Empty(t, r.Stdout)
		})
	}
}

// A damaged voyage: log --until-damage tells what can still be read,
// between two DAMAGED lines, and exits 1; salvage carries it into a new
// voyage that names what was lost, and leaves the damaged one as it was.
func TestLogUntilDamageAndSalvageOfADamagedVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := notedVoyage(t, h)
	dir := filepath.Join(h.Home, "voyages", id)
	segs, err := filepath.Glob(filepath.Join(dir, "events", "*.seg"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	b, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	i := strings.Index(string(b), "charlie")
	require.Positive(t, i)
	b[i] ^= 0x20
	require.NoError(t, os.WriteFile(segs[0], b, 0o600))
	before := filesOf(t, dir)
	norm := strings.NewReplacer(h.Home, "<home>")

	r := h.fails(1, "log", "--until-damage", id)
	golden(t, "log-until-damage.golden", norm.Replace(r.Stdout))
	assert.Contains(t, r.Stderr, "its story is shown up to seq 3, before the first damage")
	assert.Contains(t, r.Stderr, "Try: helm voyage salvage "+id)
	assert.Equal(t, before, filesOf(t, dir), "reading never writes")
	h.fails(1, "--voyage", id, "log") // the plain log refuses a damaged voyage

	h.at(20)
	r = h.run("voyage", "salvage", id, "--as", "bob")
	require.Equal(t, 0, r.Code, "%s", r)
	salvaged := strings.TrimSpace(r.Stdout)
	require.Len(t, salvaged, 36)
	assert.Contains(t, r.Stderr, "Salvaged voyage "+id+" up to record 3 (2 entries) into voyage "+salvaged)
	assert.Contains(t, r.Stderr, "Lost: from record 4")
	assert.Equal(t, before, filesOf(t, dir), "the damaged voyage is untouched")
	golden(t, "voyage-show-salvage.golden", norm.Replace(h.ok("--voyage", salvaged, "voyage", "show")))
	assert.Contains(t, h.ok("voyage", "verify", salvaged), "OK: nothing damaged")

	r = h.fails(2, "voyage", "salvage", salvaged, "--as", "bob")
	assert.Contains(t, r.Stderr, "verify finds no damage")
}
