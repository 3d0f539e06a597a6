package helm_test

// Attacks on the witnesses (issue 31): the test is the recorded agent.
// It writes the commit messages and controls the working repository (its
// configuration, hooks, refs and files under .git). Each test asserts a
// promise, so it fails when the attack breaks it.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
)

// gitIn runs git in dir with a fixed identity and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// hook installs an executable hook script under dir/hooks and points
// the repository's core.hooksPath at it.
func hook(t *testing.T, w *witnessed, name, script string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hooks")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	w.git.Git(t, "config", "core.hooksPath", dir)
}

// performCommit stages a change and performs a commit through the voyage;
// it returns the entry and whether the action was recorded performed. A
// commit helm refuses before recording anything (its message holds a
// Helm-Voyage line) returns a zero entry, not performed, with the
// refusal checked: ErrInvalid, the witness hint, nothing recorded.
func performCommit(t *testing.T, w *witnessed, message string) (logbook.Entry, bool) {
	t.Helper()
	w.git.WriteFile(t, "widget.go", "changed "+message+"\n")
	w.git.Git(t, "add", "widget.go")
	c, err := actions.NewCommit(w.r, actions.Commit{Message: message})
	require.NoError(t, err)
	before := len(entriesOf(t, w.v))
	e, err := w.v.Perform(context.Background(), c, who, nil)
	if errors.Is(err, helm.ErrInvalid) {
		assert.Equal(t, hint.Witness, helm.HintOf(err).Kind, "%v", err)
		assert.Contains(t, err.Error(), "line is helm's to write")
		assert.Len(t, entriesOf(t, w.v), before, "refused before anything is recorded")
		return logbook.Entry{}, false
	}
	if err != nil {
		var ae *helm.ActionError
		require.True(t, errors.As(err, &ae), "a failed commit is an ActionError: %v", err)
		entries := entriesOf(t, w.v)
		last := entries[len(entries)-1]
		require.NotNil(t, last.Action)
		assert.Equal(t, logbook.ActionFailed, last.Action.Status, "a commit helm could not witness is recorded as failed")
		return last, false
	}
	require.NotNil(t, e.Action)
	return e, e.Action.Status == logbook.ActionPerformed
}

// cleanClone clones what was pushed into a fresh repository: the
// evidence as someone other than the agent holds it (no agent config).
func cleanClone(t *testing.T, w *witnessed) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitIn(t, t.TempDir(), "clone", "-q", w.git.Bare, dir)
	return dir
}

// witnessOf returns the witnesses verify reads from repo for commit sha.
func witnessOf(t *testing.T, w *witnessed, repo, sha string) (helm.VerifyReport, []helm.WitnessReport) {
	t.Helper()
	rep, err := w.home.Verify(context.Background(), w.v.ID(), &helm.VerifyOptions{Repositories: []string{repo}})
	require.NoError(t, err)
	var mine []helm.WitnessReport
	for _, wr := range rep.Witnesses {
		if wr.Commit == sha {
			mine = append(mine, wr)
		}
	}
	return *rep, mine
}

