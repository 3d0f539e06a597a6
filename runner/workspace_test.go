package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/runner"
)

// git runs real git in dir for a test.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := (&runner.Runner{Dir: dir}).Git(context.Background(), args...)
	require.NoError(t, err, "git %s", strings.Join(args, " "))
	return strings.TrimSpace(string(out))
}

func TestWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "config", "user.email", "a@example.com")
	git(t, dir, "config", "user.name", "A")
	sub := filepath.Join(dir, "pkg")
	require.NoError(t, os.Mkdir(sub, 0o755))

	// No commit yet, no origin.
	w, err := (&runner.Runner{Dir: sub}).Workspace(ctx)
	require.NoError(t, err)
	top, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(w.Top)
	require.NoError(t, err)
	assert.Equal(t, top, got)
	assert.Equal(t, runner.Workspace{Top: w.Top, Branch: "main"}, w)

	require.NoError(t, os.WriteFile(filepath.Join(sub, "a.go"), []byte("package pkg\n"), 0o644))
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	git(t, dir, "remote", "add", "origin", "https://github.com/octo/widgets.git")
	head := git(t, dir, "rev-parse", "HEAD")
	w, err = (&runner.Runner{Dir: sub}).Workspace(ctx)
	require.NoError(t, err)
	assert.Equal(t, runner.Workspace{Top: w.Top, Repo: "octo/widgets", Head: head, Branch: "main"}, w)

	git(t, dir, "checkout", "-q", "--detach")
	w, err = (&runner.Runner{Dir: dir}).Workspace(ctx)
	require.NoError(t, err)
	assert.Equal(t, head, w.Head)
	assert.Empty(t, w.Branch, "a detached HEAD is on no branch")

	_, err = (&runner.Runner{Dir: t.TempDir()}).Workspace(ctx)
	require.Error(t, err, "outside a working tree")
}
