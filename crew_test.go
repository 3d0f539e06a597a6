package helm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
)

// TestLifecycle tries every verb on a voyage in every status: what an
// active voyage takes, what a paused (blocked, partial) one refuses until
// it is resumed, and what a final one refuses for good.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	statuses := []logbook.Status{logbook.StatusActive, logbook.StatusBlocked, logbook.StatusPartial, logbook.StatusCompleted, logbook.StatusFailed, logbook.StatusCancelled}
	for _, from := range statuses {
		t.Run(string(from), func(t *testing.T) {
			// reach makes a voyage in status from.
			reach := func(t *testing.T) *helm.Voyage {
				_, v := newVoyage(t, nil)
				_, err := v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)
				require.NoError(t, err)
				if from != logbook.StatusActive {
					require.NoError(t, v.Complete(ctx, logbook.Outcome(from), "ended as "+string(from), who))
				}
				require.Equal(t, from, v.Info().Status)
				return v
			}
			// The verbs that change the voyage's record.
			v := reach(t)
			ran := false
			checks := map[string]error{}
			_, checks["observe"] = v.Observe(ctx, &note{Topic: "b", Text: "b"}, who, nil)
			_, checks["note"] = v.Note(ctx, "a note", who)
			_, checks["perform"] = v.Perform(ctx, &fakeAction{during: func() { ran = true }}, who, nil)
			checks["erase"] = v.Erase(ctx, "test-note:a", who)
			_, checks["bearing"] = v.TakeBearing(ctx, "r", who, nil)
			checks["wipe"] = v.Wipe(ctx, who)
			for name, err := range checks {
				switch {
				case from == logbook.StatusActive:
					assert.NoError(t, err, name)
				case from.Resumable():
					assert.ErrorIs(t, err, helm.ErrVoyagePaused, name)
					assert.Equal(t, hint.Resume, helm.HintOf(err).Kind, name)
				default:
					assert.ErrorIs(t, err, helm.ErrVoyageCompleted, name)
				}
			}
			assert.Equal(t, from == logbook.StatusActive, ran, "only an active voyage touches the world")

			// Resume.
			v = reach(t)
			err := v.Resume(ctx, "unblocked", who)
			if from.Resumable() {
				require.NoError(t, err)
				info := v.Info()
				assert.Equal(t, logbook.StatusActive, info.Status)
				assert.Empty(t, info.Outcome)
				assert.Zero(t, info.CompletedAt)
				require.Len(t, info.Lifecycle, 3)
				assert.Equal(t, helm.Transition{Status: logbook.StatusActive, At: info.Lifecycle[2].At, Who: who, Reason: "unblocked"}, info.Lifecycle[2])
				_, err = v.Note(ctx, "back at it", who)
				assert.NoError(t, err, "a resumed voyage takes changes")
			} else {
				assert.ErrorIs(t, err, helm.ErrNotResumable)
				assert.Equal(t, from, v.Info().Status, "a refused resume changes nothing")
			}

			// Complete with every outcome.
			for _, to := range logbook.Outcomes() {
				v := reach(t)
				err := v.Complete(ctx, to, "then "+string(to), who)
				allowed := from == logbook.StatusActive || from.Resumable() && logbook.Status(to) != from
				if allowed {
					require.NoError(t, err, "%s -> %s", from, to)
					assert.Equal(t, logbook.Status(to), v.Info().Status)
				} else {
					assert.Error(t, err, "%s -> %s", from, to)
					assert.Equal(t, from, v.Info().Status)
				}
			}
		})
	}
}

// TestResumeAcrossProcesses: a voyage blocked by one process is resumed
// by another and continued by a third; each sees the others' transitions.
func TestResumeAcrossProcesses(t *testing.T) {
	if os.Getenv("HELM_TEST_CHILD") != "" {
		t.Skip("run by the parent")
	}
	ctx := context.Background()
	home := t.TempDir()
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Wait for a review", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Complete(ctx, logbook.OutcomeBlocked, "waiting for review", who))
	require.NoError(t, v.Close())

	child := func(step string) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestResumeChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HELM_TEST_CHILD="+step, "HELM_TEST_HOME="+home, "HELM_TEST_VOYAGE="+id)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	child("resume")
	child("note")

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	info := v.Info()
	assert.Equal(t, logbook.StatusActive, info.Status)
	require.Len(t, info.Lifecycle, 3)
	assert.Equal(t, []logbook.Status{logbook.StatusActive, logbook.StatusBlocked, logbook.StatusActive},
		[]logbook.Status{info.Lifecycle[0].Status, info.Lifecycle[1].Status, info.Lifecycle[2].Status})
	assert.Equal(t, "reviewer", info.Lifecycle[2].Who.Identity)
	assert.Equal(t, "review is done", info.Lifecycle[2].Reason)
	entries := entriesOf(t, v)
	require.Len(t, entries, 1)
	assert.Equal(t, "continuing after the review", entries[0].Note.Text)
	list, err := h.List(ctx, &helm.ListOptions{Status: helm.ListOpen})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, logbook.StatusActive, list[0].Status)
}