// The recorded agent configures its repository before asking helm to
// commit. Whatever it sets, a commit helm records as performed carries
// exactly one Helm-Voyage line naming the voyage at the intent's head,
// and verify reads it from the pushed commit (a clean clone: the
// evidence as a third party holds it); otherwise the commit is recorded
// as failed.
func TestAttackRepositoryConfigCannotLeaveACommitUnwitnessed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, w *witnessed)
		message string
		fails   string // what the failure recorded says, when it must fail
	}{
		{"i18n.commitEncoding IBM037 (EBCDIC)", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "i18n.commitEncoding", "IBM037")
		}, "Fix null check", ""},
		{"i18n.commitEncoding UTF-16LE", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "i18n.commitEncoding", "UTF-16LE")
		}, "Fix null check!", ""},
		{"commit-msg hook strips the trailer", func(t *testing.T, w *witnessed) {
			hook(t, w, "commit-msg", `sed -i '/^Helm-Voyage/d' "$1"`)
		}, "Fix null check", ""},
		{"commit-msg hook rewrites the head", func(t *testing.T, w *witnessed) {
			hook(t, w, "commit-msg", `sed -i 's/^\(Helm-Voyage: [^ ]*\) .*/\1 1:`+strings.Repeat("0", 64)+`/' "$1"`)
		}, "Fix null check", ""},
		{"post-commit hook amends the trailer away", func(t *testing.T, w *witnessed) {
			hook(t, w, "post-commit", `[ -n "$AMENDED" ] && exit 0; AMENDED=1 git commit -q --amend --no-verify -m "Fix null check"`)
		}, "Fix null check", ""},
		{"post-commit hook relabels the commit's encoding", func(t *testing.T, w *witnessed) {
			hook(t, w, "post-commit", `new=$(git cat-file commit HEAD | sed '1,/^$/d' | git -c i18n.commitEncoding=IBM037 commit-tree 'HEAD^{tree}' -p HEAD^) && git update-ref HEAD "$new"`)
		}, "Fix null check", "git labelled its message IBM037"},
		{"commit-msg hook adds a false line for the voyage as the subject", func(t *testing.T, w *witnessed) {
			hook(t, w, "commit-msg", `id=$(git config helm.test.voyage); sed -i "1i Helm-Voyage: $id 1:`+strings.Repeat("0", 64)+`" "$1"`)
			w.git.Git(t, "config", "helm.test.voyage", w.v.ID())
		}, "Fix null check", "holds 2 Helm-Voyage lines"},
		{"trailer.where start", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "trailer.where", "start")
		}, "Fix\n\nSigned-off-by: A <a@example.com>", ""},
		{"trailer.ifexists doNothing after a forged line", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "trailer.ifexists", "doNothing")
		}, "Fix\n\nHelm-Voyage: VOYAGE 1:" + strings.Repeat("0", 64), ""},
		{"trailer key alias", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "trailer.hv.key", "Helm-Voyage")
			w.git.Git(t, "config", "trailer.Helm-Voyage.key", "Xelm-Voyage")
		}, "Fix null check", ""},
		{"trailer.separators =", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "trailer.separators", "=")
		}, "Fix null check", ""},
		{"core.commentChar H with cleanup strip", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "core.commentChar", "H")
			w.git.Git(t, "config", "commit.cleanup", "strip")
		}, "Fix null check", ""},
		{"commit.cleanup scissors with a scissors line", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "commit.cleanup", "scissors")
		}, "Fix null check\n# ------------------------ >8 ------------------------\nhidden", ""},
		{"commit.cleanup verbatim with # lines", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "commit.cleanup", "verbatim")
		}, "Fix null check\n# a comment\n", ""},
		{"CRLF message", func(*testing.T, *witnessed) {}, "Fix null check\r\n\r\nBody line\r\n", ""},
		{"last paragraph not trailers", func(*testing.T, *witnessed) {}, "Fix\n\nNot: a trailer\nbut prose follows it", ""},
		{"very long message", func(*testing.T, *witnessed) {}, "Fix\n\n" + strings.Repeat("long line of prose\n", 5000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			tc.setup(t, w)
			e, performed := performCommit(t, w, strings.ReplaceAll(tc.message, "VOYAGE", w.v.ID()))
			if tc.fails != "" {
				require.False(t, performed)
				require.NotNil(t, e.Action)
				assert.Contains(t, e.Action.Error, tc.fails)
			}
			if !performed {
				if e.Action != nil {
					t.Logf("held: recorded as failed: %s", e.Action.Error)
				}
				return
			}
			sha := e.Action.Result.SHA
			raw := gitIn(t, w.git.Dir, "cat-file", "commit", sha)
			header, _, _ := strings.Cut(raw, "\n\n")
			assert.NotContains(t, header, "\nencoding ", "helm's commit is UTF-8, with no encoding header")
			require.NotEmpty(t, sha)
			w.git.Git(t, "push", "-q", "origin", "HEAD:main")
			clone := cleanClone(t, w)

			raw = gitIn(t, clone, "cat-file", "commit", sha)
			assert.Equal(t, 1, strings.Count(raw, "Helm-Voyage: "+w.v.ID()+" "), "one line names the voyage in the commit:\n%s", raw)

			rep, mine := witnessOf(t, w, clone, sha)
			require.Len(t, mine, 1, "verify reads the pushed commit's witness (performed, so promised); witnesses seen: %+v", rep.Witnesses)
			assert.Equal(t, e.Seq, mine[0].Head.Seq, "the head at the intent")
			assert.Empty(t, mine[0].Problem)
			assert.True(t, rep.OK(), "%v", rep.Problems)
		})
	}
}

