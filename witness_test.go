package helm_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// witnessed is a voyage on disk whose actions run in a real git
// repository wired to the gh stand-in.
type witnessed struct {
	home *helm.Home
	v    *helm.Voyage
	srv  *ghtest.Server
	git  *ghtest.GitRepo
	r    *runner.Runner
	dir  string // the home
}

func newWitnessed(t *testing.T) *witnessed {
	t.Helper()
	srv := ghtest.NewServer(t)
	g := srv.GitRepo(t, "octo/widgets")
	dir := t.TempDir()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	v, err := h.Start(context.Background(), "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return &witnessed{home: h, v: v, srv: srv, git: g, r: srv.Runner(t, g.Dir), dir: dir}
}

// commit stages a change and performs a commit with message through the
// voyage.
func (w *witnessed) commit(t *testing.T, file, message string) logbook.Entry {
	t.Helper()
	w.git.WriteFile(t, file, file+" changed\n")
	w.git.Git(t, "add", file)
	c, err := actions.NewCommit(w.r, actions.Commit{Message: message})
	require.NoError(t, err)
	e, err := w.v.Perform(context.Background(), c, who, nil)
	require.NoError(t, err)
	return e
}

// ours returns the values of the Helm-Voyage trailers of commit rev, as
// git parses them, that name voyage id.
func ours(t *testing.T, g *ghtest.GitRepo, rev, id string) []string {
	t.Helper()
	var mine []string
	for line := range strings.Lines(g.Git(t, "log", "-1", "--format=%(trailers:key=Helm-Voyage,valueonly)", rev)) {
		if v := strings.TrimSpace(line); strings.HasPrefix(v, id+" ") {
			mine = append(mine, v)
		}
	}
	return mine
}

// Every commit helm makes carries one trailer naming the voyage at the
// head of its chain when the intent was recorded — also when the agent's
// message ends in trailers of its own, or in a Helm-Voyage line of
// another voyage — and the recorded params are the message as asked.
func TestCommitCarriesTheWitnessTrailer(t *testing.T) {
	zeros := strings.Repeat("0", 64)
	for _, tc := range []struct{ name, message string }{
		{"plain", "Fix null check in widget init"},
		{"own trailers", "Fix null check\n\nSigned-off-by: John <john@example.com>\nCo-authored-by: Ann <ann@example.com>"},
		{"forged line of another voyage", "Fix null check\n\nHelm-Voyage: 00000000-0000-4000-8000-000000000000 1:" + zeros},
		{"forged line in the body", "Fix null check\n\nHelm-Voyage: other 1:" + zeros + "\n\nMore words after it."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			e := w.commit(t, "widget.go", tc.message)
			require.Equal(t, logbook.ActionPerformed, e.Action.Status)

			mine := ours(t, w.git, "HEAD", w.v.ID())
			require.Len(t, mine, 1, "one trailer names the voyage:\n%s", w.git.Git(t, "log", "-1", "--format=%B"))
			id, head, err := chain.ParseTrailerValue(mine[0])
			require.NoError(t, err)
			assert.Equal(t, w.v.ID(), id)
			assert.Equal(t, e.Seq, head.Seq, "the head at the intent")
			assert.Equal(t, chain.Trailer(w.v.ID(), head), e.Action.Result.Witness, "the result records the line written")

			var params actions.Commit
			require.NoError(t, json.Unmarshal(e.Action.Params, &params))
			assert.Equal(t, tc.message, params.Message, "the params are recorded as asked")

			rep, err := w.home.Verify(context.Background(), w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
			require.NoError(t, err)
			assert.True(t, rep.OK(), "%v", rep.Problems)
			require.Len(t, rep.Witnesses, 1)
			assert.Equal(t, head, rep.Witnesses[0].Head)
			assert.Equal(t, strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD")), rep.Witnesses[0].Commit)
		})
	}
}

// Undoing a pushed commit reverts it in a new commit, which carries the
// undo's own witness.
func TestUndoRevertCarriesTheWitnessTrailer(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	e := w.commit(t, "widget.go", "Fix null check")
	w.git.Git(t, "push", "-q", "origin", "main")
	w.git.Git(t, "fetch", "-q", w.git.Bare, "main:refs/remotes/origin/main")
	inv, err := w.v.Undoable(ctx, e.N)
	require.NoError(t, err)
	u, err := actions.FromInverse(ctx, w.r, inv)
	require.NoError(t, err)
	require.Equal(t, "revert-commit", u.Kind())
	ue, err := w.v.Perform(ctx, u, who, &helm.PerformOptions{Undoes: e.N})
	require.NoError(t, err)

	assert.Equal(t, "Revert \"Fix null check\"", strings.TrimSpace(w.git.Git(t, "log", "-1", "--format=%s")))
	mine := ours(t, w.git, "HEAD", w.v.ID())
	require.Len(t, mine, 1)
	_, head, err := chain.ParseTrailerValue(mine[0])
	require.NoError(t, err)
	assert.Equal(t, ue.Seq, head.Seq)
	assert.Equal(t, ue.Action.Result.SHA, strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD")))

	rep, err := w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Len(t, rep.Witnesses, 2, "the commit and its revert")
}

// Every pull request, issue and comment helm creates ends with the
// witness line after a blank line; a merge's commit message is it.
func TestGitHubBodiesEndWithTheWitness(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	w.git.Git(t, "checkout", "-q", "-b", "fix")
	w.git.WriteFile(t, "w.go", "fixed\n")
	w.git.Git(t, "add", "w.go")
	w.git.Git(t, "commit", "-q", "-m", "Fix")
	w.git.Git(t, "push", "-q", "origin", "fix")
	iss := w.srv.AddIssue("octo/widgets", ghtest.Issue{Title: "Crash"})
	pr := w.srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Old", Head: "fix", HeadSHA: "abc", User: "john-agent"})
	inline := w.srv.AddReviewComment("octo/widgets", pr, ghtest.ReviewComment{User: "dyreby", Body: "nil?", Path: "w.go", Line: 3})

	for _, tc := range []struct {
		name  string
		build func() (helm.Action, error)
		field string
		asked string
	}{
		{"create-pull-request", func() (helm.Action, error) {
			return actions.NewCreatePullRequest(w.r, actions.CreatePullRequest{Branch: "fix", Base: "main", Title: "Fix", Body: "Fixes #1.\n"})
		}, "body", "Fixes #1."},
		{"create-pull-request with no body", func() (helm.Action, error) {
			return actions.NewCreatePullRequest(w.r, actions.CreatePullRequest{Branch: "fix", Base: "main", Title: "Fix again"})
		}, "body", ""},
		{"create-issue", func() (helm.Action, error) {
			return actions.NewCreateIssue(w.r, actions.CreateIssue{Title: "Bug", Body: "It crashes."})
		}, "body", "It crashes."},
		{"comment-issue", func() (helm.Action, error) {
			return actions.NewCommentIssue(w.r, actions.CommentIssue{Number: iss, Body: "On it."})
		}, "body", "On it."},
		{"comment-pull-request", func() (helm.Action, error) {
			return actions.NewCommentPullRequest(w.r, actions.CommentPullRequest{Number: pr, Body: "Ready."})
		}, "body", "Ready."},
		{"reply-pull-request", func() (helm.Action, error) {
			return actions.NewReplyPullRequest(w.r, actions.ReplyPullRequest{Number: pr, CommentID: inline, Body: "Fixed."})
		}, "body", "Fixed."},
		{"merge-pull-request", func() (helm.Action, error) {
			return actions.NewMergePullRequest(w.r, actions.MergePullRequest{Number: pr, Method: "squash"})
		}, "commit_message", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.build()
			require.NoError(t, err)
			w.srv.ClearRequests()
			e, err := w.v.Perform(ctx, a, who, nil)
			require.NoError(t, err)
			line := chain.Trailer(w.v.ID(), chain.Head{Seq: e.Seq})
			line = line[:strings.LastIndexByte(line, ':')] // the hash is the chain's
			reqs := w.srv.Requests()
			var body string
			for _, r := range reqs {
				if r.Method != "GET" {
					body, _ = r.Body[tc.field].(string)
					break
				}
			}
			want := e.Action.Result.Witness
			require.True(t, strings.HasPrefix(want, line+":"), "%q", want)
			if tc.asked == "" {
				assert.Equal(t, want, body)
			} else {
				assert.Equal(t, tc.asked+"\n\n"+want, body)
			}
			assert.NotContains(t, string(e.Action.Params), "Helm-Voyage", "the params are recorded as asked")
		})
	}
	rep, err := w.home.Verify(ctx, w.v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

// The agent edits a note below a witnessed head, or drops the records up
// to it, and recomputes every checksum and WATERMARK: the log checks out
// alone, and a witness — a commit's trailer, or a head given as printed
// — finds it, naming the witness.
func TestVerifyWithAWitnessFindsAForgedLog(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		forge  func(t *testing.T, home, id string)
		reason string
		// alone: verify without a witness finds nothing (the forger's
		// checksums hold); not asserted where a cache written after the
		// dropped records may prove the rollback (issue 31's caches).
		alone bool
	}{
		{"a note's text edited", func(t *testing.T, home, id string) {
			_, err := tamper.Replace(context.Background(), home, id, "DENIED by security", "PASSED by security")
			require.NoError(t, err)
		}, "the log's link at seq %d differs: edited, truncated or rolled back below it", true},
		{"the witnessed records dropped", func(t *testing.T, home, id string) {
			recs, err := tamper.Read(context.Background(), home, id)
			require.NoError(t, err)
			last := recs[len(recs)-1].Seq
			require.NoError(t, tamper.Edit(context.Background(), home, id, func(r tamper.Record) []byte {
				if r.Seq > last-2 { // the commit's outcome and intent
					return nil
				}
				return r.Data
			}))
		}, "holds seq %d; the log ends at", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			_, err := w.v.Note(ctx, "Review: DENIED by security", who)
			require.NoError(t, err)
			w.commit(t, "widget.go", "Fix null check")
			sha := strings.TrimSpace(w.git.Git(t, "rev-parse", "HEAD"))
			head, err := w.v.Head(ctx)
			require.NoError(t, err)
			_, witness, err := chain.ParseTrailerValue(ours(t, w.git, "HEAD", w.v.ID())[0])
			require.NoError(t, err)
			require.NoError(t, w.v.Close())

			tc.forge(t, w.dir, w.v.ID())
			require.NoError(t, tamper.DropCaches(w.dir, w.v.ID()))
			alone, err := w.home.Verify(ctx, w.v.ID(), nil)
			require.NoError(t, err)
			t.Logf("without a witness: ok %v, %v", alone.OK(), alone.Problems)
			if tc.alone {
				require.True(t, alone.OK(), "the forger recomputed every checksum: the log alone checks out")
			}

			for _, wc := range []struct {
				name string
				opts *helm.VerifyOptions
				who  string
			}{
				{"repository", &helm.VerifyOptions{Repositories: []string{w.git.Dir}}, "commit " + sha},
				{"given head", &helm.VerifyOptions{Heads: []chain.Head{witness}}, "the given head " + witness.String()},
				{"given final head", &helm.VerifyOptions{Heads: []chain.Head{head}}, "the given head " + head.String()},
			} {
				t.Run(wc.name, func(t *testing.T) {
					rep, err := w.home.Verify(ctx, w.v.ID(), wc.opts)
					require.NoError(t, err)
					require.False(t, rep.OK())
					var msgs []string
					for _, p := range rep.Problems {
						msgs = append(msgs, p.Error())
					}
					all := strings.Join(msgs, "\n")
					assert.Contains(t, all, "witness "+wc.who)
					seq := witness.Seq
					if wc.name == "given final head" {
						seq = head.Seq
					}
					assert.Contains(t, all, strings.ReplaceAll(tc.reason, "%d", itoa(seq)))
				})
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// A witness that agrees with the log passes; one naming another voyage
// is not this voyage's; a malformed line is listed, not checked; a line
// naming this voyage with a head the log never had is a false witness,
// and verify says the log and it disagree.
func TestVerifyReadsOnlyWitnessesOfTheVoyage(t *testing.T) {
	ctx := context.Background()
	w := newWitnessed(t)
	w.commit(t, "widget.go", "Fix null check")
	other := "00000000-0000-4000-8000-000000000000 3:" + strings.Repeat("a", 64)
	w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "Someone else's\n\nHelm-Voyage: "+other)
	w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "Broken\n\nHelm-Voyage: "+w.v.ID()+" not-a-head")

	rep, err := w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	require.Len(t, rep.Witnesses, 2)
	var malformed int
	for _, wr := range rep.Witnesses {
		if wr.Malformed != "" {
			malformed++
		}
	}
	assert.Equal(t, 1, malformed)
	head, err := w.v.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, head, rep.Head)

	forged := chain.Head{Seq: 2, Hash: chain.Genesis("not it")}
	w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "Forged\n\n"+chain.Trailer(w.v.ID(), forged))
	rep, err = w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
	require.NoError(t, err)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0].Error(), "the log's link at seq 2 differs")
}

// witnessedThing is a Witnessed action that records what it was given
// and whether it ran.
type witnessedThing struct {
	Title string `json:"title"`
	line  string
	ran   bool
}

func (a *witnessedThing) Kind() string        { return "create-issue" }
func (a *witnessedThing) Witness(line string) { a.line = line }
func (a *witnessedThing) Perform(context.Context) (logbook.ActionResult, error) {
	a.ran = true
	return logbook.ActionResult{Number: 1, Witness: a.line}, nil
}

// An action that carries a witness does not run without one: when the
// chain's head cannot be computed (a reclaimed record whose digest is not
// kept), it is recorded as failed, with the reason, and not run.
func TestPerformDoesNotRunAWitnessedActionWithoutItsHead(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	o, err := v.Observe(ctx, &note{Topic: "big", Text: strings.Repeat("x", 2000)}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, o.Record.Artifact, "no longer needed", who))
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	if _, err := v.Head(ctx); err == nil {
		t.Skip("the journal computes the head past a reclaimed record (segment.Record.Digest landed): no head to fail")
	}

	a := &witnessedThing{Title: "Bug"}
	_, err = v.Perform(ctx, a, who, nil)
	var ae *helm.ActionError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "not run: the head of the voyage's chain could not be computed")
	assert.False(t, a.ran, "the action did not run unwitnessed")
	entries := entriesOf(t, v)
	last := entries[len(entries)-1]
	require.NotNil(t, last.Action)
	assert.Equal(t, logbook.ActionFailed, last.Action.Status)
	assert.Contains(t, last.Action.Error, "could not be computed")

	ok := &witnessedThing{Title: "Bug"}
	_, v2 := newVoyage(t, nil)
	e, err := v2.Perform(ctx, ok, who, nil)
	require.NoError(t, err)
	assert.True(t, ok.ran)
	head := chain.Head{Seq: e.Seq}
	assert.True(t, strings.HasPrefix(ok.line, "Helm-Voyage: "+v2.ID()+" "+strconv.FormatUint(head.Seq, 10)+":"), ok.line)
	assert.Equal(t, ok.line, e.Action.Result.Witness)
}
