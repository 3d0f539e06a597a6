package projection

import (
	"bytes"
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
	var open []string  // intended actions without outcome
	var calls []string // tool steps without result
	artifacts := map[string]bool{}
	for len(events) < n {
		var e *Event
		switch k := r.IntN(15); {
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
				if r.IntN(2) == 0 {
					e.Action.Inverse = &logbook.Inverse{Kind: "reset-commit", Params: json.RawMessage(`{"sha":"abc1234def"}`)}
				}
			}
		case k == 10:
			e = ev(NoteAdded)
			e.Note = &logbook.Note{Text: fmt.Sprint("note ", len(events))}
		case k == 11:
			e = ev(ActionRefused)
			e.Action = &logbook.ActionRecord{ID: fmt.Sprint("r", len(events)), Kind: "merge-pull-request", Why: "ship", Rule: "no merges"}
		case k == 12 && r.IntN(2) == 0:
			e = ev(Judged)
			e.Judgement = &logbook.Judgement{Score: 1 + r.IntN(10), Dimension: "care", Evidence: []int{1}, Text: "ok"}
		case k == 13:
			e = ev(StepRecorded)
			id := fmt.Sprint("t", len(events))
			e.Step = &logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: "s", ID: id, Tool: "Bash",
				Input: json.RawMessage(`{"command":"ls"}`), Text: "ls", Decision: &logbook.StepDecision{Verdict: "allow"}}
			if r.IntN(3) == 0 {
				e.Step = &logbook.Step{Kind: logbook.StepPrompt, Agent: "claude-code", Session: "s", Text: fmt.Sprint("prompt ", len(events)),
					Usage: &logbook.Usage{Model: "m", InputTokens: 7, CostUSD: 0.25}}
			} else {
				calls = append(calls, id)
			}
		case k == 14 && len(calls) > 0:
			i := r.IntN(len(calls))
			id := calls[i]
			calls = append(calls[:i], calls[i+1:]...)
			e = ev(StepFinished)
			e.Step = &logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: "s", ID: id,
				Result: &logbook.StepResult{Output: "ok", Failed: r.IntN(4) == 0, Duration: time.Second},
				Usage:  &logbook.Usage{Model: "m", OutputTokens: 3}}
		case k == 12:
			c := ev(VoyageCompleted)
			c.Completion = &Completion{Outcome: OutcomeBlocked, Summary: "waiting"}
			events = append(events, c)
			e = ev(VoyageResumed)
			e.Resumption = &Resumption{Reason: "unblocked"}
		}
		if e != nil {
			events = append(events, e)
		}
	}
	return events
}

