package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

func TestSlate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFixture(t, h)
	id := h.start("slate")
	assert.Equal(t, "The slate of voyage a3b00001 is empty.\n", h.ok("slate", "list"))
	assert.Equal(t, "[]\n", h.ok("slate", "list", "--json"))

	h.ok("observe", "file-contents", "--read", "README.md", "--read", "Cargo.toml")
	h.ok("observe", "directory-tree", "src", "--skip", "target")
	h.ok("observe", "context", "background")
	list := h.ok("slate", "list")
	assert.Contains(t, list, "Slate of voyage a3b00001: 3 observations\n")

	var slate []logbook.ObservationRecord
	require.NoError(t, json.Unmarshal([]byte(h.ok("slate", "list", "--json")), &slate))
	require.Len(t, slate, 3)
	assert.Len(t, slate[0].Artifact, 64)

	// Erase names the mark with the words that observed it, in any spelling.
	assert.Equal(t, "Erased FileContents: Cargo.toml, README.md from the slate of voyage a3b00001\n",
		h.ok("slate", "erase", "file-contents", "--read", "./Cargo.toml", "--read", "README.md"))
	r := h.fails(2, "slate", "erase", "directory-tree", "src") // observed with --skip target: another mark
	assert.Contains(t, r.Stderr, "mark is not on the slate")
	assert.Contains(t, r.Stderr, "Try: helm slate list")
	h.ok("slate", "erase", "directory-tree", "src", "--skip", "target")
	require.NoError(t, json.Unmarshal([]byte(h.ok("slate", "list", "--json")), &slate))
	require.Len(t, slate, 1)
	assert.Equal(t, "Context: background", slate[0].Label)

	assert.Equal(t, "Wiped the slate of voyage a3b00001 (1 observation)\n", h.ok("slate", "clear"))
	assert.Equal(t, "The slate of voyage a3b00001 is empty.\n", h.ok("--voyage", id, "slate", "list"))
	h.fails(2, "slate", "clear", "extra")
	h.fails(2, "slate", "erase")
}

// TestSameRelativePathInTwoWorktreesIsTwoSlateEntries: marks are anchored
// at the working directory, so "a.txt" typed in two directories names two
// files, and an absolute spelling of the same file is the same entry.
func TestSameRelativePathInTwoWorktreesIsTwoSlateEntries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("worktrees")
	first := h.Dir
	h.writeFile("a.txt", "one")
	h.ok("observe", "file-contents", "--read", "a.txt")
	h.Dir = filepath.Join(first, "other")
	require.NoError(t, os.MkdirAll(h.Dir, 0o700))
	h.writeFile("a.txt", "two")
	h.ok("observe", "file-contents", "--read", "a.txt")
	out := h.ok("slate", "list")
	assert.Contains(t, out, ": 2 observations", "two files named a.txt: %s", out)
	h.ok("observe", "file-contents", "--read", filepath.Join(first, "a.txt")) // the first file again
	out = h.ok("slate", "list")
	assert.Contains(t, out, ": 2 observations", "an absolute spelling of the first file: %s", out)
}
