//go:build unix

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
	"github.com/helmlog/helm/runner"
)

// The recorded agent attacks helmtest.Record's determinism: it plants
// git configuration (hooks, commit signing) that makes every commit
// differ, in the repository or in the machine's git configuration.

// nonceScript is a shell script's body that prints something different
// on every run.
const nonceScript = `cat /proc/sys/kernel/random/uuid`

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

// commitScript returns a run that makes a repository in a fresh
// directory, lets plant change it (config, hooks) and records a voyage
// whose agent commits there with the real git.
func commitScript(t *testing.T, plant func(work string, git func(args ...string))) func(h *helm.Home) (*helm.Voyage, error) {
	return func(h *helm.Home) (*helm.Voyage, error) {
		ctx := context.Background()
		work := filepath.Join(t.TempDir(), "work")
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-C", work}, args...)...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git %v: %s", args, out)
		}
		require.NoError(t, os.MkdirAll(work, 0o755))
		git("init", "-q", "-b", "main")
		plant(work, git)
		require.NoError(t, os.WriteFile(filepath.Join(work, "a.go"), []byte("package a\n"), 0o600))
		git("add", "a.go")
		v, err := h.Start(ctx, "Commit", helm.OpenWaters, ann, nil)
		if err != nil {
			return nil, err
		}
		commit, err := actions.NewCommit(&runner.Runner{Home: h.Dir(), Dir: work}, actions.Commit{Message: "Add a"})
		if err != nil {
			return nil, err
		}
		if _, err := v.Perform(ctx, commit, ann, nil); err != nil {
			return nil, err
		}
		return v, v.Complete(ctx, logbook.OutcomeCompleted, "Done.", ann)
	}
}

// TestAttackRecordPassesTwiceWhateverGitConfigurationTheAgentPlants: a
// recording whose agent commits passes twice although a hook (planted
// with core.hooksPath, or in .git/hooks) or commit signing (in the
// repository's configuration, or the machine's global one) would make
// each commit differ: GitEnv makes commits deterministic whatever git's
// configuration says.
func TestAttackRecordPassesTwiceWhateverGitConfigurationTheAgentPlants(t *testing.T) {
	fakeGPG := filepath.Join(t.TempDir(), "gpg")
	writeScript(t, fakeGPG, `cat >/dev/null; echo "[GNUPG:] SIG_CREATED D 1 8 00 0 0" >&2; echo "-----BEGIN PGP SIGNATURE-----"; `+nonceScript+`; echo "-----END PGP SIGNATURE-----"`)
	for _, tc := range []struct {
		name   string
		global string // the machine's global git configuration
		plant  func(t *testing.T) func(work string, git func(args ...string))
	}{
		{name: "a prepare-commit-msg hook by core.hooksPath", plant: func(t *testing.T) func(string, func(...string)) {
			return func(work string, git func(...string)) {
				hooks := filepath.Join(work, "..", "hooks")
				writeScript(t, filepath.Join(hooks, "prepare-commit-msg"), `{ `+nonceScript+`; cat "$1"; } > "$1.new" && mv "$1.new" "$1"`)
				git("config", "core.hooksPath", hooks)
			}
		}},
		{name: "a commit-msg hook in .git/hooks", plant: func(t *testing.T) func(string, func(...string)) {
			return func(work string, git func(...string)) {
				writeScript(t, filepath.Join(work, ".git", "hooks", "commit-msg"), `{ `+nonceScript+`; cat "$1"; } > "$1.new" && mv "$1.new" "$1"`)
			}
		}},
		{name: "commit signing in the repository", plant: func(t *testing.T) func(string, func(...string)) {
			return func(work string, git func(...string)) {
				git("config", "commit.gpgsign", "true")
				git("config", "gpg.program", fakeGPG)
				git("config", "user.signingkey", "D")
			}
		}},
		{name: "commit signing in the global configuration", global: "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = " + fakeGPG + "\n[user]\n\tsigningkey = D\n",
			plant: func(t *testing.T) func(string, func(...string)) { return func(string, func(...string)) {} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			global := filepath.Join(t.TempDir(), "gitconfig")
			require.NoError(t, os.WriteFile(global, []byte(tc.global), 0o644))
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			first := helmtest.Record(t, "planted", commitScript(t, tc.plant(t)))
			second := helmtest.Record(t, "planted", commitScript(t, tc.plant(t)))
			require.Len(t, second.Actions(), 1)
			assert.Equal(t, logbook.ActionPerformed, second.Actions()[0].Status, "%+v", second.Actions()[0])
			assert.Equal(t, first.Actions()[0].Result.SHA, second.Actions()[0].Result.SHA)
		})
	}
}

// TestAttackReplayRunsNoAction: replaying a recording whose agent
// committed and pushed runs nothing: with a git on the PATH that would
// leave a mark and fail, the replay passes and no git was started.
func TestAttackReplayRunsNoAction(t *testing.T) {
	t.Chdir(t.TempDir())
	r := helmtest.Record(t, "git-commit", gitScript(t, nil))
	require.Len(t, r.Actions(), 2)
	bin := t.TempDir()
	ran := filepath.Join(bin, "git-ran")
	writeScript(t, filepath.Join(bin, "git"), `touch "`+ran+`"; exit 1`)
	writeScript(t, filepath.Join(bin, "gh"), `touch "`+ran+`"; exit 1`)
	t.Setenv("PATH", bin)
	replayed := helmtest.Replay(t, filepath.Join("testdata", "git-commit.jsonl"))
	assert.Equal(t, r.Actions(), replayed.Actions())
	assert.NoFileExists(t, ran, "a replay started git or gh")
}
