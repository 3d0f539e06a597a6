package helm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// note is a test mark: observing it returns its text. The real kinds live
// in package marks; the facade needs nothing more than the interface.
type note struct {
	Topic string `json:"topic"`
	Text  string `json:"text"`
}

func (n *note) Kind() string   { return "test-note" }
func (n *note) Key() string    { return "test-note:" + strings.TrimSpace(n.Topic) }
func (n *note) String() string { return "Note @ " + n.Topic }
func (n *note) Observe(ctx context.Context, env *marks.Env) (sighting.Sighting, error) {
	if n.Text == "fail" {
		return nil, errors.New("cannot look")
	}
	return &noteSighting{Text: n.Text}, nil
}

type noteSighting struct {
	Text string `json:"text"`
}

func (s *noteSighting) Kind() string { return "test-note" }

func init() {
	marks.Register("test-note", func() marks.Mark { return &note{} })
	sighting.Register("test-note", func() sighting.Sighting { return &noteSighting{} })
}

var who = logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}

// fixedOptions make a scripted voyage byte-for-byte reproducible: a clock
// from 2026-02-26T17:00:00Z moving a minute per reading, ids from
// a3b0fc12-0000-4000-8000-000000000001 (the "a3b" of DESIGN.md's example).
func fixedOptions() *helm.Options {
	return deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
}

func newVoyage(t *testing.T, opts *helm.Options) (*helm.Home, *helm.Voyage) {
	t.Helper()
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	v, err := h.Start(context.Background(), "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return h, v
}

// fakeAction is an Action that records whether it ran.
type fakeAction struct {
	Message string `json:"message"`
	fail    error
	during  func()
}

func (a *fakeAction) Kind() string { return "commit" }
func (a *fakeAction) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if a.during != nil {
		a.during()
	}
	if a.fail != nil {
		return logbook.ActionResult{}, a.fail
	}
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

func TestSlateIsASetKeyedByMark(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Observe(ctx, &note{Topic: "a", Text: "one"}, who, nil)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: " a", Text: "two"}, who, nil) // same key, newer wins
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "b", Text: "three"}, who, nil)
	require.NoError(t, err)

	slate := v.Slate()
	require.Len(t, slate, 2)
	s, err := readSighting(ctx, v, slate[0].Artifact)
	require.NoError(t, err)
	assert.Equal(t, "two", s.(*noteSighting).Text)

	require.NoError(t, v.Erase(ctx, "test-note:b", who))
	assert.Len(t, v.Slate(), 1)
	err = v.Erase(ctx, "test-note:zzz", who)
	assert.ErrorIs(t, err, helm.ErrNotOnSlate)
	assert.Contains(t, err.Error(), "test-note:a", "the error lists what the slate holds")
	require.NoError(t, v.Wipe(ctx, who))
	assert.Empty(t, v.Slate())
}

func TestBearingWipesSlateAtomically(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	for _, topic := range []string{"a", "b"} {
		_, err := v.Observe(ctx, &note{Topic: topic, Text: topic}, who, nil)
		require.NoError(t, err)
	}
	before := v.Info().Seq
	e, err := v.TakeBearing(ctx, "Two notes agree.", who, nil)
	require.NoError(t, err)
	assert.Equal(t, before+1, v.Info().Seq, "the entry and the wipe are one event")
	assert.Equal(t, 1, e.N)
	assert.Len(t, e.Bearing.Observations, 2)
	assert.Empty(t, v.Slate())

	// A fresh open rebuilds the same views from the events.
	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer v2.Close()
	assert.Empty(t, v2.Slate())
	assert.Equal(t, entriesOf(t, v), entriesOf(t, v2))

	_, err = v.TakeBearing(ctx, "Nothing seen.", who, nil)
	assert.ErrorIs(t, err, helm.ErrEmptySlate)
}

