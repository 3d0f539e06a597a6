package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent picks `voyage fork`'s arguments: an entry number that is
// negative, zero, or past any integer; an origin given as a path into
// the home or out of it. Each is refused as bad input (exit 2), prints
// nothing on stdout, says what to do, and starts no voyage.
func TestAttackVoyageForkArgumentsTheAgentPicks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := notedVoyage(t, h)
	before := h.ok("voyage", "list", "--status", "all")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a negative entry", []string{"voyage", "fork", id, "--at", "-1", "--as", "bob", "What if"}},
		{"entry zero", []string{"voyage", "fork", id, "--at", "0", "--as", "bob", "What if"}},
		{"an entry past any integer", []string{"voyage", "fork", id, "--at", "99999999999999999999999", "--as", "bob", "What if"}},
		{"the origin as a path in the home", []string{"voyage", "fork", filepath.Join(h.Home, "voyages", id), "--at", "1", "--as", "bob", "What if"}},
		{"the origin as a relative path out of the home", []string{"voyage", "fork", filepath.Join("..", id), "--at", "1", "--as", "bob", "What if"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(2, tc.args...)
			assert.Empty(t, r.Stdout)
			assert.Contains(t, r.Stderr, "Try: ")
		})
	}
	assert.Equal(t, before, h.ok("voyage", "list", "--status", "all"), "no voyage was started")
}

// `log --until-damage` at its edges: on an intact voyage it tells the
// whole story, no DAMAGED line, exit 0; on a voyage damaged at its first
// record it shows no entry, both DAMAGED lines say seq 0, and it exits
// 1; neither writes a byte.
func TestAttackLogUntilDamageAtItsEdges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	intact := notedVoyage(t, h)
	damaged := notedVoyage(t, h)
	dir := filepath.Join(h.Home, "voyages", damaged)
	segs, err := filepath.Glob(filepath.Join(dir, "events", "*.seg"))
	require.NoError(t, err)
	b, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	i := strings.Index(string(b), "Fix the widget")
	require.Positive(t, i)
	b[i] ^= 0x20
	require.NoError(t, os.WriteFile(segs[0], b, 0o600))
	before := filesOf(t, h.Home)

	out := h.ok("log", "--until-damage", intact)
	assert.NotContains(t, out, "DAMAGED")
	assert.Contains(t, out, "delta: tests pass")

	r := h.fails(1, "log", "--until-damage", damaged)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(lines[0], "DAMAGED: shown up to seq 0;"), "%q", lines[0])
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "DAMAGED: shown up to seq 0;"), "%q", lines[len(lines)-1])
	assert.NotContains(t, r.Stdout, "alpha")
	assert.Equal(t, before, filesOf(t, h.Home), "reading never writes")
}
