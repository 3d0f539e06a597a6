package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/helmtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

var (
	coder    = logbook.Who{Identity: "john-agent", Role: "coder", Method: "example-model"}
	reviewer = logbook.Who{Identity: "carol", Role: "reviewer", Method: "human"}
)

// TestRecordedVoyage records the voyage fix (testdata/voyage.jsonl and
// its views) the first time; every later run replays the recording with
// the code as it is now — a change to how events fold is reported at the
// first event where the views diverge — and requires the script to record
// the same events again. After an intended change: HELMTEST_UPDATE=1.
func TestRecordedVoyage(t *testing.T) {
	r := helmtest.Record(t, "voyage", fix)

	// What a reader of the voyage relies on, from the replayed views.
	info := r.Views.Info
	assert.Equal(t, "Resolve #42: fix widget crash", info.Intent)
	assert.Equal(t, logbook.StatusCompleted, info.Status)
	require.Len(t, r.Views.Logbook, 2)
	b := r.Views.Logbook[0].Bearing
	assert.Equal(t, "Init dereferences w without a nil check; callers pass nil widgets after Close.", b.Reading.Text)
	require.Len(t, b.Reading.History, 1)
	assert.Equal(t, reviewer, b.Reading.History[0].ChallengedBy)
	assert.Empty(t, r.Views.Slate, "the bearing sealed everything observed")

	// The action is replayed from its recorded result: nothing runs git.
	actions := r.Actions()
	require.Len(t, actions, 1)
	assert.JSONEq(t, `{"message":"Fix nil check in widget Init"}`, string(actions[0].Params))
	assert.Equal(t, "683e8573b2cf901b408ff8f2d589272b753888aa", actions[0].Result.SHA)
}

// fix is the voyage the recording was made from, in a helmtest home.
func fix(h *helm.Home) (*helm.Voyage, error) {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "helm-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if err := os.WriteFile(filepath.Join(work, "widget.go"), []byte(widgetGo), 0o644); err != nil {
		return nil, err
	}
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, coder, nil)
	if err != nil {
		return nil, err
	}
	issue, _ := marks.NewContext("Issue #42: the app crashes when a widget is nil")
	file, _ := marks.NewFileContents("widget.go") // relative to Env.Dir: no temporary path is recorded
	for _, m := range []marks.Mark{issue, file} {
		if _, err := v.Observe(ctx, m, coder, &helm.ObserveOptions{Env: &marks.Env{Dir: work}}); err != nil {
			return nil, err
		}
	}
	if _, err := v.TakeBearing(ctx, "Init dereferences w without a nil check.", coder, nil); err != nil {
		return nil, err
	}
	if _, err := v.Challenge(ctx, 1, helm.Challenge{Feedback: "Why is w nil at all?",
		Reading: "Init dereferences w without a nil check; callers pass nil widgets after Close."}, reviewer); err != nil {
		return nil, err
	}
	if _, err := v.Perform(ctx, &recordedCommit{Message: "Fix nil check in widget Init"}, coder, nil); err != nil {
		return nil, err
	}
	return v, v.Complete(ctx, logbook.OutcomeCompleted, "Added the nil check to widget Init.", coder)
}

// recordedCommit stands in for actions.Commit, which needs a repository
// and makes a new SHA on every run. Any type with Kind and Perform is a
// helm.Action; its exported fields are the parameters recorded.
type recordedCommit struct {
	Message string `json:"message"`
}

func (*recordedCommit) Kind() string { return "commit" }

func (*recordedCommit) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{SHA: "683e8573b2cf901b408ff8f2d589272b753888aa"}, nil
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