func TestResumeChild(t *testing.T) {
	step := os.Getenv("HELM_TEST_CHILD")
	if step == "" {
		t.Skip("run by TestResumeAcrossProcesses")
	}
	ctx := context.Background()
	h, err := helm.Open(os.Getenv("HELM_TEST_HOME"), nil)
	require.NoError(t, err)
	v, err := h.Voyage(ctx, os.Getenv("HELM_TEST_VOYAGE"))
	require.NoError(t, err)
	defer v.Close()
	switch step {
	case "resume":
		require.NoError(t, v.Resume(ctx, "review is done", logbook.Who{Identity: "reviewer", Role: "reviewer", Method: "human"}))
	case "note":
		_, err := v.Note(ctx, "continuing after the review", who)
		require.NoError(t, err)
	}
}

// TestEntryNumbersAreStable: failures interleaved with bearings, notes
// and successful actions; every number is given once and kept, a failed
// action keeps its entry, and a challenge of bearing N always reaches the
// entry that was shown as N.
func TestEntryNumbersAreStable(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	shown := map[int]string{} // number -> what the entry was when it was first shown
	record := func(e logbook.Entry, err error) {
		t.Helper()
		var ae *helm.ActionError
		if err != nil && !errors.As(err, &ae) {
			require.NoError(t, err)
		}
		if err == nil {
			shown[e.N] = describe(e)
		}
	}
	bearing := func(i int) {
		_, err := v.Observe(ctx, &note{Topic: fmt.Sprint(i), Text: "x"}, who, nil)
		require.NoError(t, err)
		record(v.TakeBearing(ctx, fmt.Sprint("reading ", i), who, nil))
	}
	bearing(1)
	record(v.Perform(ctx, &fakeAction{fail: errors.New("rejected")}, who, nil))
	bearing(3)
	record(v.Note(ctx, "trying again", who))
	record(v.Perform(ctx, &fakeAction{fail: errors.New("rejected again")}, who, nil))
	record(v.Perform(ctx, &fakeAction{Message: "ok"}, who, nil))
	bearing(7)

	check := func(v *helm.Voyage) {
		t.Helper()
		entries := entriesOf(t, v)
		require.Len(t, entries, 7)
		for i, e := range entries {
			assert.Equal(t, i+1, e.N)
			if want, ok := shown[e.N]; ok {
				assert.Equal(t, want, describe(e), "entry %d is what it was when shown", e.N)
			}
		}
		assert.Equal(t, logbook.ActionFailed, entries[1].Action.Status)
		assert.Equal(t, "rejected", entries[1].Action.Error)
		assert.Equal(t, logbook.ActionFailed, entries[4].Action.Status)
		assert.Empty(t, failedOf(t, v), "failed actions stay in the story")
	}
	check(v)
	// Challenge 3 and 7: the bearings shown with those numbers.
	e, err := v.Challenge(ctx, 3, helm.Challenge{Feedback: "no", Reading: "better 3"}, who)
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	assert.Equal(t, "reading 3", e.Bearing.Reading.History[0].Text)
	_, err = v.Challenge(ctx, 2, helm.Challenge{Feedback: "no", Reading: "x"}, who)
	assert.ErrorIs(t, err, helm.ErrNoSuchBearing, "entry 2 is the failed action")
	shown[3] = "bearing: better 3"

	// The same numbers after a reopen (TestEntryNumbersThroughSnapshot
	// reads them from a snapshot).
	require.NoError(t, v.Close())
	v, err = h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	check(v)
	require.NoError(t, v.Close())
}

func describe(e logbook.Entry) string {
	switch {
	case e.Bearing != nil:
		return "bearing: " + e.Bearing.Reading.Text
	case e.Note != nil:
		return "note: " + e.Note.Text
	case e.Action != nil:
		return "action: " + e.Action.ID
	}
	return string(e.Kind)
}

