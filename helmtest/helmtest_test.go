package helmtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/helmtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/replay"
)

var (
	ann = logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	bot = logbook.Who{Identity: "bot", Role: "coder", Method: "claude"}
)

// The rule checks, without the disk's timing: given a history, when a
// change is tried, then what it recorded (or refused).
func TestGivenWhenThen(t *testing.T) {
	ctx := context.Background()
	t.Run("a bearing seals the slate", func(t *testing.T) {
		helmtest.Given(t,
			helmtest.Started("Fix #42", ann),
			helmtest.Observed("the crash report", ann),
		).When(func(v *helm.Voyage) error {
			_, err := v.TakeBearing(ctx, "A nil config.", ann, nil)
			return err
		}).Then(
			helmtest.Bearing("A nil config.", ann),
		).ThenViews(func(t testing.TB, v *replay.Views) {
			assert.Empty(t, v.Slate)
			require.Len(t, v.Logbook, 1)
			assert.Equal(t, "Context: the crash report", v.Logbook[0].Bearing.Observations[0].Label)
		})
	})
	t.Run("an empty slate takes no bearing", func(t *testing.T) {
		helmtest.Given(t, helmtest.Started("Fix #42", ann)).
			When(func(v *helm.Voyage) error { _, err := v.TakeBearing(ctx, "r", ann, nil); return err }).
			ThenError(helm.ErrEmptySlate).ThenEvents()
	})
	t.Run("a challenge names the bearing's entry", func(t *testing.T) {
		helmtest.Given(t,
			helmtest.Started("Fix #42", ann),
			helmtest.Noted("looking", ann),
			helmtest.Observed("x", ann),
			helmtest.Bearing("first", ann),
		).When(func(v *helm.Voyage) error {
			_, err := v.Challenge(ctx, 2, helm.Challenge{Feedback: "no", Reading: "second"}, ann)
			return err
		}).Then(projection.Event{Type: projection.ReadingChallenged, Who: ann,
			Challenge: &projection.Challenge{Bearing: 4, Feedback: "no", Text: "second", Source: logbook.SourceUser}})
	})
	t.Run("a blocked voyage waits for a resume", func(t *testing.T) {
		s := helmtest.Given(t,
			helmtest.Started("Fix #42", ann),
			helmtest.Completed(logbook.OutcomeBlocked, "waiting", ann),
		)
		s.When(func(v *helm.Voyage) error { _, err := v.Note(ctx, "more", ann); return err }).
			ThenError(helm.ErrVoyagePaused).ThenEvents()
		s.When(func(v *helm.Voyage) error { return v.Resume(ctx, "go", ann) }).
			Then(projection.Event{Type: projection.VoyageResumed, Who: ann, Resumption: &projection.Resumption{Reason: "go"}})
	})
	t.Run("a guard rule refuses, and the refusal is recorded", func(t *testing.T) {
		p, err := policy.Parse([]byte("[[rule]]\nname = \"no agents\"\nactor = \"agent\"\ndecision = \"deny\"\n"), "policy.toml")
		require.NoError(t, err)
		opts := helmtest.Options()
		opts.Policy = p
		h, err := helm.Open(t.TempDir(), opts)
		require.NoError(t, err)
		helmtest.GivenIn(t, h, helmtest.Started("Fix #42", ann)).
			When(func(v *helm.Voyage) error { _, err := v.Note(ctx, "notes are not actions", bot); return err }).
			Then(helmtest.Noted("notes are not actions", bot))
		helmtest.GivenIn(t, h, projection.Event{Type: projection.VoyageStarted, Who: ann,
			Voyage: &projection.VoyageInfo{ID: "7e570000-0000-4000-8000-0000000000b2", Intent: "x", Kind: "open-waters"}}).
			When(func(v *helm.Voyage) error { _, err := v.Perform(ctx, &commit{}, bot, nil); return err }).
			ThenError(helm.ErrRefused).
			ThenEvents(projection.Event{Type: projection.ActionRefused, N: 1, Who: bot, Action: &logbook.ActionRecord{
				Kind: "commit", Params: []byte(`{"message":""}`), Rule: `"no agents" (policy.toml:1)`, Error: `denied by rule "no agents" (policy.toml:1)`}})
	})
}