// An undo's revert is amended to carry the trailer; the agent's
// commitEncoding applies to the amend as it does to a commit.
func TestAttackRevertUnderCommitEncodingStaysWitnessed(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	e := w.commit(t, "widget.go", "Fix null check")
	w.git.Git(t, "push", "-q", "origin", "main")
	w.git.Git(t, "fetch", "-q", w.git.Bare, "main:refs/remotes/origin/main")
	w.git.Git(t, "config", "i18n.commitEncoding", "IBM037")
	inv, err := w.v.Undoable(ctx, e.N)
	require.NoError(t, err)
	u, err := actions.FromInverse(ctx, w.r, inv)
	require.NoError(t, err)
	ue, err := w.v.Perform(ctx, u, who, &helm.PerformOptions{Undoes: e.N})
	if err != nil {
		t.Logf("held: the revert was recorded as failed: %v", err)
		return
	}
	w.git.Git(t, "push", "-q", "origin", "main")
	_, mine := witnessOf(t, w, cleanClone(t, w), ue.Action.Result.SHA)
	require.Len(t, mine, 1, "verify reads the revert's witness from the pushed commit")
	assert.Equal(t, ue.Seq, mine[0].Head.Seq)
}

// The agent tampers with the log below a pushed commit's witness after
// having made that commit under i18n.commitEncoding: verify with the
// pushed repository must still find the tampering.
func TestAttackCommitEncodingHidesTamperingFromVerify(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	_, err := w.v.Note(ctx, "Review: DENIED by security", who)
	require.NoError(t, err)
	w.git.Git(t, "config", "i18n.commitEncoding", "IBM037")
	_, performed := performCommit(t, w, "Fix null check")
	if !performed {
		t.Log("held: the commit was recorded as failed")
		return
	}
	w.git.Git(t, "push", "-q", "origin", "HEAD:main")
	require.NoError(t, w.v.Close())
	forgeNote(t, w)

	rep, err := w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{cleanClone(t, w)}})
	require.NoError(t, err)
	assert.False(t, rep.OK(), "a pushed, witnessed commit exists below the edit: verify must report it (witnesses read: %+v)", rep.Witnesses)
}

// After helm made an honest, witnessed commit, the agent changes its
// working repository so that verify, reading it, would miss the witness.
// Verify reads every commit reachable from the repository's refs.
func TestAttackWitnessRepositoryHidesTheWitnessFromVerify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, w *witnessed, sha string)
	}{
		{"i18n.logOutputEncoding IBM037", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "config", "i18n.logOutputEncoding", "IBM037")
		}},
		{"i18n.commitEncoding set afterwards", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "config", "i18n.commitEncoding", "IBM037")
		}},
		{"log.showSignature and format.pretty", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "config", "log.showSignature", "true")
			w.git.Git(t, "config", "format.pretty", "oneline")
			w.git.Git(t, "config", "log.decorate", "full")
		}},
		{"git replace with a copy without the trailer", func(t *testing.T, w *witnessed, sha string) {
			tree := strings.TrimSpace(w.git.Git(t, "rev-parse", sha+"^{tree}"))
			parent := strings.TrimSpace(w.git.Git(t, "rev-parse", sha+"^"))
			fake := strings.TrimSpace(w.git.Git(t, "commit-tree", tree, "-p", parent, "-m", "Fix null check"))
			w.git.Git(t, "replace", sha, fake)
		}},
		{"commit-graph file", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "on top")
			w.git.Git(t, "commit-graph", "write", "--reachable")
		}},
		{".git/info/grafts cuts history above it", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "on top")
			top := strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD"))
			require.NoError(t, os.MkdirAll(filepath.Join(w.git.Dir, ".git", "info"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(w.git.Dir, ".git", "info", "grafts"), []byte(top+"\n"), 0o644))
		}},
		{"witness only on a stash ref", func(t *testing.T, w *witnessed, _ string) {
			w.git.Git(t, "branch", "-q", "keep")
			w.git.WriteFile(t, "other.go", "x\n")
			w.git.Git(t, "add", "other.go")
			w.git.Git(t, "stash", "-q")
			w.git.Git(t, "branch", "-q", "-D", "keep")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			e := w.commit(t, "widget.go", "Fix null check")
			sha := e.Action.Result.SHA
			tc.setup(t, w, sha)
			rep, mine := witnessOf(t, w, w.git.Dir, sha)
			require.Len(t, mine, 1, "verify reads the commit's witness; witnesses seen: %+v", rep.Witnesses)
			assert.Equal(t, e.Seq, mine[0].Head.Seq)
			assert.True(t, rep.OK(), "%v", rep.Problems)
		})
	}
}