func TestBearingSealsObservationsMadeElsewhere(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	obs := helm.Observation{Mark: &note{Topic: "x"}, Sighting: &noteSighting{Text: "seen elsewhere"}, ObservedAt: time.Now()}
	data, err := obs.MarshalJSON()
	require.NoError(t, err)
	var back helm.Observation
	require.NoError(t, back.UnmarshalJSON(data))
	e, err := v.TakeBearing(ctx, "From a file.", who, &helm.BearingOptions{Observations: []helm.Observation{back}})
	require.NoError(t, err)
	require.Len(t, e.Bearing.Observations, 1)
	assert.Equal(t, "Note @ x", e.Bearing.Observations[0].Label)
	s, err := readSighting(ctx, v, e.Bearing.Observations[0].Artifact)
	require.NoError(t, err)
	assert.Equal(t, "seen elsewhere", s.(*noteSighting).Text)
}

func TestChallengeKeepsHistory(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "First try.", who, nil)
	require.NoError(t, err)
	reviewer := logbook.Who{Identity: "dyreby", Role: "reviewer", Method: "human"}
	e, err := v.Challenge(ctx, 1, helm.Challenge{Feedback: "Too vague.", Reading: "Second try."}, reviewer)
	require.NoError(t, err)
	assert.Equal(t, "Second try.", e.Bearing.Reading.Text)
	require.Len(t, e.Bearing.Reading.History, 1)
	h := e.Bearing.Reading.History[0]
	assert.Equal(t, "First try.", h.Text)
	assert.Equal(t, logbook.SourceAgent, h.Source)
	assert.Equal(t, "Too vague.", h.ChallengedWith)
	assert.Equal(t, "dyreby", h.ChallengedBy.Identity)

	_, err = v.Challenge(ctx, 2, helm.Challenge{Feedback: "x", Reading: "y"}, who)
	assert.Equal(t, hint.ReadLogbook, helm.HintOf(err).Kind)
	assert.ErrorIs(t, err, helm.ErrNoSuchBearing)
}

func TestMissingWhoNamesEverySource(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	_, err := v.Observe(ctx, &note{Topic: "a", Text: "a"}, logbook.Who{}, nil)
	require.NoError(t, err, "an observation takes the voyage's identity")
	_, err = v.TakeBearing(ctx, "r", logbook.Who{Identity: "x"}, nil)
	require.ErrorIs(t, err, helm.ErrMissingWho)
	for _, field := range []string{"Who.Role", "Who.Method"} {
		assert.Contains(t, err.Error(), field)
	}
	assert.Equal(t, hint.GiveWho, helm.HintOf(err).Kind)
	_, err = v.TakeBearing(ctx, "r", logbook.Who{Identity: "../etc", Role: "r", Method: "m"}, nil)
	assert.ErrorIs(t, err, helm.ErrInvalid)
}

func TestPerformRecordsIntentBeforeTouchingTheWorld(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	var seen []logbook.Entry
	a := &fakeAction{Message: "Fix null check", during: func() {
		// Another process opening the voyage now sees the intent.
		other, err := h.Voyage(ctx, v.ID())
		require.NoError(t, err)
		defer other.Close()
		seen = entriesOf(t, other)
	}}
	e, err := v.Perform(ctx, a, who, nil)
	require.NoError(t, err)
	require.Len(t, seen, 1)
	assert.Equal(t, logbook.ActionOutcomeUnknown, seen[0].Action.Status)
	assert.Equal(t, logbook.ActionPerformed, e.Action.Status)
	assert.Equal(t, "abc1234def5678", e.Action.Result.SHA)
	assert.JSONEq(t, `{"message":"Fix null check"}`, string(e.Action.Params))
}

