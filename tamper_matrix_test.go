package helm_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/internal/tamper"
)

// tamperScene is a voyage as the adversary finds it: a note, a reading
// and an action result it would like to change, a commit helm made (its
// trailer is a witness in a git repository), and a head the user pasted
// elsewhere after the last event (a given witness).
type tamperScene struct {
	home, id, repo string
	head           chain.Head // the given witness: the head after the last event
	commitSeq      uint64     // the seq of the head the commit's trailer holds
	observed       [2]uint64  // the first and last seq of the reading's unit
	backup         string     // events/ as it was after the reading (for a rollback)
}

func newTamperScene(t *testing.T) *tamperScene {
	t.Helper()
	ctx := context.Background()
	s := &tamperScene{home: t.TempDir(), backup: filepath.Join(t.TempDir(), "events")}
	h, err := helm.Open(s.home, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Ship the widget fix", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	s.id = v.ID()
	_, err = v.Note(ctx, "DENIED by security", who)
	require.NoError(t, err)
	before, err := v.Head(ctx)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "ci", Text: "tests FAILED badly"}, who, nil)
	require.NoError(t, err)
	after, err := v.Head(ctx)
	require.NoError(t, err)
	s.observed = [2]uint64{before.Seq + 1, after.Seq}
	require.NoError(t, tamper.CopyDir(tamper.Events(s.home, s.id), s.backup))
	_, err = v.Perform(ctx, &fakeAction{Message: "push", fail: errors.New("push REJECTED by remote")}, who, nil)
	require.Error(t, err)

	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "trunk")
	g := srv.GitRepo(t, "octo/widgets")
	g.WriteFile(t, "widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	commit, err := actions.NewCommit(srv.Runner(t, g.Dir), actions.Commit{Message: "Fix the widget"})
	require.NoError(t, err)
	_, err = v.Perform(ctx, commit, who, nil)
	require.NoError(t, err)
	s.repo = g.Dir
	trailer := strings.TrimSpace(g.Git(t, "log", "-1", "--format=%(trailers:key="+chain.TrailerKey+",valueonly)"))
	id, th, err := chain.ParseTrailerValue(trailer)
	require.NoError(t, err, "the commit helm made carries its trailer")
	require.Equal(t, s.id, id)
	s.commitSeq = th.Seq

	for _, n := range []string{"Pushed.", "Waiting for review.", "Done."} {
		_, err = v.Note(ctx, n, who)
		require.NoError(t, err)
	}
	s.head, err = v.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	return s
}

func (s *tamperScene) verify(t *testing.T, opts *helm.VerifyOptions) *helm.VerifyReport {
	t.Helper()
	h, err := helm.Open(s.home, nil)
	require.NoError(t, err)
	rep, err := h.Verify(context.Background(), s.id, opts)
	if err != nil {
		// A voyage too damaged to fold is reported as an error: that is
		// detection too, and it names the voyage.
		return &helm.VerifyReport{Voyage: s.id, Problems: []*helm.DamageError{{Voyage: s.id, Reason: err.Error(), Err: err}}}
	}
	return rep
}

func problems(rep *helm.VerifyReport) string {
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.Error())
		b.WriteString("\n")
	}
	return b.String()
}

// tamperCase is a forgery of the tamper matrix.
type tamperCase struct {
	name string
	// forge tampers with the scene's home.
	forge func(t *testing.T, s *tamperScene)
	// bare: found without any witness (a cache or a stub proves it).
	bare bool
	// byCommit: found by the commit's trailer (the forgery reaches at
	// or below the commit's head).
	byCommit bool
}

