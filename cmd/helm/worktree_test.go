package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubVoyageInItsOwnWorktree: a sub-voyage gets a worktree of its own
// too; inside it, commands act on the sub-voyage while its parent is
// active, and an action taken there is undone there.
func TestSubVoyageInItsOwnWorktree(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	lead := h.start("lead")
	dir := filepath.Join(t.TempDir(), "wt-sub")
	sub := h.start("sub", "--parent", lead, "--worktree", dir, "--branch", "helm-sub")
	base := g.Git(t, "rev-parse", "HEAD")

	h.Dir = dir
	cur := h.ok("voyage", "current")
	assert.Contains(t, cur, sub[:8])
	assert.Contains(t, cur, "the working directory is in its worktree")
	show := h.ok("voyage", "show", "--json")
	assert.Contains(t, show, `"parent": "`+lead+`"`)
	assert.Contains(t, show, `"branch": "helm-sub"`)

	h.writeFile("widget.rs", "fixed\n")
	g.Git(t, "-C", dir, "add", "widget.rs")
	h.ok("action", "commit", "-m", "Fix")
	require.NotEqual(t, base, g.Git(t, "-C", dir, "rev-parse", "HEAD"))
	assert.Contains(t, h.ok("undo", "1"), "reset helm-sub to "+base[:7])
	assert.Equal(t, base, g.Git(t, "-C", dir, "rev-parse", "HEAD"))
	assert.Equal(t, base, g.Git(t, "rev-parse", "HEAD"), "the main checkout is untouched")

	h.Dir = g.Dir
	assert.Contains(t, h.ok("--voyage", lead, "log"), "Status: active")
	assert.NotContains(t, h.ok("--voyage", lead, "log"), "Action 1")
}