func TestResolveVoyagePrefix(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	var ids []string
	for i := 0; i < 2; i++ {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), helm.OpenWaters, who, nil)
		require.NoError(t, err)
		ids = append(ids, v.ID())
		v.Close()
	}
	got, err := h.Resolve(ctx, ids[1])
	require.NoError(t, err)
	assert.Equal(t, ids[1], got)
	got, err = h.Resolve(ctx, strings.ToUpper(ids[1]))
	require.NoError(t, err, "ids are case-insensitive")
	assert.Equal(t, ids[1], got)
	v, err := h.Start(ctx, "voyage 3", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	v.Close()
	other := "b" + v.ID()[1:]
	require.NoError(t, os.Rename(v.Storage().Dir, filepath.Join(h.Dir(), "voyages", other)))
	got, err = h.Resolve(ctx, "b")
	require.NoError(t, err, "a unique prefix resolves")
	assert.Equal(t, other, got)

	_, err = h.Resolve(ctx, "a3b")
	var amb *helm.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.ErrorIs(t, err, helm.ErrAmbiguous)
	assert.Equal(t, ids, amb.Candidates)
	_, err = h.Resolve(ctx, "ffff")
	assert.ErrorIs(t, err, helm.ErrNoVoyage)
	_, err = h.Resolve(ctx, "../x")
	assert.ErrorIs(t, err, helm.ErrNoVoyage)
}

// incompressible returns n bytes of text that zstd cannot shrink much, so
// its sighting goes to the pack file rather than into the log.
func incompressible(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[r.IntN(16)]
	}
	return string(b)
}

func TestSmallArtifactsLiveInTheLogOnce(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	for _, topic := range []string{"a", "b", "a"} {
		_, err := v.Observe(ctx, &note{Topic: topic, Text: "same bytes"}, who, nil)
		require.NoError(t, err)
	}
	arts := artifactsOf(t, v)
	require.Len(t, arts, 1, "identical sightings share one artifact")
	assert.NotZero(t, arts[0].Blob, "a small sighting is a blob record in the log")
	assert.NoFileExists(t, filepath.Join(v.Storage().Dir, "artifacts.pack"))
	v.Close()

	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer v2.Close()
	s, err := readSighting(ctx, v2, arts[0].Hash)
	require.NoError(t, err)
	assert.Equal(t, "same bytes", s.(*noteSighting).Text)
	rep, err := h.Verify(ctx, v2.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 1, rep.Artifacts)
}

func TestArtifactsAreStowedOnceAndVerified(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	big := incompressible(200 << 10)
	for _, topic := range []string{"a", "b", "a"} {
		_, err := v.Observe(ctx, &note{Topic: topic, Text: big}, who, nil)
		require.NoError(t, err)
	}
	arts := artifactsOf(t, v)
	require.Len(t, arts, 1, "identical sightings share one artifact")
	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 1, rep.Artifacts)

	// Flip a byte of the stored artifact: reading it and verify both say so.
	path := filepath.Join(v.Storage().Dir, "artifacts.pack")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-3] ^= 0x40
	require.NoError(t, os.WriteFile(path, data, 0o600))
	v.Close()
	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err, "opening reads no artifact bodies, so damage there does not stop it")
	defer v2.Close()
	_, err = readArtifact(ctx, v2, arts[0].Hash)
	assert.ErrorIs(t, err, helm.ErrArtifactDamaged)
	assert.Contains(t, err.Error(), "offset")
	assert.ErrorIs(t, err, helm.ErrDamaged)
	var de *helm.DamageError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, filepath.Join(v.Storage().Dir, "artifacts.pack"), de.File)
	assert.Equal(t, arts[0].Hash, de.Artifact)
	assert.Equal(t, hint.Verify, helm.HintOf(err).Kind)
	rep, err = h.Verify(ctx, v2.ID(), nil)
	require.NoError(t, err)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, arts[0].Hash, rep.Problems[0].Artifact)
	assert.Equal(t, de.Offset, rep.Problems[0].Offset)
	assert.ErrorIs(t, rep.Problems[0], helm.ErrArtifactDamaged)

	require.NoError(t, v2.Jettison(ctx, arts[0].Hash[:8], "stale", who))
	_, err = readArtifact(ctx, v2, arts[0].Hash)
	assert.ErrorIs(t, err, helm.ErrArtifactGone)

	// Observing the same bytes again stows them anew: the new evidence is
	// readable.
	_, err = v2.Observe(ctx, &note{Topic: "c", Text: big}, who, nil)
	require.NoError(t, err)
	s, err := readSighting(ctx, v2, arts[0].Hash)
	require.NoError(t, err)
	assert.Equal(t, big, s.(*noteSighting).Text)
}

