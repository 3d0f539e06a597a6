package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDamagedSightingIsNotShown: a sighting whose stored bytes are
// damaged is read to its end and checked before any of it is shown, by
// every form that shows it.
func TestDamagedSightingIsNotShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("show me")
	// Many distinct lines compress too little to be kept in the event
	// log: the sighting goes to the pack file, damaged below.
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("line " + itoa(i*7919%100003) + "\n")
	}
	h.writeFile("a.txt", b.String())
	h.ok("observe", "file-contents", "--read", "a.txt")
	pack := filepath.Join(h.Home, "voyages", id, "artifacts.pack")
	data, err := os.ReadFile(pack)
	require.NoError(t, err)
	data[len(data)-3] ^= 0xff
	require.NoError(t, os.WriteFile(pack, data, 0o600))
	for _, args := range [][]string{{"sighting", "show", "file-contents"}, {"sighting", "show", "file-contents", "--json"}} {
		r := h.fails(1, args...)
		assert.Empty(t, r.Stdout, "%v: nothing shown", args)
		assert.Contains(t, r.Stderr, "damaged", "%v", args)
		assert.Contains(t, r.Stderr, id, "%v: the voyage named", args)
	}
}
