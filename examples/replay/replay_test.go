package replay_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// update rewrites the recording from the script instead of comparing.
var update = flag.Bool("update", false, "rewrite testdata/voyage.jsonl from the script")

const recording = "testdata/voyage.jsonl"

var (
	coder    = helm.Who{Identity: "john-agent", Role: "coder", Method: "example-model"}
	reviewer = helm.Who{Identity: "carol", Role: "reviewer", Method: "human"}
)

// TestRecordedVoyage replays the recording into fresh views — the voyage,
// the logbook, the slate, the artifact index — and checks what a reader of
// the voyage relies on. No helm home, no files, no clock: events in, views
// out.
func TestRecordedVoyage(t *testing.T) {
	f, err := os.Open(recording)
	require.NoError(t, err)
	defer f.Close()
	events, err := helm.ReadEvents(f)
	require.NoError(t, err)
	views, err := helm.Replay(events)
	require.NoError(t, err)
	info := views.Info

	// The voyage view.
	at := func(min int) time.Time { return time.Date(2026, 2, 26, 17, min, 0, 0, time.UTC) }
	assert.Equal(t, "Resolve #42: fix widget crash", info.Intent)
	assert.Equal(t, helm.ResolveIssue, info.Kind)
	assert.Equal(t, "john-agent", info.Identity)
	assert.Equal(t, at(1), info.Created)
	assert.Equal(t, helm.StatusCompleted, info.Status)
	assert.Equal(t, helm.OutcomeCompleted, info.Outcome)
	assert.Equal(t, "Added the nil check to widget Init.", info.Summary)
	// Seq counts log records: the events, and the blob records that hold
	// small sightings beside their artifact-stowed events.
	assert.Equal(t, events[len(events)-1].Seq, info.Seq, "every event was folded in")

	// The logbook: one bearing, then one action.
	require.Len(t, views.Logbook, 2)
	stowed := map[string]bool{}
	for _, a := range views.Artifacts {
		stowed[a.Hash] = a.Status == helm.ArtifactStowed
	}

	b := views.Logbook[0]
	assert.Equal(t, helm.EntryBearing, b.Kind)
	assert.Equal(t, coder, b.Who, "the bearing records who took it")
	var labels []string
	for _, o := range b.Bearing.Observations {
		labels = append(labels, o.Label)
		assert.True(t, stowed[o.Artifact], "each sealed observation's evidence is in the artifact index")
	}
	assert.Equal(t, []string{"Context: Issue #42: the app crashes when a widget is nil", "FileContents: widget.go"}, labels)
	// The reading was challenged: the accepted text and the attempt it
	// replaced are both kept.
	assert.Equal(t, "Init dereferences w without a nil check; callers pass nil widgets after Close.", b.Bearing.Reading.Text)
	require.Len(t, b.Bearing.Reading.History, 1)
	assert.Equal(t, "Init dereferences w without a nil check.", b.Bearing.Reading.History[0].Text)
	assert.Equal(t, "Why is w nil at all?", b.Bearing.Reading.History[0].ChallengedWith)
	assert.Equal(t, reviewer, b.Bearing.Reading.History[0].ChallengedBy)

	a := views.Logbook[1]
	assert.Equal(t, helm.EntryAction, a.Kind)
	assert.Equal(t, "commit", a.Action.Kind)
	assert.Equal(t, helm.ActionPerformed, a.Action.Status)
	assert.Equal(t, "683e8573b2cf901b408ff8f2d589272b753888aa", a.Action.Result.SHA)
	assert.JSONEq(t, `{"message":"Fix nil check in widget Init"}`, string(a.Action.Params))
	assert.Equal(t, "committed (683e857)", logbook.DescribeAction(a.Action))
	assert.Empty(t, views.FailedActions)

	// The slate: the bearing sealed everything that was observed.
	assert.Empty(t, views.Slate)
}

