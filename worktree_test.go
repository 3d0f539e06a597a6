package helm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
)

// git runs the real git in dir and returns its output, trimmed.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@helm.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// worktreeVoyage makes a repository with a commit and a .gitignore
// (.env, *.tmp), a worktree of it on branch helm/wt, and a completed
// voyage that owns the worktree; it returns the voyage and the worktree.
func worktreeVoyage(t *testing.T) (*helm.Voyage, string) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	repo, wt := filepath.Join(root, "repo"), filepath.Join(root, "wt")
	require.NoError(t, os.Mkdir(repo, 0o755))
	git(t, repo, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".env\n*.tmp\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "widget.go"), []byte("package widget\n"), 0o644))
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "first")
	git(t, repo, "worktree", "add", "-q", "-b", "helm/wt", wt)
	h, err := helm.Open(filepath.Join(root, "home"), fixedOptions())
	require.NoError(t, err)
	v, err := h.Start(ctx, "work in a worktree", helm.OpenWaters, who, &helm.StartOptions{Dir: repo, Worktree: wt, Branch: "helm/wt", Base: git(t, repo, "rev-parse", "HEAD")})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
	return v, wt
}

// worktreeWork is what a test leaves in a worktree, and what removing it
// without force must then say.
var worktreeWork = []struct {
	name string
	make func(t *testing.T, wt string)
	// refused: what the WorktreeError holds; nil: removed.
	refused func(t *testing.T, wt string, e *helm.WorktreeError)
}{
	{name: "nothing", make: func(*testing.T, string) {}},
	{name: "a commit on its branch", make: func(t *testing.T, wt string) {
		require.NoError(t, os.WriteFile(filepath.Join(wt, "widget.go"), []byte("package widget // fixed\n"), 0o644))
		git(t, wt, "commit", "-q", "-am", "Fix the widget")
	}},
	{name: "an ignored file", make: func(t *testing.T, wt string) {
		require.NoError(t, os.WriteFile(filepath.Join(wt, ".env"), []byte("TOKEN=local\n"), 0o600))
	}, refused: func(t *testing.T, _ string, e *helm.WorktreeError) {
		assert.Equal(t, []string{".env"}, e.Ignored)
		assert.Empty(t, e.Modified)
		assert.Empty(t, e.Untracked)
		assert.Zero(t, e.Unkept)
	}},
	{name: "a commit on a detached HEAD", make: func(t *testing.T, wt string) {
		git(t, wt, "checkout", "-q", "--detach")
		require.NoError(t, os.WriteFile(filepath.Join(wt, "widget.go"), []byte("package widget // tried\n"), 0o644))
		git(t, wt, "commit", "-q", "-am", "Try something")
	}, refused: func(t *testing.T, wt string, e *helm.WorktreeError) {
		head := git(t, wt, "rev-parse", "HEAD")
		assert.Equal(t, head, e.Head)
		assert.Equal(t, 1, e.Unkept)
		assert.Equal(t, []string{git(t, wt, "rev-parse", "--short", "HEAD") + " Try something"}, e.Commits)
		assert.Empty(t, e.Ignored)
	}},
	{name: "an untracked and a modified file", make: func(t *testing.T, wt string) {
		require.NoError(t, os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("todo\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(wt, "widget.go"), []byte("package widget // half done\n"), 0o644))
	}, refused: func(t *testing.T, _ string, e *helm.WorktreeError) {
		assert.Equal(t, []string{"notes.txt"}, e.Untracked)
		assert.Equal(t, []string{"widget.go"}, e.Modified)
	}},
}

// TestRemoveWorktreeRefusesToLoseWork: without Force, a working tree that
// holds ignored, untracked or changed files, or commits no branch keeps,
// is left as it is, nothing recorded, and the error says what it holds
// and how to keep it; with Force it is removed and recorded as forced. A
// clean one, or one whose commits are on its branch, is removed.
func TestRemoveWorktreeRefusesToLoseWork(t *testing.T) {
	ctx := context.Background()
	for _, tt := range worktreeWork {
		t.Run(tt.name, func(t *testing.T) {
			v, wt := worktreeVoyage(t)
			tt.make(t, wt)
			err := v.RemoveWorktree(ctx, who, nil)
			if tt.refused == nil {
				require.NoError(t, err)
				assert.NoDirExists(t, wt)
				assert.False(t, v.Info().WorktreeRemoved.IsZero())
				return
			}
			require.ErrorIs(t, err, helm.ErrWorktreeHoldsWork)
			var held *helm.WorktreeError
			require.True(t, errors.As(err, &held))
			assert.Equal(t, wt, held.Path)
			tt.refused(t, wt, held)
			assert.Equal(t, hint.KeepWork, helm.HintOf(err).Kind)
			assert.Contains(t, helm.HintOf(err).Text, "RemoveWorktreeOptions.Force")
			assert.Contains(t, err.Error(), "nothing was removed")
			assert.DirExists(t, wt, "nothing removed")
			assert.True(t, v.Info().WorktreeRemoved.IsZero(), "nothing recorded")
			require.NoError(t, v.Refresh(ctx))
			assert.True(t, v.Info().WorktreeRemoved.IsZero(), "nothing recorded")

			require.NoError(t, v.RemoveWorktree(ctx, who, &helm.RemoveWorktreeOptions{Force: true}))
			assert.NoDirExists(t, wt)
			assert.False(t, v.Info().WorktreeRemoved.IsZero())
		})
	}
}

// TestRemoveWorktreeKeepsCommitsOnceABranchHoldsThem: commits on a
// detached HEAD are kept once a branch is made at HEAD, as the hint says;
// the working tree is then removed without force.
func TestRemoveWorktreeKeepsCommitsOnceABranchHoldsThem(t *testing.T) {
	ctx := context.Background()
	v, wt := worktreeVoyage(t)
	git(t, wt, "checkout", "-q", "--detach")
	git(t, wt, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, wt, "commit", "-q", "--allow-empty", "-m", "two")
	head := git(t, wt, "rev-parse", "HEAD")
	err := v.RemoveWorktree(ctx, who, nil)
	require.ErrorIs(t, err, helm.ErrWorktreeHoldsWork)
	assert.Contains(t, helm.HintOf(err).Text, "git branch NAME "+head)
	assert.Contains(t, err.Error(), "commit no branch or tag keeps: "+git(t, wt, "rev-parse", "--short", "HEAD")+" two")

	git(t, wt, "branch", "kept", head)
	require.NoError(t, v.RemoveWorktree(ctx, who, nil))
	assert.NoDirExists(t, wt)
	assert.Equal(t, head, git(t, filepath.Join(filepath.Dir(wt), "repo"), "rev-parse", "kept"))
}

// TestWorktreeErrorListsTwentyAndCounts: a long list is cut at twenty
// names, and says how many more there are.
func TestWorktreeErrorListsTwentyAndCounts(t *testing.T) {
	ctx := context.Background()
	v, wt := worktreeVoyage(t)
	for i := range 25 {
		require.NoError(t, os.WriteFile(filepath.Join(wt, fmt.Sprintf("build-%02d.tmp", i)), nil, 0o644))
	}
	err := v.RemoveWorktree(ctx, who, nil)
	var held *helm.WorktreeError
	require.True(t, errors.As(err, &held))
	assert.Len(t, held.Ignored, 25, "the error holds them all")
	msg := err.Error()
	assert.Equal(t, 20, strings.Count(msg, "\n  ignored: "), msg)
	assert.Contains(t, msg, "ignored: build-19.tmp")
	assert.NotContains(t, msg, "build-20.tmp")
	assert.True(t, strings.HasSuffix(msg, "\n  and 5 more"), msg)
}

// TestRemoveWorktreeGoneAlreadyIsRecorded: a working tree removed by
// hand is recorded as removed; there is nothing left to lose.
func TestRemoveWorktreeGoneAlreadyIsRecorded(t *testing.T) {
	ctx := context.Background()
	v, wt := worktreeVoyage(t)
	require.NoError(t, os.RemoveAll(wt))
	require.NoError(t, v.RemoveWorktree(ctx, who, nil))
	assert.False(t, v.Info().WorktreeRemoved.IsZero())
}