func TestNoteAndWhy(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Note(ctx, "   ", who)
	assert.ErrorIs(t, err, helm.ErrInvalid)
	e, err := v.Note(ctx, "Waiting for CI.\nIt is slow today.", who)
	require.NoError(t, err)
	assert.Equal(t, logbook.EntryNote, e.Kind)
	assert.Equal(t, 1, e.N)
	e, err = v.Perform(ctx, &fakeAction{Message: "m"}, who, &helm.PerformOptions{Why: "CI is green"})
	require.NoError(t, err)
	assert.Equal(t, "CI is green", e.Action.Why)
	bob := logbook.Who{Identity: "bob", Role: "reviewer", Method: "claude"}
	_, err = v.Note(ctx, "Looks right to me.", bob)
	require.NoError(t, err)
	var story bytes.Buffer
	require.NoError(t, writeStory(ctx, v, &story))
	assert.Contains(t, story.String(), "── Note 1 ── ")
	assert.Contains(t, story.String(), "  Waiting for CI.\n  It is slow today.\n")
	assert.Contains(t, story.String(), "  Why: CI is green\n")
	assert.Regexp(t, `── Note 3 ── \S+ · bob \(reviewer\)\n`, story.String(), "an entry by another identity names it")
	assert.NotContains(t, story.String(), "john-agent (coder)", "the voyage's own identity is not repeated")
}

func TestJudge(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Note(ctx, "did the thing", who)
	require.NoError(t, err)
	judge := logbook.Who{Identity: "carol", Role: "judge", Method: "human"}
	j := logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1}, Text: "The fix is right."}

	_, err = v.Judge(ctx, j, who)
	assert.ErrorIs(t, err, helm.ErrJudgeTookPart, "the voyage's own identity took part")
	for _, bad := range []logbook.Judgement{
		{Score: 0, Dimension: "d", Evidence: []int{1}, Text: "t"},
		{Score: 11, Dimension: "d", Evidence: []int{1}, Text: "t"},
		{Score: 5, Evidence: []int{1}, Text: "t"},
		{Score: 5, Dimension: "d", Text: "t"},
		{Score: 5, Dimension: "d", Evidence: []int{2}, Text: "t"},
	} {
		_, err = v.Judge(ctx, bad, judge)
		assert.ErrorIs(t, err, helm.ErrInvalid, "%+v", bad)
	}
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
	e, err := v.Judge(ctx, j, judge)
	require.NoError(t, err, "a completed voyage is judged")
	assert.Equal(t, 2, e.N)
	assert.Equal(t, logbook.EntryJudgement, e.Kind)
	assert.Equal(t, 8, e.Judgement.Score)
	_, err = v.Judge(ctx, j, judge)
	assert.ErrorIs(t, err, helm.ErrJudgeTookPart, "once judged, the judge is in the crew")
}

func TestStartWithParentAndRepository(t *testing.T) {
	ctx := context.Background()
	h, parent := newVoyage(t, nil)
	sub, err := h.Start(ctx, "Write the tests", helm.OpenWaters, logbook.Who{Identity: "bob", Role: "tester", Method: "m"}, &helm.StartOptions{Parent: parent.ID()[:8], Repo: "octo/widgets", Dir: "/src/widgets", Base: "abc123", Branch: "main"})

	require.NoError(t, err)
	defer sub.Close()
	info := sub.Info()
	assert.Equal(t, parent.ID(), info.Parent, "a prefix is resolved")
	assert.Equal(t, "octo/widgets", info.Repo)
	assert.Equal(t, "abc123", info.Base)
	_, err = h.Start(ctx, "x", helm.OpenWaters, who, &helm.StartOptions{Parent: "ffff"})
	assert.ErrorIs(t, err, helm.ErrNoVoyage)
}

// TestEveryStatusIsAFilter: each status a voyage can be in (active, or an
// outcome it was completed with, as logbook declares them) is a filter
// List takes, so that a new outcome cannot drop out of List, helm list
// --status and the MCP schema that StatusFilters feeds.
func TestEveryStatusIsAFilter(t *testing.T) {
	t.Parallel()
	statuses := []logbook.Status{logbook.StatusActive}
	for _, o := range logbook.Outcomes() {
		statuses = append(statuses, logbook.Status(o))
	}
	for _, st := range statuses {
		assert.Contains(t, helm.StatusFilters(), helm.StatusFilter(st))
	}
}