// numbered gives the entry events of events from index from on their
// entry numbers, as a writer records them: the next number of the
// story the events before them fold to. Those before from stay as helm
// wrote them before numbers were stored.
func numbered(t testing.TB, events []*Event, from int) []*Event {
	var st State
	for i, e := range events {
		if i >= from && IsEntry(e.Type) {
			e.N = st.Counts().Entries + 1
		}
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	return events
}

// withUndos appends to a numbered voyage up to three undos of its
// performed actions, each an intent that names the entry it undoes and,
// but for some, an outcome: performed (the entry shows it undone) or
// failed (it does not).
func withUndos(t testing.TB, r *rand.Rand, events []*Event) []*Event {
	var st State
	fold(t, events, &st, 0)
	last := events[len(events)-1]
	for i := range 3 {
		var targets []int
		for _, en := range st.Entries {
			if en.Action != nil && en.Action.Status == logbook.ActionPerformed && en.Action.UndoneBy == 0 {
				targets = append(targets, en.N)
			}
		}
		if len(targets) == 0 || r.IntN(3) == 0 {
			break
		}
		id := fmt.Sprint("undo-", i)
		intent := &Event{Type: ActionIntended, V: currentVersion[ActionIntended], At: last.At, Who: last.Who, N: st.Counts().Entries + 1,
			Action: &logbook.ActionRecord{ID: id, Kind: "reset-commit", Undoes: targets[r.IntN(len(targets))]}}
		add := []*Event{intent}
		switch r.IntN(3) {
		case 0:
			add = append(add, &Event{Type: ActionPerformed, V: currentVersion[ActionPerformed], At: last.At, Who: last.Who,
				Action: &logbook.ActionRecord{ID: id, Kind: "reset-commit", Result: &logbook.ActionResult{SHA: "0123456"},
					Inverse: &logbook.Inverse{None: "an undo is not undone"}}})
		case 1:
			add = append(add, &Event{Type: ActionFailed, V: currentVersion[ActionFailed], At: last.At, Who: last.Who,
				Action: &logbook.ActionRecord{ID: id, Kind: "reset-commit", Error: "later commits"}})
		}
		for _, e := range add {
			require.NoError(t, st.Apply(uint64(len(events)+1), e))
			events = append(events, e)
		}
	}
	return events
}

// TestUndoneEntries: an entry is shown undone once an undo naming it is
// performed, not while it is in flight or when it failed; an undo names
// an earlier action entry.
func TestUndoneEntries(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	who := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	ev := func(ty Type, n int, a *logbook.ActionRecord) *Event {
		return &Event{Type: ty, V: currentVersion[ty], At: at, Who: who, N: n, Action: a}
	}
	start := &Event{Type: VoyageStarted, V: 4, At: at, Who: who, Voyage: &VoyageInfo{ID: "v", Intent: "i", Kind: "open-waters"}}
	inv := &logbook.Inverse{Kind: "close-pull-request", Params: json.RawMessage(`{"number":4}`)}
	events := []*Event{
		start,
		ev(ActionIntended, 1, &logbook.ActionRecord{ID: "pr", Kind: "create-pull-request"}),
		ev(ActionPerformed, 0, &logbook.ActionRecord{ID: "pr", Kind: "create-pull-request", Result: &logbook.ActionResult{Number: 4}, Inverse: inv}),
		ev(ActionIntended, 2, &logbook.ActionRecord{ID: "u1", Kind: "close-pull-request", Undoes: 1}),
	}
	var st State
	fold(t, events, &st, 0)
	pr := st.Entries[0].Action
	assert.Equal(t, inv, pr.Inverse)
	assert.Zero(t, pr.UndoneBy, "in flight")
	events = append(events, ev(ActionFailed, 0, &logbook.ActionRecord{ID: "u1", Kind: "close-pull-request", Error: "boom"}))
	fold(t, events, &st, len(events)-1)
	assert.Zero(t, pr.UndoneBy, "failed")
	events = append(events,
		ev(ActionIntended, 3, &logbook.ActionRecord{ID: "u2", Kind: "close-pull-request", Undoes: 1}),
		ev(ActionPerformed, 0, &logbook.ActionRecord{ID: "u2", Kind: "close-pull-request", Result: &logbook.ActionResult{Number: 4}}),
		&Event{Type: NoteAdded, V: 1, At: at, Who: who, N: 4, Note: &logbook.Note{Text: "n"}})
	fold(t, events, &st, len(events)-3)
	assert.Equal(t, 3, pr.UndoneBy)
	assert.Equal(t, 1, st.Entries[2].Action.Undoes)

	snap, err := st.EncodeSnapshot()
	require.NoError(t, err)
	loaded, err := DecodeSnapshot(snap)
	require.NoError(t, err)
	assert.Equal(t, &st, loaded)

	for _, undoes := range []int{4, 5, 6, 9} { // a note, itself, later, none
		var bad State
		fold(t, events, &bad, 0)
		err := bad.Apply(uint64(len(events)+1), ev(ActionIntended, 5, &logbook.ActionRecord{ID: "u3", Kind: "x", Undoes: undoes}))
		assert.ErrorContains(t, err, "not an earlier action", "undoes %d", undoes)
	}
}

// TestRebuiltViewsEqualIncremental folds random voyages two ways — event
// by event as they are made, and rebuilt from their stored bytes in one
// pass — and requires identical views.
func TestRebuiltViewsEqualIncremental(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		events := randomVoyage(r, 20+r.IntN(200))
		// Numbered from the start, never, or from a point on: a voyage
		// written before numbers were stored, then by a later helm.
		from := [...]int{0, len(events), r.IntN(len(events))}[seed%3]
		numbered(t, events, from)
		events = withUndos(t, r, events)

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
			if e := events[entry.Seq-1]; e.N != 0 {
				assert.Equal(t, e.N, entry.N, "seed %d: the entry has the number recorded", seed)
			}
		}
		if from == 0 {
			assert.Empty(t, rebuilt.FailedActions, "seed %d: a failed action keeps its entry", seed)
		}
		for _, f := range rebuilt.FailedActions {
			assert.Zero(t, events[f.Seq-1].N, "seed %d: only an action intended before numbers were stored leaves the story", seed)
		}
	}
}