// The agent makes the repository shallow above helm's witnessed commit
// (.git/shallow naming the commit on top): the history below it cannot
// be read, so verify refuses the repository as a witness — an error with
// no report and a hint to unshallow — rather than miss the witness.
func TestAttackShallowWitnessRepositoryIsRefused(t *testing.T) {
	w := newWitnessed(t)
	w.commit(t, "widget.go", "Fix null check")
	w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "on top")
	top := strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD"))
	require.NoError(t, os.WriteFile(filepath.Join(w.git.Dir, ".git", "shallow"), []byte(top+"\n"), 0o644))

	rep, err := w.home.Verify(context.Background(), w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
	require.Error(t, err)
	assert.Nil(t, rep)
	assert.Contains(t, err.Error(), "witness repository "+w.git.Dir+" is shallow: some commits cannot be read")
	assert.Equal(t, hint.Witness, helm.HintOf(err).Kind)
	assert.Contains(t, helm.HintOf(err).Text, "unshallow "+w.git.Dir)
	assert.NotErrorIs(t, err, helm.ErrInvalid, "not bad input: the check could not run (exit 1, as for a directory git cannot read)")
}

// The agent writes a Helm-Voyage line naming THIS voyage (or one that
// does not parse) in its own commit message, pull request, issue or
// comment, with a head the log never had: helm refuses it before
// anything is recorded or run (ErrInvalid, with the witness hint), so
// the agent cannot make an honest log look "edited, truncated or rolled
// back" with a line beside helm's.
func TestAttackOwnVoyageLineInTheMessageIsRefusedBeforeAnythingIsRecorded(t *testing.T) {
	zeros := strings.Repeat("0", 64)
	for _, tc := range []struct{ name, message string }{
		{"as the last trailer", "Fix\n\nHelm-Voyage: VOYAGE 1:" + zeros},
		{"in the body", "Fix\n\nHelm-Voyage: VOYAGE 2:" + zeros + "\n\nMore prose."},
		{"lower-case key, indented", "Fix\n\n   helm-voyage: VOYAGE 1:" + zeros + "\n\nMore prose."},
		{"as the subject", "Helm-Voyage: VOYAGE 1:" + zeros},
		{"after a lone CR", "Fix\rHelm-Voyage: VOYAGE 1:" + zeros},
		{"a line that does not parse", "Fix\n\nHelm-Voyage: VOYAGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			head := strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD"))
			e, performed := performCommit(t, w, strings.ReplaceAll(tc.message, "VOYAGE", w.v.ID()))
			require.False(t, performed)
			assert.Nil(t, e.Action, "refused, not recorded as failed")
			assert.Equal(t, head, strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD")), "nothing was committed")
		})
	}

	w := newWitnessed(t)
	w.git.Git(t, "checkout", "-q", "-b", "fix")
	w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "Fix")
	w.git.Git(t, "push", "-q", "origin", "fix")
	iss := w.srv.AddIssue("octo/widgets", ghtest.Issue{Title: "Crash"})
	pr := w.srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Old", Head: "fix", HeadSHA: "abc", User: "john-agent"})
	line := "Helm-Voyage: " + w.v.ID() + " 1:" + zeros
	for _, tc := range []struct {
		name  string
		build func() (helm.Action, error)
	}{
		{"pull request body", func() (helm.Action, error) {
			return actions.NewCreatePullRequest(w.r, actions.CreatePullRequest{Branch: "fix", Base: "main", Title: "Fix", Body: "Fixes #1.\n\n" + line})
		}},
		{"pull request title", func() (helm.Action, error) {
			return actions.NewCreatePullRequest(w.r, actions.CreatePullRequest{Branch: "fix", Base: "main", Title: line})
		}},
		{"issue body", func() (helm.Action, error) {
			return actions.NewCreateIssue(w.r, actions.CreateIssue{Title: "Bug", Body: "> quoted is fine\n" + line})
		}},
		{"issue comment", func() (helm.Action, error) {
			return actions.NewCommentIssue(w.r, actions.CommentIssue{Number: iss, Body: line + "\n\nOn it."})
		}},
		{"pull request comment", func() (helm.Action, error) {
			return actions.NewCommentPullRequest(w.r, actions.CommentPullRequest{Number: pr, Body: "  " + strings.ToLower(line)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.build()
			require.NoError(t, err)
			before := len(entriesOf(t, w.v))
			w.srv.ClearRequests()
			_, err = w.v.Perform(context.Background(), a, who, nil)
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.Equal(t, hint.Witness, helm.HintOf(err).Kind)
			assert.Len(t, entriesOf(t, w.v), before, "nothing recorded")
			for _, r := range w.srv.Requests() {
				assert.Equal(t, "GET", r.Method, "nothing sent to GitHub: %+v", r)
			}
		})
	}
}

// A well-formed line naming another voyage passes (it is that voyage's
// witness: a squashed message may carry one), and verify of this voyage
// ignores it: the commit holds one line naming this voyage.
func TestAttackAnotherVoyagesLineInTheMessageIsKeptAndIgnored(t *testing.T) {
	w := newWitnessed(t)
	other := "00000000-0000-4000-8000-000000000000"
	e, performed := performCommit(t, w, "Fix\n\nHelm-Voyage: "+other+" 1:"+strings.Repeat("0", 64))
	require.True(t, performed)
	rep, mine := witnessOf(t, w, w.git.Dir, e.Action.Result.SHA)
	assert.Len(t, mine, 1)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, []helm.RepositoryReport{{Repository: w.git.Dir, Witnesses: 1}}, rep.Repositories)
}