// TestArtifactPrefixTooShortSaysSo: a prefix of fewer than 4 digits is
// never looked up (the documented minimum), and the error says that, not
// "no such artifact" of an artifact the voyage holds.
func TestArtifactPrefixTooShortSaysSo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, v := newVoyage(t, nil)
	o, err := v.Observe(ctx, &note{Topic: "a", Text: "x"}, who, nil)
	require.NoError(t, err)
	for _, n := range []int{1, 3} {
		_, err = v.ArtifactInfo(ctx, o.Artifact.Hash[:n])
		require.Error(t, err)
		assert.ErrorIs(t, err, helm.ErrNoArtifact)
		assert.Contains(t, err.Error(), "at least 4")
	}
	a, err := v.ArtifactInfo(ctx, o.Artifact.Hash[:4])
	require.NoError(t, err)
	assert.Equal(t, o.Artifact.Hash, a.Hash)
}

func TestOpenReadsNoArtifactBodies(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	_, err := v.Observe(ctx, &note{Topic: "a", Text: incompressible(200 << 10)}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "r", who, nil)
	require.NoError(t, err)
	v.Close()
	require.NoError(t, os.Remove(filepath.Join(v.Storage().Dir, "artifacts.pack")))
	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer v2.Close()
	assert.Len(t, entriesOf(t, v2), 1, "the story needs no sighting")
}

func TestReduceStowsSummary(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	obs, err := v.Observe(ctx, &note{Topic: "a", Text: strings.Repeat("long ", 100)}, who, nil)
	require.NoError(t, err)
	_ = obs
	hash := v.Slate()[0].Artifact
	derived, err := v.Reduce(ctx, hash, helm.Reduction{Summary: &noteSighting{Text: "short"}, Method: "human"}, who)
	require.NoError(t, err)
	_, err = readArtifact(ctx, v, hash)
	assert.ErrorIs(t, err, helm.ErrArtifactGone)
	assert.Equal(t, hint.ReadSummary, helm.HintOf(err).Kind)
	assert.Contains(t, helm.HintOf(err).Text, derived)
	arts := artifactsOf(t, v)
	require.Len(t, arts, 2)
	for _, a := range arts {
		if a.Hash == derived {
			assert.NotZero(t, a.Blob, "a small summary is stowed as every small sighting is: a blob record in the log")
			assert.Equal(t, hash, a.DerivedFrom)
			assert.Equal(t, "human", a.Method)
		} else {
			assert.Equal(t, logbook.ArtifactReduced, a.Status)
			assert.Equal(t, derived, a.ReducedTo)
		}
	}
	assert.NoFileExists(t, filepath.Join(v.Storage().Dir, "artifacts.pack"))
	s, err := readSighting(ctx, v, derived)
	require.NoError(t, err)
	assert.Equal(t, "short", s.(*noteSighting).Text)
}

// script runs the same voyage as DESIGN.md's example.
func script(t *testing.T, h *helm.Home) *helm.Voyage {
	ctx := context.Background()
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: ".", Text: "a rust project"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &fakeAction{Message: "Fix null check"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init.", who))
	return v
}

func TestReplayIsByteIdentical(t *testing.T) {
	read := func(dir string) map[string][]byte {
		files := map[string][]byte{}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			if d.Type().IsRegular() && d.Name() != "LOCK" && d.Name() != "summary.json" {
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				rel, _ := filepath.Rel(dir, p)
				files[rel] = data
			}
			return nil
		}))
		return files
	}
	var runs []map[string][]byte
	var story []string
	for i := 0; i < 2; i++ {
		h, err := helm.Open(t.TempDir(), fixedOptions())
		require.NoError(t, err)
		v := script(t, h)
		var b strings.Builder
		require.NoError(t, writeStory(context.Background(), v, &b))
		story = append(story, b.String())
		runs = append(runs, read(v.Storage().Dir))
		v.Close()
	}
	require.NotEmpty(t, runs[0])
	assert.Equal(t, runs[0], runs[1], "same clock and ids give the same bytes")
	assert.Equal(t, story[0], story[1])
}