func TestBearingWithoutObservationsSealsTheSlateAsItStands(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	var st State
	e := &Event{Type: VoyageStarted, V: 1, Voyage: &VoyageInfo{ID: "v"}}
	require.NoError(t, st.Apply(5, e))
	err := st.Apply(5, &Event{Type: SlateWiped, V: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "out of order")
}

// TestFailedActionKeepsItsNumber: failures interleaved with bearings and
// actions; every entry keeps the number it was recorded with, and a
// failed action stays in the story, marked failed.
func TestFailedActionKeepsItsNumber(t *testing.T) {
	t.Parallel()
	var st State
	bearing := func(n int) *Event {
		return &Event{Type: BearingTaken, N: n, Bearing: &logbook.Bearing{Observations: []logbook.ObservationRecord{}, Reading: logbook.Reading{Text: fmt.Sprint("r", n)}}}
	}
	evs := []*Event{
		{Type: VoyageStarted, Voyage: &VoyageInfo{ID: "v"}},
		bearing(1),
		{Type: ActionIntended, N: 2, Action: &logbook.ActionRecord{ID: "a", Kind: "push"}},
		{Type: ActionIntended, N: 3, Action: &logbook.ActionRecord{ID: "b", Kind: "commit"}},
		bearing(4),
		{Type: ActionFailed, Action: &logbook.ActionRecord{ID: "a", Error: "rejected"}},
		bearing(5),
		{Type: ActionFailed, Action: &logbook.ActionRecord{ID: "b", Error: "nothing to commit"}},
		{Type: NoteAdded, N: 6, Note: &logbook.Note{Text: "retrying"}},
		{Type: ActionRefused, N: 7, Action: &logbook.ActionRecord{ID: "c", Kind: "merge-pull-request", Rule: "no merges"}},
		bearing(8),
	}
	for i, e := range evs {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	require.Len(t, st.Entries, 8)
	for i, e := range st.Entries {
		assert.Equal(t, i+1, e.N)
	}
	assert.Equal(t, logbook.ActionFailed, st.Entries[1].Action.Status)
	assert.Equal(t, "rejected", st.Entries[1].Action.Error)
	assert.Equal(t, logbook.ActionFailed, st.Entries[2].Action.Status)
	assert.Equal(t, "r4", st.Entries[3].Bearing.Reading.Text)
	assert.Equal(t, logbook.ActionRefused, st.Entries[6].Action.Status)
	assert.Empty(t, st.FailedActions)
	seq, ok := st.BearingSeq(5)
	require.True(t, ok)
	assert.Equal(t, uint64(7), seq, "bearing 5 is the one recorded as 5")
	assert.Equal(t, LogbookCounts{Entries: 8, Bearings: 4, Actions: 2, Failed: 2, Refused: 1, Notes: 1}, st.Counts())

	// A number that is not the next is refused: the event was not
	// recorded against this story.
	err := st.Apply(20, bearing(12))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "records entry 12, but it is entry 9")
}

// TestLegacyFailureAfterANumberedEntryKeepsTheNumbers: an action
// intended before numbers were stored that fails once a later helm has
// recorded numbered entries after it stays in the story.
func TestLegacyFailureAfterANumberedEntryKeepsTheNumbers(t *testing.T) {
	t.Parallel()
	var st State
	evs := []*Event{
		{Type: VoyageStarted, Voyage: &VoyageInfo{ID: "v"}},
		{Type: ActionIntended, Action: &logbook.ActionRecord{ID: "old", Kind: "push"}},
		{Type: NoteAdded, N: 2, Note: &logbook.Note{Text: "by a later helm"}},
		{Type: ActionFailed, Action: &logbook.ActionRecord{ID: "old", Error: "rejected"}},
	}
	for i, e := range evs {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	require.Len(t, st.Entries, 2)
	assert.Equal(t, logbook.ActionFailed, st.Entries[0].Action.Status)
	assert.Equal(t, 2, st.Entries[1].N)
	assert.Empty(t, st.FailedActions)
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	var st State
	who := func(id string) logbook.Who { return logbook.Who{Identity: id, Role: "coder", Method: "human"} }
	at := func(m int) time.Time { return time.Date(2026, 3, 1, 10, m, 0, 0, time.UTC) }
	evs := []*Event{
		{Type: VoyageStarted, At: at(0), Who: who("ann"), Voyage: &VoyageInfo{ID: "v", Parent: "p", Repo: "o/r", Base: "abc"}},
		{Type: VoyageCompleted, At: at(1), Who: who("bob"), Completion: &Completion{Outcome: OutcomeBlocked, Summary: "needs review"}},
		{Type: VoyageResumed, At: at(2), Who: who("ann"), Resumption: &Resumption{Reason: "reviewed"}},
		{Type: VoyageCompleted, At: at(3), Who: who("ann"), Completion: &Completion{Outcome: OutcomeCompleted, Summary: "done"}},
	}
	for i, e := range evs[:2] {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	assert.Equal(t, StatusBlocked, st.Voyage.Status)
	assert.True(t, st.Voyage.Status.Resumable())
	require.NoError(t, st.Apply(3, evs[2]))
	assert.Equal(t, StatusActive, st.Voyage.Status)
	assert.Zero(t, st.Voyage.CompletedAt)
	assert.Empty(t, st.Voyage.Outcome)
	require.NoError(t, st.Apply(4, evs[3]))
	v := st.Voyage
	assert.Equal(t, StatusCompleted, v.Status)
	assert.False(t, v.Status.Resumable())
	assert.Equal(t, []Transition{
		{Status: StatusActive, At: at(0), Who: who("ann")},
		{Status: StatusBlocked, At: at(1), Who: who("bob"), Reason: "needs review"},
		{Status: StatusActive, At: at(2), Who: who("ann"), Reason: "reviewed"},
		{Status: StatusCompleted, At: at(3), Who: who("ann"), Reason: "done"},
	}, v.Lifecycle)
	assert.Equal(t, []string{"ann", "bob"}, v.Crew)
	assert.Equal(t, "p", v.Parent)
	assert.Equal(t, at(3), v.LastAt)
	assert.Equal(t, StatusFailed, NormalStatus(StatusCompleted, OutcomeFailed))
	assert.Equal(t, StatusActive, NormalStatus(StatusActive, ""))
}

// TestLegacyFailedActionLeavesStoryRenumbered: before numbers were
// stored, a failed action left the story and the entries after it were
// renumbered; a voyage written then still reads so.
func TestLegacyFailedActionLeavesStoryRenumbered(t *testing.T) {
	t.Parallel()
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

// TestStepFinishedAttachesToItsCall: a tool call's result lands on the
// call's entry (one entry, its number kept, usage summed), also when the
// call was recorded before the snapshot the state was opened from; a
// result no open call of the same agent, session and id waits for is
// refused.
func TestStepFinishedAttachesToItsCall(t *testing.T) {
	t.Parallel()
	call := func(session, id string) *logbook.Step {
		return &logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: session, ID: id, Tool: "Bash", Text: "ls",
			Usage: &logbook.Usage{Model: "m", InputTokens: 5}}
	}
	done := func(session, id string) *Event {
		return &Event{Type: StepFinished, Step: &logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: session, ID: id,
			Result: &logbook.StepResult{Output: "a\nb", Duration: time.Second}, Usage: &logbook.Usage{Model: "m", OutputTokens: 2}}}
	}
	events := []*Event{
		{Type: VoyageStarted, Voyage: &VoyageInfo{ID: "v", Session: "claude-code:s"}},
		{Type: StepRecorded, N: 1, Step: call("s", "t1")},
		{Type: StepRecorded, N: 2, Step: call("s", "t2")},
	}
	var st State
	fold(t, events, &st, 0)
	snap, err := st.EncodeSnapshot()
	require.NoError(t, err)
	lazy, err := OpenSnapshot(bytes.NewReader(snap), int64(len(snap)))
	require.NoError(t, err)
	assert.Equal(t, "claude-code:s", lazy.Voyage.Session)
	for _, s := range []*State{&st, lazy} {
		assert.Equal(t, SectionEntries&s.Pending(), s.Needs(done("s", "t1")), "the call is in the snapshot's entries")
		require.NoError(t, s.Apply(4, done("s", "t1")))
		require.Len(t, s.Entries, 2)
		got := s.Entries[0].Step
		require.NotNil(t, got.Result)
		assert.Equal(t, "a\nb", got.Result.Output)
		assert.Equal(t, &logbook.Usage{Model: "m", InputTokens: 5, OutputTokens: 2}, got.Usage)
		assert.Nil(t, s.Entries[1].Step.Result, "the other call waits still")
		assert.Equal(t, 2, s.Counts().Steps)
		assert.Error(t, s.Apply(5, done("s", "t1")), "finished already")
		assert.Error(t, s.Apply(5, done("other", "t2")), "another session's call")
	}
}