func TestListByStatusAndIdle(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	opts := deterministic(clock, time.Minute, "b1000000")
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	ids := map[logbook.Status]string{}
	for _, st := range []logbook.Status{logbook.StatusActive, logbook.StatusBlocked, logbook.StatusPartial, logbook.StatusCompleted, logbook.StatusFailed, logbook.StatusCancelled} {
		v, err := h.Start(ctx, string(st), helm.OpenWaters, who, nil)
		require.NoError(t, err)
		if st != logbook.StatusActive {
			require.NoError(t, v.Complete(ctx, logbook.Outcome(st), "ended", who))
		}
		ids[st] = v.ID()
		require.NoError(t, v.Close())
	}
	fresh, err := h.Start(ctx, "fresh", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, fresh.Close())
	names := func(list []helm.VoyageInfo) []string {
		var out []string
		for _, i := range list {
			out = append(out, i.Intent)
		}
		return out
	}
	for _, tt := range []struct {
		filter helm.StatusFilter
		want   []string
	}{
		{helm.ListOpen, []string{"active", "blocked", "partial", "fresh"}},
		{helm.ListClosed, []string{"completed", "failed", "cancelled"}},
		{"blocked", []string{"blocked"}},
		{helm.ListActive, []string{"active", "fresh"}},
		{helm.ListAll, []string{"active", "blocked", "partial", "completed", "failed", "cancelled", "fresh"}},
	} {
		list, err := h.List(ctx, &helm.ListOptions{Status: tt.filter})
		require.NoError(t, err)
		assert.Equal(t, tt.want, names(list), tt.filter)
	}
	_, err = h.List(ctx, &helm.ListOptions{Status: "done"})
	assert.ErrorIs(t, err, helm.ErrInvalid)

	// The deterministic clock moves a minute a reading: "active" was last
	// touched well before "fresh".
	list, err := h.List(ctx, &helm.ListOptions{IdleFor: 5 * time.Minute})
	require.NoError(t, err)
	assert.Equal(t, []string{"active"}, names(list))
	_, err = h.List(ctx, &helm.ListOptions{Status: helm.ListClosed, IdleFor: time.Minute})
	assert.ErrorIs(t, err, helm.ErrInvalid)
}

// TestGuardThroughTheLibrary: Options.Policy is checked before an
// action's intent is recorded and before a command mark runs; a refusal
// is a refused entry naming the rule, and nothing is run.
func TestGuardThroughTheLibrary(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Parse([]byte(`
[[rule]]
name = "agents may not commit"
action = "commit"
actor = "agent"
decision = "deny"

[[rule]]
name = "no rm -rf"
action = "observe-command"
args = "*rm -rf*"
decision = "deny"

[[rule]]
name = "people confirm commits"
action = "commit"
decision = "confirm"
`), "policy.toml")
	require.NoError(t, err)
	opts := fixedOptions()
	opts.Policy = p
	_, v := newVoyage(t, opts)
	agent := logbook.Who{Identity: "bot", Role: "coder", Method: "claude"}

	ran := false
	_, err = v.Perform(ctx, &fakeAction{during: func() { ran = true }}, agent, nil)
	require.ErrorIs(t, err, helm.ErrRefused)
	assert.Contains(t, err.Error(), `denied by rule "agents may not commit" (policy.toml:2)`)
	assert.Equal(t, hint.Policy, helm.HintOf(err).Kind)
	_, err = v.Perform(ctx, &fakeAction{during: func() { ran = true }}, who, nil)
	require.ErrorIs(t, err, helm.ErrNeedsConfirmation)
	assert.False(t, ran, "a refused action is not performed")
	e, err := v.Perform(ctx, &fakeAction{during: func() { ran = true }}, who, &helm.PerformOptions{Confirmed: true, Why: "a person agreed"})
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, 3, e.N)

	dir := t.TempDir()
	m, err := marks.NewCommand(dir, "sh", "-c", "touch ran; rm -rf nothing-here")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m, agent, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.ErrorIs(t, err, helm.ErrRefused)
	assert.NoFileExists(t, filepath.Join(dir, "ran"), "the command never ran")

	entries := entriesOf(t, v)
	require.Len(t, entries, 4)
	for i, want := range []logbook.ActionStatus{logbook.ActionRefused, logbook.ActionRefused, logbook.ActionPerformed, logbook.ActionRefused} {
		assert.Equal(t, want, entries[i].Action.Status, "entry %d", i+1)
	}
	assert.Equal(t, `"agents may not commit" (policy.toml:2)`, entries[0].Action.Rule)
	assert.Equal(t, "bot", entries[0].Who.Identity)
	assert.Equal(t, helm.ObserveCommand, entries[3].Action.Kind)
	assert.Equal(t, 3, v.Info().Counts.Refused)
}