// removeIndex removes h's home index, so that List reads each voyage's
// summary.
func removeIndex(h *helm.Home) error {
	err := os.Remove(filepath.Join(h.Dir(), "index"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func TestListReadsSummaries(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	var ids []string
	for i := 0; i < 3; i++ {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), helm.OpenWaters, who, nil)
		require.NoError(t, err)
		ids = append(ids, v.ID())
		if i == 1 {
			require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
		}
		v.Close()
	}
	all, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, all, 3)
	active, err := h.List(ctx, &helm.ListOptions{Status: helm.ListActive})
	require.NoError(t, err)
	assert.Len(t, active, 2)

	// A summary left stale (as by a crash between the event and the
	// summary write) is noticed and rebuilt from the events.
	v, err := h.Voyage(ctx, ids[0])
	require.NoError(t, err)
	summary := filepath.Join(v.Storage().Dir, "summary.json")
	stale, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeFailed, "", who))
	v.Close()
	fresh, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(summary, stale, 0o600))
	require.NoError(t, removeIndex(h)) // the index would vouch for it: read the summary
	completed, err := h.List(ctx, &helm.ListOptions{Status: helm.ListClosed})
	require.NoError(t, err)
	assert.Len(t, completed, 2)

	// A summary of another version of its form is not read, however
	// well it matches the log: the view is rebuilt from the events.
	var forged map[string]any
	require.NoError(t, json.Unmarshal(fresh, &forged))
	require.Equal(t, 5.0, forged["version"], "summaries carry their form's version")
	forged["voyage"].(map[string]any)["intent"] = "forged by an older helm"
	for _, version := range []any{5, nil, 0, 4, 6} {
		if version == nil {
			delete(forged, "version")
		} else {
			forged["version"] = version
		}
		data, err := json.Marshal(forged)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(summary, data, 0o600))
		require.NoError(t, removeIndex(h)) // the index would vouch for it: read the summary
		all, err := h.List(ctx, nil)
		require.NoError(t, err)
		forgedSeen := false
		for _, info := range all {
			forgedSeen = forgedSeen || info.Intent == "forged by an older helm"
		}
		// Version 5 is this form: its (edited) view is trusted, which
		// shows that the others were refused for their version alone.
		assert.Equal(t, version == 5, forgedSeen, "version %v", version)
	}

	_, err = h.List(ctx, &helm.ListOptions{Status: "bogus"})
	assert.ErrorIs(t, err, helm.ErrInvalid)
}

func TestConcurrentGoroutinesLoseNothing(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	const workers, rounds = 8, 15
	var wg sync.WaitGroup
	var bearings atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := logbook.Who{Identity: fmt.Sprint("agent-", w), Role: "coder", Method: "test"}
			for r := 0; r < rounds; r++ {
				_, err := v.Observe(ctx, &note{Topic: fmt.Sprint(w, "-", r), Text: fmt.Sprint(w, r)}, me, nil)
				assert.NoError(t, err)
				if r%3 == 2 {
					_, err := v.TakeBearing(ctx, fmt.Sprint("reading ", w, r), me, nil)
					if err == nil {
						bearings.Add(1)
					} else {
						assert.ErrorIs(t, err, helm.ErrEmptySlate)
					}
				}
			}
		}()
	}
	wg.Wait()
	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer v2.Close()
	sealed := len(v2.Slate())
	for _, e := range entriesOf(t, v2) {
		sealed += len(e.Bearing.Observations)
	}
	assert.Equal(t, workers*rounds, sealed, "every observation is on the slate or in exactly one bearing")
	assert.Equal(t, int(bearings.Load()), len(entriesOf(t, v2)))
	assert.Len(t, artifactsOf(t, v2), workers*rounds)
}