// commit is an action that touches nothing.
type commit struct {
	Message string `json:"message"`
}

func (*commit) Kind() string { return "commit" }
func (*commit) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{SHA: "abc1234"}, nil
}

// script records a small voyage in h: an observation, a bearing, its
// challenge, an action, a note.
func script(h *helm.Home) (*helm.Voyage, error) {
	ctx := context.Background()
	v, err := h.Start(ctx, "Fix #42", helm.ResolveIssue, ann, nil)
	if err != nil {
		return nil, err
	}
	m, _ := marks.NewContext("the crash report")
	if _, err := v.Observe(ctx, m, ann, nil); err != nil {
		return nil, err
	}
	if _, err := v.TakeBearing(ctx, "A nil config.", ann, nil); err != nil {
		return nil, err
	}
	if _, err := v.Challenge(ctx, 1, helm.Challenge{Feedback: "why nil?", Reading: "Close leaves it nil."}, ann); err != nil {
		return nil, err
	}
	if _, err := v.Perform(ctx, &commit{Message: "Fix"}, ann, nil); err != nil {
		return nil, err
	}
	_, err = v.Note(ctx, "done", ann)
	return v, err
}

func TestRecordThenReplay(t *testing.T) {
	t.Chdir(t.TempDir())
	helmtest.Record(t, "fix-42", script) // the first run records
	require.FileExists(t, filepath.Join("testdata", "fix-42.jsonl"))
	require.FileExists(t, filepath.Join("testdata", "fix-42.views.json"))
	r := helmtest.Record(t, "fix-42", script) // later runs replay, and compare
	actions := r.Actions()
	require.Len(t, actions, 1)
	assert.Equal(t, "commit", actions[0].Kind)
	assert.JSONEq(t, `{"message":"Fix"}`, string(actions[0].Params))
	assert.Equal(t, "abc1234", actions[0].Result.SHA)
	assert.Equal(t, 2, actions[0].N)
	r = helmtest.Replay(t, filepath.Join("testdata", "fix-42.jsonl"))
	assert.Equal(t, "Close leaves it nil.", r.Views.Logbook[0].Bearing.Reading.Text)
}

// TestDivergenceReport: a recording made by a projection that read a
// challenge differently (a fixture standing for a changed fold) is
// reported at the challenge, with the field that differs.
func TestDivergenceReport(t *testing.T) {
	ctx := context.Background()
	h := helmtest.Home(t)
	v, err := script(h)
	require.NoError(t, err)
	var buf strings.Builder
	require.NoError(t, replay.WriteEvents(ctx, &buf, v))
	events, err := replay.ReadEvents(strings.NewReader(buf.String()))
	require.NoError(t, err)

	// The "other projection": from the challenge on, it kept the first
	// reading.
	rec, err := replay.NewRecording(events)
	require.NoError(t, err)
	challenge := -1
	for i, e := range events {
		if e.Type == projection.ReadingChallenged {
			challenge = i
		}
	}
	require.NotEqual(t, -1, challenge)
	for i := challenge; i < len(events); i++ {
		views, err := replay.Fold(events[:i+1])
		require.NoError(t, err)
		views.Logbook[0].Bearing.Reading.Text = "A nil config."
		rec.Digests[i] = replay.ViewsDigest(views)
		rec.Views = views
	}
	rec.Path = filepath.Join(t.TempDir(), "changed.jsonl")
	require.NoError(t, rec.WriteFiles())

	read, err := replay.ReadRecording(ctx, rec.Path)
	require.NoError(t, err)
	d := read.Check()
	require.NotNil(t, d)
	assert.Equal(t, challenge, d.Index)
	assert.Equal(t, projection.ReadingChallenged, d.Type)
	assert.Equal(t, "ann", d.Who.Identity)
	assert.Contains(t, d.Fields, `Logbook[0].bearing.reading.text: - "A nil config." + "Close leaves it nil."`)
	assert.Contains(t, d.String(), "the views diverge after event 5 (seq 6, reading-challenged by ann)")

	// An event today's code cannot fold is reported as such.
	read.Events[challenge].Challenge.Bearing = 99
	d = read.Check()
	require.NotNil(t, d)
	assert.Equal(t, challenge, d.Index)
	require.Error(t, d.Err)
	assert.Contains(t, d.String(), "it no longer folds")

	// A recording of a voyage directory reads the same.
	good, err := replay.NewRecording(events)
	require.NoError(t, err)
	good.Path = v.Storage().Dir + ".jsonl" // WriteFiles writes .jsonl; put the views where the directory's go
	require.NoError(t, good.WriteFiles())
	require.NoError(t, os.Rename(replay.ViewsPath(good.Path), replay.ViewsPath(v.Storage().Dir)))
	fromDir, err := replay.ReadRecording(ctx, v.Storage().Dir)
	require.NoError(t, err)
	assert.Nil(t, fromDir.Check())
}