// tamperCases are the tamper matrix's forgeries (TestTamperMatrix), which
// salvage meets too (TestSalvageOfEachTamperCase).
func tamperCases(ctx context.Context) []tamperCase {
	return []tamperCase{
		{name: "a note's text", byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			_, err := tamper.Replace(ctx, s.home, s.id, "DENIED by security", "PASSED by security")
			require.NoError(t, err)
		}},
		// The reading's text is evidence: its bytes are checked against the
		// BLAKE3 address its event records, without a witness. (Editing
		// the address too means editing the event: the next case's kind.)
		{name: "a reading's text", bare: true, byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			_, err := tamper.Replace(ctx, s.home, s.id, "tests FAILED badly", "tests PASSED fine!")
			require.NoError(t, err)
		}},
		{name: "an action's result", byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			_, err := tamper.Replace(ctx, s.home, s.id, "push REJECTED by remote", "push ACCEPTED by remote")
			require.NoError(t, err)
		}},
		{name: "the last units dropped", byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			require.NoError(t, tamper.Edit(ctx, s.home, s.id, func(r tamper.Record) []byte {
				if r.Seq >= s.commitSeq {
					return nil
				}
				return r.Data
			}))
		}},
		// The reading's whole unit (its artifact and its observation: no
		// entry number refers to it) is dropped, and every later record
		// renumbered.
		{name: "a middle unit dropped and the rest renumbered", byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			require.NoError(t, tamper.Edit(ctx, s.home, s.id, func(r tamper.Record) []byte {
				if s.observed[0] <= r.Seq && r.Seq <= s.observed[1] {
					return nil
				}
				return r.Data
			}))
		}},
		{name: "the last note dropped (above the commit)", forge: func(t *testing.T, s *tamperScene) {
			require.NoError(t, tamper.Edit(ctx, s.home, s.id, func(r tamper.Record) []byte {
				if r.Seq == s.head.Seq {
					return nil
				}
				return r.Data
			}))
		}},
		{name: "an event turned into a stub no jettison names", bare: true, forge: func(t *testing.T, s *tamperScene) {
			stubHolding(t, s.home, s.id, "DENIED by security", false)
		}},
		{name: "events/ restored whole from an older copy, caches left", bare: true, byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			require.NoError(t, tamper.Restore(s.home, s.id, s.backup))
		}},
		{name: "events/ restored whole from an older copy, caches removed", byCommit: true, forge: func(t *testing.T, s *tamperScene) {
			require.NoError(t, tamper.Restore(s.home, s.id, s.backup))
			require.NoError(t, tamper.DropCaches(s.home, s.id))
		}},
	}
}

// The tamper matrix: the test is the recorded agent. It knows every
// format and forges the log with helm's own writer, so every checksum,
// both chains and WATERMARK are recomputed after each edit; it removes
// the caches that would give it away unless the case says otherwise.
// Each forgery is detected where docs/design.md's threat model says it
// is: by a witness (the commit's trailer in the repository, or the given
// head), or, for a rollback that left caches behind and for a hidden
// record, without one.
func TestTamperMatrix(t *testing.T) {
	ctx := context.Background()
	for _, tc := range tamperCases(ctx) {
		t.Run(tc.name, func(t *testing.T) {
			s := newTamperScene(t)
			intact := s.verify(t, &helm.VerifyOptions{Heads: []chain.Head{s.head}, Repositories: []string{s.repo}})
			require.True(t, intact.OK(), "the intact voyage verifies with its witnesses:\n%s", problems(intact))

			tc.forge(t, s)
			if !strings.Contains(tc.name, "caches left") {
				require.NoError(t, tamper.DropCaches(s.home, s.id))
			}

			bare := s.verify(t, nil)
			if tc.bare {
				assert.False(t, bare.OK(), "found without a witness")
			} else {
				// What no local check can find: the threat model says so.
				assert.True(t, bare.OK(), "a forgery that recomputes everything passes without a witness:\n%s", problems(bare))
			}

			given := s.verify(t, &helm.VerifyOptions{Heads: []chain.Head{s.head}})
			if !tc.bare || strings.Contains(tc.name, "restored") {
				require.False(t, given.OK(), "the given head %s is a witness", s.head)
				assert.Contains(t, problems(given), s.head.String(), "the report names the witness")
			}

			byRepo := s.verify(t, &helm.VerifyOptions{Repositories: []string{s.repo}})
			if tc.byCommit {
				require.False(t, byRepo.OK(), "the commit's trailer is a witness")
				sha := strings.TrimSpace(gitOut(t, s.repo, "rev-parse", "HEAD"))
				assert.Contains(t, problems(byRepo), sha[:12], "the report names the commit")
			} else if !tc.bare {
				assert.True(t, byRepo.OK(), "a forgery above the last commit's head is not the commit's to see:\n%s", problems(byRepo))
			}
		})
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return string(out)
}

// stubHolding turns the record of voyage id in home whose data holds
// text into a stub (as compaction leaves a reclaimed record), every
// checksum and link recomputed; dropCaches also removes the caches
// that would prove it.
func stubHolding(t *testing.T, home, id, text string, dropCaches bool) {
	t.Helper()
	ctx := context.Background()
	recs, err := tamper.Read(ctx, home, id)
	require.NoError(t, err)
	for _, r := range recs {
		if strings.Contains(string(r.Data), text) {
			require.NoError(t, tamper.Stub(ctx, home, id, r.Seq))
			if dropCaches {
				require.NoError(t, tamper.DropCaches(home, id))
			}
			return
		}
	}
	t.Fatalf("no record holds %q", text)
}
