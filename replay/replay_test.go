package replay_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/store/storetest"
)

var who = voyagetest.Who

// invertible is an action of kind that leaves result and declares how
// to take it back.
type invertible struct {
	voyagetest.Action
	inverse logbook.Inverse
}

func (a *invertible) Inverse(context.Context, logbook.ActionResult) (logbook.Inverse, error) {
	return a.inverse, nil
}

// everyView records a voyage whose views hold something of every kind:
// a sub-voyage's parent and repository, a slate, a challenged bearing,
// actions performed, failed and undone, a note, a judgement, reduced and
// jettisoned artifacts, a pause and a completion.
func everyView(t *testing.T, h *helm.Home) *helm.Voyage {
	t.Helper()
	ctx := context.Background()
	parent, err := h.Start(ctx, "The crew's voyage", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, parent.Close())
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, &helm.StartOptions{
		Parent: parent.ID(), Repo: "octo/widgets", Dir: "/src/widgets", Base: "1a2b3c4d5e6f", Branch: "main", Worktree: "/src/widgets-42"})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	big, err := v.Observe(ctx, &voyagetest.Note{Topic: "big.txt", Text: strings.Repeat("letters ", 1<<10)}, who, nil)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &voyagetest.Note{Topic: "widget.rs", Text: "fn init() {}"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "init() lacks a null check.", who, nil)
	require.NoError(t, err)
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "It is the caller's check.", Reading: "Callers of init() pass nil."}, voyagetest.Bob)
	require.NoError(t, err)
	voyagetest.Perform(t, v, &invertible{voyagetest.Action{Of: "create-issue", Number: 7, Result: logbook.ActionResult{Number: 7}},
		logbook.Inverse{Kind: "close-issue", Params: []byte(`{"number":7}`)}}, who, "to track it")
	voyagetest.Perform(t, v, &voyagetest.Action{Of: "close-issue", Number: 7, Result: logbook.ActionResult{Number: 7}}, who, "opened twice")
	voyagetest.Perform(t, v, &voyagetest.Action{Of: "push", Fail: errors.New("remote rejected")}, who, "")
	_, err = v.Perform(ctx, &voyagetest.Action{Of: "close-issue", Number: 7}, who, &helm.PerformOptions{Undoes: 2})
	require.NoError(t, err)
	_, err = v.Note(ctx, "Waiting for CI.", voyagetest.Bob)
	require.NoError(t, err)
	secret, err := v.Observe(ctx, &voyagetest.Note{Topic: "customer.csv", Text: "name,card"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, secret.Record.Artifact, "holds a customer's data", who))
	_, err = v.Reduce(ctx, big.Record.Artifact, helm.Reduction{Summary: &voyagetest.NoteSighting{Text: "letters"}, Method: "human"}, who)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &voyagetest.Note{Topic: "left.txt", Text: "left on the slate"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeBlocked, "waiting for CI", who))
	require.NoError(t, v.Resume(ctx, "CI is green", voyagetest.Bob))
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed.", who))
	_, err = v.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1}, Text: "Holds."}, voyagetest.Carol)
	require.NoError(t, err)
	return v
}

// TestFoldGivesTheViewsOfTheVoyage: a voyage's events, written out and
// read back, fold into the views the voyage open shows, in a home on
// disk and in a shared one.
func TestFoldGivesTheViewsOfTheVoyage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	disk, err := helm.Open(filepath.Join(dir, "disk"), voyagetest.Fixed())
	require.NoError(t, err)
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	shared, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", voyagetest.Fixed())
	require.NoError(t, err)
	for name, h := range map[string]*helm.Home{"disk": disk, "shared": shared} {
		t.Run(name, func(t *testing.T) {
			v := everyView(t, h)
			var out bytes.Buffer
			require.NoError(t, replay.WriteEvents(ctx, &out, v))
			events, err := replay.ReadEvents(&out)
			require.NoError(t, err)
			require.Equal(t, v.Info().Seq, events[len(events)-1].Seq, "to the end of the log")
			views, err := replay.Fold(events)
			require.NoError(t, err)
			assert.Equal(t, replay.Views{
				Info: v.Info(), Slate: v.Slate(), Logbook: voyagetest.Entries(t, v, nil), FailedActions: voyagetest.Entries(t, v, &helm.EntriesOptions{OutsideStory: true}), Artifacts: voyagetest.Artifacts(t, v),
			}, *views)
			info := views.Info
			for what, empty := range map[string]bool{"parent": info.Parent == "", "worktree": info.Worktree == "", "outcome": info.Outcome == "",
				"lifecycle": len(info.Lifecycle) < 4, "crew": len(info.Crew) < 3, "slate": len(views.Slate) == 0} {
				assert.False(t, empty, "the views hold a %s", what)
			}
			statuses := map[logbook.ArtifactStatus]bool{}
			for _, a := range views.Artifacts {
				statuses[a.Status] = true
			}
			assert.Len(t, statuses, 3, "stowed, reduced and jettisoned artifacts")
		})
	}
}

// TestFoldNamesTheEventThatDoesNotFold: an event that today's code
// cannot fold (the outcome of an action never intended) is an error; a
// recording's Check names it.
func TestFoldNamesTheEventThatDoesNotFold(t *testing.T) {
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	events := []helm.Event{
		{Type: projection.VoyageStarted, V: 1, At: at, Who: who, Voyage: &projection.VoyageInfo{ID: "a3b0fc12-0000-4000-8000-000000000001", Intent: "x", Kind: "open-waters"}},
		{Type: projection.ActionPerformed, V: 1, At: at, Who: who, Action: &logbook.ActionRecord{ID: "never-intended", Kind: "commit"}},
	}
	_, err := replay.Fold(events)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replay")
	rec, err := replay.NewRecording(events[:1])
	require.NoError(t, err)
	rec.Events = events
	d := rec.Check()
	require.NotNil(t, d)
	assert.Equal(t, 1, d.Index, "the second event")
	assert.Error(t, d.Err)
}