// fatalT records the failure helmtest reports instead of ending the test.
type fatalT struct {
	testing.TB
	failed string
}

func (t *fatalT) Helper()                   {}
func (t *fatalT) Logf(string, ...any)       {}
func (t *fatalT) Fatalf(f string, a ...any) { t.failed = fmt.Sprintf(f, a...); panic(t) }

// replayFails runs Replay with a fatalT and returns what it reported.
func replayFails(t *testing.T, path string) string {
	t.Helper()
	ft := &fatalT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != ft {
				panic(r)
			}
		}()
		helmtest.Replay(ft, path)
	}()
	return ft.failed
}

// TestReplayReadsAnythingHelmExports: the archive helm voyage export
// writes and a voyage directory copied out of its home replay to the
// views the home holds, without recorded views beside them; a tampered
// archive, a directory that is no voyage's, and a recording whose views
// went missing fail the test, naming what is wrong.
func TestReplayReadsAnythingHelmExports(t *testing.T) {
	ctx := context.Background()
	h := helmtest.Home(t)
	v, err := script(h)
	require.NoError(t, err)
	var events []helm.Event
	for e, err := range v.Events(ctx, 1) {
		require.NoError(t, err)
		events = append(events, e)
	}
	want, err := replay.Fold(events)
	require.NoError(t, err)

	out := t.TempDir()
	archive := filepath.Join(out, "fix-42.jsonl")
	f, err := os.Create(archive)
	require.NoError(t, err)
	require.NoError(t, h.Export(ctx, v.ID(), f))
	require.NoError(t, f.Close())
	copied := filepath.Join(out, "elsewhere", v.ID())
	require.NoError(t, os.CopyFS(copied, os.DirFS(v.Storage().Dir)))
	require.NoError(t, v.Close())

	for _, tc := range []struct {
		name, path string
		form       replay.Form
	}{
		{"export archive", archive, replay.Archive},
		{"voyage directory in its home", v.Storage().Dir, replay.VoyageDir},
		{"voyage directory copied out of its home", copied, replay.VoyageDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := helmtest.Replay(t, tc.path)
			assert.Equal(t, tc.form, r.Recording.Form)
			assert.Nil(t, r.Recording.Views, "nothing was recorded beside it to compare")
			assert.Empty(t, replay.DiffViews(want, r.Views))
			assert.Equal(t, "Close leaves it nil.", r.Views.Logbook[0].Bearing.Reading.Text)
			require.Len(t, r.Actions(), 1)
		})
	}

	t.Run("a tampered archive fails the test at its line", func(t *testing.T) {
		data, err := os.ReadFile(archive)
		require.NoError(t, err)
		bad := filepath.Join(t.TempDir(), "bad.jsonl")
		require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(data), "Close leaves it nil.", "Close leaves it NIL.", 1)), 0o600))
		msg := replayFails(t, bad)
		assert.Contains(t, msg, "line")
		assert.Contains(t, msg, bad)
	})
	t.Run("a directory that holds no voyage fails the test", func(t *testing.T) {
		assert.Contains(t, replayFails(t, t.TempDir()), "not a voyage directory")
	})
	t.Run("Record refuses a recording whose views went missing", func(t *testing.T) {
		t.Chdir(t.TempDir())
		helmtest.Record(t, "fix-42", script)
		require.NoError(t, os.Remove(filepath.Join("testdata", "fix-42.views.json")))
		ft := &fatalT{TB: t}
		func() {
			defer func() { _ = recover() }()
			helmtest.Record(ft, "fix-42", script)
		}()
		assert.Contains(t, ft.failed, "has no recorded views")
	})
}