// TestInfoCrewIsACopy: the crew Info returns is the caller's: a later
// entry by an identity that sorts before the others does not rewrite
// it under the caller's feet.
func TestInfoCrewIsACopy(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil) // john-agent
	for _, id := range []string{"mary", "kim"} {
		_, err := v.Note(ctx, "from "+id, logbook.Who{Identity: id, Role: "coder", Method: "human"})
		require.NoError(t, err)
	}
	info := v.Info()
	require.Equal(t, []string{"john-agent", "kim", "mary"}, info.Crew)
	_, err := v.Note(ctx, "from ann", logbook.Who{Identity: "ann", Role: "coder", Method: "human"})
	require.NoError(t, err)
	assert.Equal(t, []string{"john-agent", "kim", "mary"}, info.Crew, "the crew returned before")
	assert.Equal(t, []string{"ann", "john-agent", "kim", "mary"}, v.Info().Crew)
}

// TestLogbookNotesAndJudgementsAreCopies: as for bearings and actions,
// the entries Logbook returns are the caller's: changing a note or a
// judgement changes no view.
func TestLogbookNotesAndJudgementsAreCopies(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Note(ctx, "waiting for review", who)
	require.NoError(t, err)
	judge := logbook.Who{Identity: "carol", Role: "judge", Method: "human"}
	_, err = v.Judge(ctx, logbook.Judgement{Score: 7, Dimension: "care", Evidence: []int{1}, Text: "fine"}, judge)
	require.NoError(t, err)
	p := entriesOf(t, v)
	require.Len(t, p, 2)
	p[0].Note.Text = "changed"
	p[1].Judgement.Text = "changed"
	p[1].Judgement.Evidence[0] = 99
	again := entriesOf(t, v)
	assert.Equal(t, "waiting for review", again[0].Note.Text)
	assert.Equal(t, "fine", again[1].Judgement.Text)
	assert.Equal(t, []int{1}, again[1].Judgement.Evidence)
}

// TestHomePolicyBindsTheLibrary: the home's policy.toml binds a library
// caller that gives no policy of its own; a policy that does not parse
// stops Open, naming the line.
func TestHomePolicyBindsTheLibrary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, helm.PolicyFile), []byte("[[rule]]\nname = \"no commits\"\naction = \"commit\"\ndecision = \"deny\"\n"), 0o600))
	h, err := helm.Open(dir, fixedOptions())
	require.NoError(t, err)
	v, err := h.Start(ctx, "x", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Perform(ctx, &fakeAction{}, who, nil)
	require.ErrorIs(t, err, helm.ErrRefused)
	assert.Contains(t, err.Error(), `"no commits"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, helm.PolicyFile), []byte("[[rule]]\nacton = \"commit\"\n"), 0o600))
	_, err = helm.Open(dir, nil)
	require.ErrorIs(t, err, helm.ErrInvalid)
	assert.Contains(t, err.Error(), "policy.toml:2")
}

// TestWorktreeOfAVoyage: Prepare names the worktree from the new id
// before anything is recorded; its removal is recorded once the voyage
// is no longer active, once.
func TestWorktreeOfAVoyage(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	_, err = h.Start(ctx, "x", helm.OpenWaters, who, &helm.StartOptions{Prepare: func(id string) (helm.StartOptions, error) {
		return helm.StartOptions{}, errors.New("git worktree add failed")
	}})

	require.ErrorContains(t, err, "git worktree add failed")
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, list, "a failed Prepare records nothing")

	var named string
	v, err := h.Start(ctx, "x", helm.OpenWaters, who, &helm.StartOptions{Repo: "o/r", Prepare: func(id string) (helm.StartOptions, error) {
		named = "/src/r-" + id[:8]
		return helm.StartOptions{Repo: "o/r", Worktree: named, Branch: "helm/" + id[:8]}, nil
	}})

	require.NoError(t, err)
	defer v.Close()
	assert.Equal(t, named, v.Info().Worktree)
	assert.Equal(t, "helm/"+v.ID()[:8], v.Info().Branch)
	assert.ErrorIs(t, v.RemoveWorktree(ctx, who, &helm.RemoveWorktreeOptions{}), helm.ErrInvalid, "an active voyage's worktree is in use")
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
	require.NoError(t, v.RemoveWorktree(ctx, who, &helm.RemoveWorktreeOptions{Force: true}))
	assert.False(t, v.Info().WorktreeRemoved.IsZero())
	assert.ErrorIs(t, v.RemoveWorktree(ctx, who, &helm.RemoveWorktreeOptions{}), helm.ErrInvalid, "removed already")
}