func TestHomeVerifyReportsDamageThatStopsOpening(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	for i := 0; i < 3; i++ {
		_, err := v.Observe(ctx, &note{Topic: fmt.Sprint(i), Text: fmt.Sprint(i)}, who, nil)
		require.NoError(t, err)
	}
	rep, err := h.Verify(ctx, v.ID()[:8], nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 3, rep.Artifacts, "three artifacts checked")
	v.Close()

	// Flip a byte in the middle of the event log: opening refuses, and
	// verify says where.
	segs, err := filepath.Glob(filepath.Join(v.Storage().Dir, "events", "*.seg"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	flipInData(t, segs[0], 3)

	_, err = h.Voyage(ctx, v.ID())
	require.Error(t, err)
	rep, err = h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	require.False(t, rep.OK())
	p := rep.Problems[0]
	assert.Equal(t, segs[0], p.File)
	assert.NotZero(t, p.Offset)
	assert.NotEmpty(t, p.Reason)
	assert.ErrorIs(t, p, helm.ErrDamaged)
	assert.Contains(t, p.Error(), filepath.Base(segs[0]))
	assert.Contains(t, p.Error(), "offset")
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	var back struct {
		Problems []map[string]any `json:"problems"`
	}
	require.NoError(t, json.Unmarshal(data, &back))
	require.Len(t, back.Problems, 1)
	for _, field := range []string{"file", "offset", "seq", "reason"} {
		assert.Contains(t, back.Problems[0], field, "the JSON form keeps the problem's %s", field)
	}
}

func TestListShowsEveryReadableVoyageDespiteADamagedOne(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	var dirs []string
	for i := 0; i < 3; i++ {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), helm.OpenWaters, who, nil)
		require.NoError(t, err)
		dirs = append(dirs, v.Storage().Dir)
		v.Close()
	}
	// Damage the second voyage's log and drop its summary, so List must
	// read its events.
	segs, err := filepath.Glob(filepath.Join(dirs[1], "events", "*.seg"))
	require.NoError(t, err)
	flipInData(t, segs[0], 2)
	require.NoError(t, os.Remove(filepath.Join(dirs[1], "summary.json")))

	list, err := h.List(ctx, nil)
	var le *helm.ListError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, []string{filepath.Base(dirs[1])}, le.Voyages)
	assert.Equal(t, hint.Verify, helm.HintOf(err).Kind)
	require.Len(t, list, 2)
	assert.Equal(t, "voyage 0", list[0].Intent)
	assert.Equal(t, "voyage 2", list[1].Intent)
}

// flipInData flips a bit at 1/div of the written part of a segment file
// (segments are preallocated: the zeros after the data are free space).
func flipInData(t *testing.T, path string, div int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	require.NotZero(t, end, "%s holds no data", path)
	data[end/div] ^= 0x01
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func TestStartRemovesWhatCrashedStartsLeft(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	voyages := filepath.Join(home, "voyages")
	old := filepath.Join(voyages, ".new-0b7e4c1e-crashed")
	recent := filepath.Join(voyages, ".new-6a1f2d3c-starting")
	for _, dir := range []string{old, recent} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "00000000000000000001.seg"), []byte("partial"), 0o600))
	}
	long := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(old, long, long))

	h, err := helm.Open(home, fixedOptions())
	require.NoError(t, err)
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, list, "listing ignores starts in progress")
	assert.DirExists(t, old, "opening and listing read only")

	v, err := h.Start(ctx, "after a crash", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	v.Close()
	assert.NoDirExists(t, old, "a start older than ten minutes was abandoned")
	assert.DirExists(t, recent, "a start in progress elsewhere is left alone")
}
