package projection

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

// randomVoyage scripts a valid random voyage of about n events.
func randomVoyage(r *rand.Rand, n int) []*Event {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	who := func() logbook.Who {
		return logbook.Who{Identity: fmt.Sprintf("agent-%d", r.IntN(3)), Role: "coder", Method: "m"}
	}
	ev := func(t Type) *Event {
		at = at.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
		return &Event{Type: t, V: currentVersion[t], At: at, Who: who()}
	}
	start := ev(VoyageStarted)
	start.Voyage = &VoyageInfo{ID: "v", Intent: "random", Kind: "open-waters"}
	events := []*Event{start}
	slate := map[string]logbook.ObservationRecord{}
	var bearings []uint64
	var open []string // intended actions without outcome
	artifacts := map[string]bool{}
	for len(events) < n {
		var e *Event
		switch k := r.IntN(10); {
		case k < 4:
			h := fmt.Sprintf("h%d", r.IntN(20))
			if !artifacts[h] {
				s := ev(ArtifactStowed)
				s.Artifact = &ArtifactRef{Hash: h, Size: int64(r.IntN(1000)), StoredSize: 10, Offset: int64(len(events))}
				events = append(events, s)
				artifacts[h] = true
			}
			e = ev(Observed)
			o := logbook.ObservationRecord{Key: fmt.Sprintf("k%d", r.IntN(6)), Mark: json.RawMessage(`{"kind":"context"}`), Label: "L", Artifact: h, ObservedAt: at}
			e.Obs = &o
			slate[o.Key] = o
		case k == 4 && len(slate) > 0:
			for key := range slate {
				e = ev(MarkErased)
				e.Key = key
				delete(slate, key)
				break
			}
		case k == 5 && r.IntN(4) == 0:
			e = ev(SlateWiped)
			clear(slate)
		case k == 6 && len(slate) > 0:
			e = ev(BearingTaken)
			var obs []logbook.ObservationRecord // nil: the bearing seals the slate as it stands
			if r.IntN(2) == 0 {
				for _, o := range slate {
					obs = append(obs, o)
				}
			}
			e.Bearing = &logbook.Bearing{Observations: obs, Reading: logbook.Reading{Text: fmt.Sprint("reading ", len(events))}}
			clear(slate)
			bearings = append(bearings, uint64(len(events)+1))
		case k == 7 && len(bearings) > 0:
			e = ev(ReadingChallenged)
			e.Challenge = &Challenge{Bearing: bearings[r.IntN(len(bearings))], Feedback: "no", Text: fmt.Sprint("better ", len(events)), Source: logbook.SourceUser}
		case k == 8:
			e = ev(ActionIntended)
			id := fmt.Sprint("a", len(events))
			e.Action = &logbook.ActionRecord{ID: id, Kind: "commit"}
			open = append(open, id)
		case k == 9 && len(open) > 0:
			i := r.IntN(len(open))
			id := open[i]
			open = append(open[:i], open[i+1:]...)
			if r.IntN(3) == 0 {
				e = ev(ActionFailed)
				e.Action = &logbook.ActionRecord{ID: id, Kind: "commit", Error: "boom"}
			} else {
				e = ev(ActionPerformed)
				e.Action = &logbook.ActionRecord{ID: id, Kind: "commit", Result: &logbook.ActionResult{SHA: "abc1234def"}}
			}
		}
		if e != nil {
			events = append(events, e)
		}
	}
	return events
}

// TestRebuiltViewsEqualIncremental folds random voyages two ways — event
// by event as they are made, and rebuilt from their stored bytes in one
// pass — and requires identical views.
func TestRebuiltViewsEqualIncremental(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		events := randomVoyage(r, 20+r.IntN(200))

		var incremental State
		stored := make([][]byte, len(events))
		for i, e := range events {
			require.NoError(t, incremental.Apply(uint64(i+1), e), "seed %d event %d", seed, i+1)
			data, err := Encode(e)
			require.NoError(t, err)
			stored[i] = data
		}
		var rebuilt State
		for i, data := range stored {
			e, err := Decode(data)
			require.NoError(t, err)
			require.NoError(t, rebuilt.Apply(uint64(i+1), e))
		}
		require.Equal(t, incremental, rebuilt, "seed %d", seed)

		for i, entry := range rebuilt.Entries {
			assert.Equal(t, i+1, entry.N, "seed %d: the story is numbered without gaps", seed)
			if entry.Action != nil {
				assert.NotEqual(t, logbook.ActionFailed, entry.Action.Status, "seed %d: failed actions are not in the story", seed)
			}
		}
	}
}

func TestBearingWithoutObservationsSealsTheSlateAsItStands(t *testing.T) {
	var st State
	a := logbook.ObservationRecord{Key: "a", Label: "A"}
	b := logbook.ObservationRecord{Key: "b", Label: "B"}
	evs := []*Event{
		{Type: VoyageStarted, V: 1, Voyage: &VoyageInfo{ID: "v"}},
		{Type: Observed, V: 1, Obs: &b},
		{Type: Observed, V: 1, Obs: &a},
		{Type: BearingTaken, V: 2, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "r"}}},
	}
	for i, e := range evs {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	require.Len(t, st.Entries, 1)
	assert.Equal(t, []logbook.ObservationRecord{a, b}, st.Entries[0].Bearing.Observations, "sealed in key order")
	assert.Empty(t, st.Slate)
}

func TestBearingSealsSlate(t *testing.T) {
	var st State
	events := randomVoyage(rand.New(rand.NewPCG(3, 3)), 1)
	o := logbook.ObservationRecord{Key: "k", Label: "Context: k", Artifact: "h"}
	events = append(events,
		&Event{Type: Observed, V: 1, Obs: &o},
		&Event{Type: BearingTaken, V: 2, Bearing: &logbook.Bearing{Observations: []logbook.ObservationRecord{o}, Reading: logbook.Reading{Text: "r"}}},
	)
	for i, e := range events {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	assert.Empty(t, st.Slate)
	require.Len(t, st.Entries, 1)
	seq, ok := st.BearingSeq(1)
	assert.True(t, ok)
	assert.Equal(t, uint64(3), seq)
}

func TestApplyRefusesOutOfOrder(t *testing.T) {
	var st State
	e := &Event{Type: VoyageStarted, V: 1, Voyage: &VoyageInfo{ID: "v"}}
	require.NoError(t, st.Apply(5, e))
	err := st.Apply(5, &Event{Type: SlateWiped, V: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "out of order")
}

func TestFailedActionLeavesStoryRenumbered(t *testing.T) {
	var st State
	evs := []*Event{
		{Type: VoyageStarted, V: 1, Voyage: &VoyageInfo{ID: "v"}},
		{Type: ActionIntended, V: 1, Action: &logbook.ActionRecord{ID: "a", Kind: "push"}},
		{Type: ActionIntended, V: 1, Action: &logbook.ActionRecord{ID: "b", Kind: "commit"}},
		{Type: ActionFailed, V: 1, Action: &logbook.ActionRecord{ID: "a", Error: "rejected"}},
		{Type: ActionPerformed, V: 1, Action: &logbook.ActionRecord{ID: "b", Result: &logbook.ActionResult{SHA: "abc"}}},
	}
	for i, e := range evs {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	require.Len(t, st.Entries, 1)
	assert.Equal(t, 1, st.Entries[0].N)
	assert.Equal(t, logbook.ActionPerformed, st.Entries[0].Action.Status)
	require.Len(t, st.FailedActions, 1)
	assert.Equal(t, "rejected", st.FailedActions[0].Action.Error)
}
