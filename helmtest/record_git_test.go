package helmtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/helmtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
)

// gitScript returns a run that builds a repository from fixed files in a
// fresh directory of t, and records a voyage whose agent commits there
// with the real git and pushes to a bare remote beside it: what the
// README's agent does.
func gitScript(t *testing.T, env []string) func(h *helm.Home) (*helm.Voyage, error) {
	return func(h *helm.Home) (*helm.Voyage, error) {
		ctx := context.Background()
		dir := t.TempDir()
		work, remote := filepath.Join(dir, "work"), filepath.Join(dir, "remote.git")
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git %v: %s", args, out)
		}
		git("init", "-q", "--bare", remote)
		git("init", "-q", "-b", "fix-42", work)
		require.NoError(t, os.WriteFile(filepath.Join(work, "widget.go"), []byte("package widget\n"), 0o600))
		git("-C", work, "add", "widget.go")
		git("-C", work, "commit", "-q", "-m", "widget")
		git("-C", work, "remote", "add", "origin", remote)

		v, err := h.Start(ctx, "Fix #42", helm.ResolveIssue, ann, nil)
		if err != nil {
			return nil, err
		}
		m, _ := marks.NewContext("a nil config crashes Init")
		if _, err := v.Observe(ctx, m, ann, nil); err != nil {
			return nil, err
		}
		if _, err := v.TakeBearing(ctx, "Init needs a nil check.", ann, nil); err != nil {
			return nil, err
		}
		require.NoError(t, os.WriteFile(filepath.Join(work, "widget.go"), []byte("package widget\n\n// Init checks for nil.\n"), 0o600))
		git("-C", work, "add", "widget.go")
		r := &runner.Runner{Home: h.Dir(), Dir: work, Env: env}
		commit, err := actions.NewCommit(r, actions.Commit{Message: "Check for a nil config"})
		if err != nil {
			return nil, err
		}
		if _, err := v.Perform(ctx, commit, ann, nil); err != nil {
			return nil, err
		}
		push, err := actions.NewPush(r, actions.Push{Branch: "fix-42"})
		if err != nil {
			return nil, err
		}
		if _, err := v.Perform(ctx, push, ann, nil); err != nil {
			return nil, err
		}
		return v, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed.", ann)
	}
}

// A recorded voyage whose agent makes real git commits (and pushes them)
// passes on every later run: git's dates and author are Record's, so the
// same tree on the same parents is the same commit, and the recorded
// SHAs are the ones the run makes again.
func TestRecordWithRealGitCommitPassesTwice(t *testing.T) {
	t.Chdir(t.TempDir())
	first := helmtest.Record(t, "git-commit", gitScript(t, nil))
	second := helmtest.Record(t, "git-commit", gitScript(t, nil))
	got := second.Actions()
	require.Len(t, got, 2)
	assert.Equal(t, "commit", got[0].Kind)
	assert.Equal(t, logbook.ActionPerformed, got[0].Status)
	assert.Len(t, got[0].Result.SHA, 40, "a real commit's SHA")
	assert.Equal(t, first.Actions()[0].Result.SHA, got[0].Result.SHA)
	assert.Equal(t, "push", got[1].Kind)
	assert.Equal(t, logbook.ActionPerformed, got[1].Status)
}

// Without Record's environment (a parallel test, which cannot set it),
// git's dates are the clock's: the run passes helmtest.GitEnv to the git
// it starts, and the recording still passes twice.
func TestRecordInAParallelTestWithGitEnvPassesTwice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // before Parallel: t.Chdir, like t.Setenv, is refused after it
	t.Run("parallel", func(t *testing.T) {
		t.Parallel()
		helmtest.Record(t, "git-commit", gitScript(t, helmtest.GitEnv()))
		r := helmtest.Record(t, "git-commit", gitScript(t, helmtest.GitEnv()))
		assert.Len(t, r.Actions(), 2)
	})
}