// TestScriptRecordsTheRecording is the "replay in CI" check: it runs the
// script that made the recording again, against the code as it is now,
// with the same clock and ids, and requires the exported events to be the
// recording byte for byte. A change to what helm records — an event's
// shape, its order, a missing or extra event — fails here, at the first
// line where the two diverge.
//
// After an intended change, rewrite the recording with -update and review
// its diff like any other change.
func TestScriptRecordsTheRecording(t *testing.T) {
	got := runScript(t)
	if *update {
		require.NoError(t, os.WriteFile(recording, got, 0o644))
		t.Logf("rewrote %s", recording)
		return
	}
	want, err := os.ReadFile(recording)
	require.NoError(t, err, "no recording yet? run: go test ./examples/replay -run TestScript -update")
	if !bytes.Equal(got, want) {
		t.Fatalf("the script no longer records %s:\n%s\n(an intended change? rewrite it with -update)", recording, firstDivergence(want, got))
	}
}

// runScript plays the voyage the recording was made from in a fresh home
// and returns its exported events.
func runScript(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()

	// The file the voyage looks at. Marks resolve relative paths against
	// the observation's Env.Dir, so the temporary directory appears
	// nowhere in the events: only "widget.go" does.
	work := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(work, "widget.go"), []byte(widgetGo), 0o644))

	opts := deterministic()
	opts.NoSync = true // a test of what is recorded, not of durability
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)

	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, coder)
	require.NoError(t, err)
	defer v.Close()

	issue, err := marks.NewContext("Issue #42: the app crashes when a widget is nil")
	require.NoError(t, err)
	file, err := marks.NewFileContents("widget.go")
	require.NoError(t, err)
	for _, m := range []marks.Mark{issue, file} {
		_, err := v.Observe(ctx, m, coder, &helm.ObserveOptions{Env: &marks.Env{Dir: work}})
		require.NoError(t, err)
	}
	_, err = v.TakeBearing(ctx, "Init dereferences w without a nil check.", coder, nil)
	require.NoError(t, err)
	_, err = v.Challenge(ctx, 1, helm.Challenge{
		Feedback: "Why is w nil at all?",
		Reading:  "Init dereferences w without a nil check; callers pass nil widgets after Close.",
	}, reviewer)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &recordedCommit{Message: "Fix nil check in widget Init", sha: "683e8573b2cf901b408ff8f2d589272b753888aa"}, coder)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, helm.OutcomeCompleted, "Added the nil check to widget Init.", coder))

	var out bytes.Buffer
	require.NoError(t, v.Export(ctx, &out))

	// The promise replay rests on: folding the exported events into fresh
	// views gives the views the live voyage has.
	events, err := helm.ReadEvents(bytes.NewReader(out.Bytes()))
	require.NoError(t, err)
	views, err := helm.Replay(events)
	require.NoError(t, err)
	require.Equal(t, helm.Views{
		Info: v.Info(), Slate: v.Slate(), Logbook: v.Logbook(), FailedActions: v.FailedActions(), Artifacts: v.Artifacts(),
	}, *views)
	return out.Bytes()
}

// deterministic returns options whose clock and ids are fixed sequences:
// the clock starts at 2026-02-26T17:00:00Z and moves one minute per
// reading, and ids count up. With them a script records the same events,
// to the byte, on every run.
func deterministic() *helm.Options {
	return helm.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "00000000")
}

// recordedCommit stands in for actions.Commit, which needs a git
// repository and makes a new SHA on every run. Any type with Kind and
// Perform is a helm.Action; its exported fields are the parameters the
// logbook records.
type recordedCommit struct {
	Message string `json:"message"`
	sha     string
}

func (*recordedCommit) Kind() string { return "commit" }

func (a *recordedCommit) Perform(context.Context) (helm.ActionResult, error) {
	return helm.ActionResult{SHA: a.sha}, nil
}

// firstDivergence describes the first line (one event) where got differs
// from want.
func firstDivergence(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if !bytes.Equal(wl, gl) {
			return fmt.Sprintf("event %d differs\n  recorded: %s\n  now:      %s", i+1, orNothing(wl), orNothing(gl))
		}
	}
	return "the bytes differ" // unreachable when the byte slices differ
}

func orNothing(line []byte) string {
	if len(line) == 0 {
		return "(nothing)"
	}
	return string(line)
}

const widgetGo = `// Package widget draws widgets.
package widget

// Widget is a named widget.
type Widget struct{ name string }

// Init returns the widget's name.
func (w *Widget) Init() string {
	return w.name
}
`
