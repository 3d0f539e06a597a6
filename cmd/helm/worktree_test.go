package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
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

// TestVoyageCleanRefusesToLoseWork: voyage clean, without --force,
// refuses (exit 1, nothing removed, nothing recorded) a worktree that
// holds ignored, untracked or changed files, or commits no branch keeps,
// and names them with what to do; --force removes it and records that it
// was forced. A clean worktree, or one whose commits are on its branch,
// is removed (exit 0), its branch kept.
func TestVoyageCleanRefusesToLoseWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(t *testing.T, g *ghtest.GitRepo, wt string)
		want []string // in the refusal; none: removed
	}{
		{name: "clean", make: func(*testing.T, *ghtest.GitRepo, string) {}},
		{name: "a commit on its branch", make: func(t *testing.T, g *ghtest.GitRepo, wt string) {
			require.NoError(t, os.WriteFile(filepath.Join(wt, "fix.go"), []byte("package fix\n"), 0o644))
			g.Git(t, "-C", wt, "add", "fix.go")
			g.Git(t, "-C", wt, "commit", "-q", "-m", "Fix")
		}},
		{name: "an ignored file", make: func(t *testing.T, g *ghtest.GitRepo, wt string) {
			require.NoError(t, os.WriteFile(filepath.Join(wt, ".gitignore"), []byte(".env\n"), 0o644))
			g.Git(t, "-C", wt, "add", ".gitignore")
			g.Git(t, "-C", wt, "commit", "-q", "-m", "Ignore .env")
			require.NoError(t, os.WriteFile(filepath.Join(wt, ".env"), []byte("TOKEN=local\n"), 0o600))
		}, want: []string{"\n  ignored: .env\n", "Try: move the ignored files you need out of it; or helm voyage clean ", " --force (loses what is listed)"}},
		{name: "a commit on a detached HEAD", make: func(t *testing.T, g *ghtest.GitRepo, wt string) {
			g.Git(t, "-C", wt, "checkout", "-q", "--detach")
			g.Git(t, "-C", wt, "commit", "-q", "--allow-empty", "-m", "Try something")
		}, want: []string{"\n  commit no branch or tag keeps: ", " Try something\n", "Try: git -C ", " branch NAME ", " (keeps the commits); or helm voyage clean "}},
		{name: "an untracked file", make: func(t *testing.T, g *ghtest.GitRepo, wt string) {
			require.NoError(t, os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("todo\n"), 0o644))
		}, want: []string{"\n  untracked: notes.txt\n", "Try: commit the files listed; or helm voyage clean "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, _, g := newGitHubHarness(t)
			wt := filepath.Join(t.TempDir(), "wt")
			id := h.start("work in a worktree", "--worktree", wt, "--branch", "helm-wt")
			h.ok("--voyage", id, "complete", "--summary", "done")
			tt.make(t, g, wt)
			if len(tt.want) == 0 {
				assert.Contains(t, h.ok("voyage", "clean", id), "Removed the worktree "+wt)
				assert.NoDirExists(t, wt)
				assert.Contains(t, g.Git(t, "branch", "--list", "helm-wt"), "helm-wt", "its branch is kept")
				assert.NotContains(t, h.ok("voyage", "export", id, "--format", "jsonl"), `"forced":true`)
				return
			}
			before := h.ok("voyage", "export", id, "--format", "jsonl")
			r := h.fails(1, "voyage", "clean", id)
			assert.Contains(t, r.Stderr, "holds what removing it would lose; nothing was removed:")
			for _, w := range tt.want {
				assert.Contains(t, r.Stderr, w)
			}
			assert.DirExists(t, wt, "nothing removed")
			assert.Equal(t, before, h.ok("voyage", "export", id, "--format", "jsonl"), "nothing recorded")

			assert.Contains(t, h.ok("voyage", "clean", id, "--force"), "Removed the worktree "+wt)
			assert.NoDirExists(t, wt)
			assert.Contains(t, h.ok("voyage", "export", id, "--format", "jsonl"), `"forced":true`)
		})
	}
}