// A line naming a voyage id that is a prefix, an extension or another
// case of ours is another voyage's: ignored.
func TestAttackVoyageIDPrefixCollisionIsIgnored(t *testing.T) {
	w := newWitnessed(t)
	w.commit(t, "widget.go", "Fix null check")
	id := w.v.ID()
	zeros := strings.Repeat("0", 64)
	for _, other := range []string{id[:8], id[:len(id)-1], id + "0", id + "-x", strings.ToUpper(id), "x" + id} {
		w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "Other\n\nHelm-Voyage: "+other+" 1:"+zeros)
	}
	rep, err := w.home.Verify(context.Background(), id, &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Len(t, rep.Witnesses, 1, "only helm's commit names the voyage: %+v", rep.Witnesses)
}

// What a repository path can be: a bare repository and a linked worktree
// are read; a directory that is no repository is an error, not "no
// witnesses".
func TestAttackWitnessRepositoryPaths(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	e := w.commit(t, "widget.go", "Fix null check")
	w.git.Git(t, "push", "-q", "origin", "main")
	wt := filepath.Join(t.TempDir(), "wt")
	w.git.Git(t, "worktree", "add", "-q", "--detach", wt, "HEAD~1")

	for _, tc := range []struct{ name, path string }{
		{"bare", w.git.Bare},
		{"linked worktree", wt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, mine := witnessOf(t, w, tc.path, e.Action.Result.SHA)
			require.Len(t, mine, 1, "%+v", rep.Witnesses)
			assert.True(t, rep.OK(), "%v", rep.Problems)
		})
	}
	t.Run("not a repository", func(t *testing.T) {
		_, err := w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{t.TempDir()}})
		assert.Error(t, err)
	})
}

// forgeNote edits the note below the witness as the adversary does
// (every checksum and WATERMARK recomputed), and drops the caches.
func forgeNote(t *testing.T, w *witnessed) {
	t.Helper()
	n, err := tamper.Replace(context.Background(), w.dir, w.v.ID(), "DENIED by security", "PASSED by security")
	require.NoError(t, err)
	require.Positive(t, n)
	require.NoError(t, tamper.DropCaches(w.dir, w.v.ID()))
	alone, err := w.home.Verify(context.Background(), w.v.ID(), nil)
	require.NoError(t, err)
	require.True(t, alone.OK(), "the forger recomputed every checksum: %v", alone.Problems)
}
