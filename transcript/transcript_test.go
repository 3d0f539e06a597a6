package transcript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/transcript"
)

// note is the mark the scripts observe; who the identity they record as.
type note = voyagetest.Note

var who = voyagetest.Who

// fakeAction is a commit that touches nothing: it leaves a commit's SHA,
// or fails with fail.
type fakeAction struct {
	Message string `json:"message"`
	fail    error
}

func (a *fakeAction) Kind() string { return "commit" }
func (a *fakeAction) Perform(context.Context) (logbook.ActionResult, error) {
	if a.fail != nil {
		return logbook.ActionResult{}, a.fail
	}
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

// crewScenario runs three agents — ann leads the main voyage, bob and
// carol each run a sub-voyage — each in a goroutine of its own. They
// take turns as a script says, so the clock (a minute a reading) and the
// ids come out the same on every run; and returns the home and the main
// voyage's id.
func crewScenario(t *testing.T) (*helm.Home, string) {
	t.Helper()
	ctx := context.Background()
	opts := voyagetest.Options(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), time.Minute, "c0de0000")
	var ids atomic.Int64 // ids whose first 8 digits differ, as random ones do
	opts.NewID = func() uuid.UUID {
		n := ids.Add(1)
		return uuid.MustParse(fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xc0de0000+n*0x1111, n))
	}
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	bob := logbook.Who{Identity: "bob", Role: "coder", Method: "claude"}
	carol := logbook.Who{Identity: "carol", Role: "tester", Method: "gpt"}
	voyages := map[string]*helm.Voyage{}
	var main string
	observe := func(agent, text string, who logbook.Who) func() error {
		return func() error {
			_, err := voyages[agent].Observe(ctx, &note{Topic: text, Text: text}, who, nil)
			return err
		}
	}
	bearing := func(agent, reading string, who logbook.Who) func() error {
		return func() error {
			_, err := voyages[agent].TakeBearing(ctx, reading, who, nil)
			return err
		}
	}
	start := func(agent, intent string, who logbook.Who) func() error {
		return func() error {
			v, err := h.Start(ctx, intent, helm.OpenWaters, who, &helm.StartOptions{Parent: main})
			if main == "" {
				main = v.ID()
			}
			voyages[agent] = v
			return err
		}
	}
	complete := func(agent, summary string, who logbook.Who) func() error {
		return func() error { return voyages[agent].Complete(ctx, logbook.OutcomeCompleted, summary, who) }
	}
	script := []struct {
		agent string
		do    func() error
	}{
		{"ann", start("ann", "Resolve #42: the widget crashes", ann)},
		{"ann", observe("ann", "the crash report", ann)},
		{"ann", bearing("ann", "Init() dereferences a nil config: bob fixes it, carol writes the test.", ann)},
		{"bob", start("bob", "Fix the nil config in init()", bob)},
		{"carol", start("carol", "A regression test for #42", carol)},
		{"bob", observe("bob", "init.go", bob)},
		{"carol", observe("carol", "widget_test.go", carol)},
		{"bob", bearing("bob", "A nil check in init() fixes it.", bob)},
		{"carol", observe("carol", "the crash in CI", carol)},
		{"carol", bearing("carol", "The test must start the widget with no config.", carol)},
		{"bob", func() error {
			_, err := voyages["bob"].Perform(ctx, &fakeAction{Message: "Check config in init()"}, bob, &helm.PerformOptions{Why: "the nil check is the fix"})
			return err
		}},
		{"carol", func() error {
			_, err := voyages["carol"].Note(ctx, "Test written; it fails without bob's fix.", carol)
			return err
		}},
		{"bob", complete("bob", "Fixed.", bob)},
		{"carol", complete("carol", "Tested.", carol)},
		{"ann", observe("ann", "both parts done", ann)},
		{"ann", bearing("ann", "Fix and test are in: ready to merge.", ann)},
		{"ann", func() error {
			_, err := voyages["ann"].Perform(ctx, &fakeAction{fail: errors.New("merge conflict")}, ann, nil)
			var ae *helm.ActionError
			if errors.As(err, &ae) {
				return nil // recorded as a failed action
			}
			return err
		}},
		{"ann", func() error {
			_, err := voyages["ann"].Note(ctx, "Rebased; merging by hand.", ann)
			return err
		}},
		{"ann", complete("ann", "Fixed with a test.", ann)},
		{"ann", func() error {
			_, err := voyages["ann"].Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "Right fix, well tested."},
				logbook.Who{Identity: "dave", Role: "judge", Method: "human"})
			return err
		}},
	}
	turns := map[string]chan func() error{"ann": make(chan func() error), "bob": make(chan func() error), "carol": make(chan func() error)}
	done := make(chan error)
	for _, c := range turns {
		go func() {
			for step := range c {
				done <- step()
			}
		}()
	}
	for i, s := range script {
		turns[s.agent] <- s.do
		require.NoError(t, <-done, "step %d (%s)", i+1, s.agent)
	}
	for _, c := range turns {
		close(c)
	}
	for _, v := range voyages {
		require.NoError(t, v.Close())
	}
	return h, main
}

// TestCrewTranscriptAndStats: the three-agent scenario's transcript (text
// and JSONL) against goldens, and its critical steps against the figures
// computed by hand.
func TestCrewTranscriptAndStats(t *testing.T) {
	ctx := context.Background()
	h, main := crewScenario(t)
	lines, err := transcript.Read(ctx, h, []string{main}, &transcript.Options{Descendants: true})
	require.NoError(t, err)

	var text, jsonl bytes.Buffer
	require.NoError(t, transcript.Write(&text, lines))
	enc := json.NewEncoder(&jsonl)
	for _, l := range lines {
		require.NoError(t, enc.Encode(l))
	}
	golden(t, "testdata/crew/transcript.txt", text.Bytes())
	golden(t, "testdata/crew/transcript.jsonl", jsonl.Bytes())

	// Each JSONL line is an event another tool can read back.
	for i, raw := range bytes.Split(bytes.TrimSpace(jsonl.Bytes()), []byte("\n")) {
		e, err := projection.Decode(raw)
		require.NoError(t, err, "line %d", i+1)
		assert.Equal(t, lines[i].Type, e.Type)
	}

	// By hand: stage 0 (to ann's first bearing) has ann's observation and
	// bearing; stage 1 ann's observation and bearing, bob's observation,
	// bearing and action (3), carol's two observations, bearing and note
	// (4); stage 2 ann's action and note. Critical: 2 + (2+4) + 2 = 10 of
	// 13 steps.
	stats := transcript.StatsOf(lines)
	require.Len(t, stats, 1)
	s := stats[0]
	assert.Equal(t, main, s.Main)
	assert.Len(t, s.Subs, 2)
	assert.Equal(t, 3, s.Stages)
	assert.Equal(t, 13, s.TotalSteps)
	assert.Equal(t, 10, s.CriticalSteps)
	assert.Equal(t, 3, s.Overhead)
	assert.InDelta(t, 13.0/10, s.Parallelism, 1e-9, "13 steps over a critical path of 10")
	byID := map[string]transcript.CrewStats{}
	for _, c := range s.Crew {
		byID[c.Identity] = c
	}
	assert.Equal(t, transcript.CrewStats{Identity: "ann", Roles: []string{"lead"}, Steps: 6, Observations: 2, Bearings: 2, Actions: 1, Failures: 1, Notes: 1,
		First: byID["ann"].First, Last: byID["ann"].Last, Active: byID["ann"].Last.Sub(byID["ann"].First)}, byID["ann"])
	assert.Equal(t, 3, byID["bob"].Steps)
	assert.Equal(t, 4, byID["carol"].Steps)
	assert.Equal(t, 1, byID["carol"].Notes)
	assert.Zero(t, byID["dave"].Steps, "a judgement is not a step")
	require.Len(t, s.Judgements, 1)
	assert.Equal(t, transcript.JudgementStats{Voyage: main, Entry: 5, Judge: "dave", Dimension: "correctness", Score: 8}, s.Judgements[0])

	// --who and --since narrow it; one sub-voyage alone is its own main.
	bobs, err := transcript.Read(ctx, h, nil, &transcript.Options{Who: "bob"})
	require.NoError(t, err)
	for _, l := range bobs {
		assert.Equal(t, "bob", l.Who.Identity)
	}
	later, err := transcript.Read(ctx, h, nil, &transcript.Options{Since: lines[len(lines)-3].At})
	require.NoError(t, err)
	assert.Len(t, later, 3)
	sub := lines[5].VoyageID
	alone, err := transcript.Read(ctx, h, []string{sub}, &transcript.Options{})
	require.NoError(t, err)
	st := transcript.StatsOf(alone)
	require.Len(t, st, 1)
	assert.Equal(t, sub, st[0].Main)
	assert.Equal(t, st[0].TotalSteps, st[0].CriticalSteps, "one voyage alone is all critical")
}

// TestCriticalStepsByHand: the formula on transcripts built by hand.
func TestCriticalStepsByHand(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 2, 9, m, 0, 0, time.UTC) }
	line := func(voyage, parent string, m int, typ projection.Type) transcript.Line {
		return transcript.Line{VoyageID: voyage, ParentID: parent, Event: projection.Event{Seq: uint64(m), Type: typ, At: at(m), Who: logbook.Who{Identity: voyage}}}
	}
	const (
		obs  = projection.Observed
		brg  = projection.BearingTaken
		act  = projection.ActionIntended
		note = projection.NoteAdded
		chal = projection.ReadingChallenged
	)
	tests := []struct {
		name                              string
		lines                             []transcript.Line
		stages, total, critical, overhead int
		parallelism                       float64
	}{
		{"main alone", []transcript.Line{line("m", "", 1, obs), line("m", "", 2, brg), line("m", "", 3, act), line("m", "", 4, chal)}, 2, 3, 3, 0, 1},
		{"two subs in one stage", []transcript.Line{
			line("m", "", 1, obs), line("a", "m", 2, obs), line("b", "m", 3, obs), line("a", "m", 4, brg), line("b", "m", 5, note),
			line("b", "m", 6, act), line("m", "", 7, brg),
		}, 2, 7, 2 + 3, 2, 7.0 / 5},
		{"subs across stages", []transcript.Line{
			line("a", "m", 1, obs), line("m", "", 2, brg), // stage 0: main 1, a 1
			line("a", "m", 3, obs), line("a", "m", 4, obs), line("b", "m", 5, obs), line("m", "", 6, brg), // stage 1: main 1, a 2, b 1
			line("b", "m", 7, act), // stage 2: b 1
		}, 3, 7, (1 + 1) + (1 + 2) + (0 + 1), 1, 7.0 / 6},
		{"a grandchild counts in its sub-voyage's lane", []transcript.Line{
			line("a", "m", 1, obs), line("a1", "a", 2, obs), line("b", "m", 3, obs), line("m", "", 4, brg),
		}, 2, 4, 1 + 2, 1, 4.0 / 3},
		{"a voyage without a step has no parallelism", []transcript.Line{line("m", "", 1, chal)}, 1, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stats := transcript.StatsOf(tt.lines)
			require.Len(t, stats, 1)
			s := stats[0]
			assert.Equal(t, tt.stages, s.Stages)
			assert.Equal(t, tt.total, s.TotalSteps)
			assert.Equal(t, tt.critical, s.CriticalSteps)
			assert.Equal(t, tt.overhead, s.Overhead)
			assert.InDelta(t, tt.parallelism, s.Parallelism, 1e-9, "total / critical")
			if s.TotalSteps > 0 {
				assert.GreaterOrEqual(t, s.Parallelism, 1.0, "one line of work is 1; more in parallel is more")
			}
		})
	}
	assert.Empty(t, transcript.StatsOf(nil))
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with the file at path; -update rewrites it.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestDescribeHandBuiltLines: a line without its payload or links
// describes itself by its type rather than panicking.
func TestDescribeHandBuiltLines(t *testing.T) {
	for _, typ := range []projection.Type{projection.VoyageStarted, projection.VoyageCompleted, projection.VoyageResumed,
		projection.Observed, projection.BearingTaken, projection.ReadingChallenged, projection.ActionIntended,
		projection.ActionPerformed, projection.ActionFailed, projection.ActionRefused, projection.NoteAdded, projection.Judged} {
		l := transcript.Line{Event: projection.Event{Type: typ}}
		assert.Equal(t, string(typ), l.Describe())
	}
	l := transcript.Line{Event: projection.Event{Type: projection.ReadingChallenged, Challenge: &projection.Challenge{Feedback: "f", Text: "t"}}}
	assert.Equal(t, "challenged bearing 0 (f): t", l.Describe())
}

// TestTranscriptOfNamedVoyagesIsNotStoppedByAnotherDamagedOne: damage to
// one voyage fails the transcript of every voyage and of that voyage,
// and leaves the transcript of the others readable.
func TestTranscriptOfNamedVoyagesIsNotStoppedByAnotherDamagedOne(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Note(ctx, "still readable", who)
	require.NoError(t, err)
	other, err := h.Start(ctx, "to be damaged", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	_, err = other.Note(ctx, "soon unreadable", who)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	segs, err := filepath.Glob(filepath.Join(h.Dir(), "voyages", other.ID(), "events", "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	data, err := os.ReadFile(segs[len(segs)-1])
	require.NoError(t, err)
	data[len(data)-20] ^= 0x40
	require.NoError(t, os.WriteFile(segs[len(segs)-1], data, 0o600))

	lines, err := transcript.Read(ctx, h, []string{v.ID()}, &transcript.Options{Descendants: true})
	require.NoError(t, err)
	assert.Equal(t, "Note 1: still readable", lines[len(lines)-1].Describe())
	_, err = transcript.Read(ctx, h, []string{other.ID()}, &transcript.Options{})
	assert.ErrorIs(t, err, helm.ErrDamaged)
	_, err = transcript.Read(ctx, h, nil, &transcript.Options{})
	assert.ErrorIs(t, err, helm.ErrDamaged)
}

// appendRaw appends events to the event log of voyage id in home dir as
// they are, entry numbers included (0: as helm wrote them before numbers
// were stored), and returns the sequence number of each: what an older
// helm left on disk. The voyage is closed.
func appendRaw(t *testing.T, home, id string, events ...*projection.Event) []uint64 {
	t.Helper()
	log, err := segment.Open(t.Context(), filepath.Join(home, "voyages", id, "events"), &segment.Options{Identity: id, NoSync: true})
	require.NoError(t, err)
	defer log.Close()
	var seqs []uint64
	_, err = log.Commit(context.Background(), func(tx *segment.Tx) ([][]byte, error) {
		var recs [][]byte
		seq := tx.Last()
		for _, e := range events {
			rec, err := projection.Encode(e)
			if err != nil {
				return nil, err
			}
			seq++
			seqs = append(seqs, seq)
			recs = append(recs, rec)
		}
		return recs, nil
	})
	require.NoError(t, err)
	return seqs
}

// TestLegacyNumbersAsTheStoryShows: in a voyage written before entry
// numbers were stored, an action that failed while a bearing was taken
// meanwhile (two agents at once) took the bearing's number when it
// failed, as helm then renumbered. The transcript numbers the bearing,
// and links to it, as the story shows it, not as it was numbered before
// the failure was folded.
func TestLegacyNumbersAsTheStoryShows(t *testing.T) {
	ctx := context.Background()
	who := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Start(ctx, "legacy", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Close())
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ev := func(e projection.Event) *projection.Event {
		at = at.Add(time.Minute)
		e.At, e.Who = at, who
		return &e
	}
	seqs := appendRaw(t, h.Dir(), id,
		ev(projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "one"}}}),
		ev(projection.Event{Type: projection.ActionIntended, Action: &logbook.ActionRecord{ID: "a", Kind: "push"}}),
		ev(projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "two"}}}),
		ev(projection.Event{Type: projection.ActionFailed, Action: &logbook.ActionRecord{ID: "a", Kind: "push", Error: "rejected"}}),
	)
	bearing2 := seqs[2]
	appendRaw(t, h.Dir(), id,
		ev(projection.Event{Type: projection.ReadingChallenged, Challenge: &projection.Challenge{Bearing: bearing2, Feedback: "f", Text: "two, again"}}),
		ev(projection.Event{Type: projection.ActionIntended, Action: &logbook.ActionRecord{ID: "b", Kind: "commit"}}),
	)

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	story := voyagetest.Entries(t, v, nil)
	require.NoError(t, v.Close())
	require.Len(t, story, 3)
	require.Equal(t, bearing2, story[1].Seq)
	require.Equal(t, 2, story[1].N, "the story numbers the second bearing 2, as helm did then")

	lines, err := transcript.Read(ctx, h, []string{id}, nil)
	require.NoError(t, err)
	var checked int
	for _, l := range lines {
		switch {
		case l.Seq == bearing2:
			assert.Equal(t, 2, l.N, "the bearing's line")
			checked++
		case l.Type == projection.ReadingChallenged:
			require.Len(t, l.Links, 1)
			assert.Equal(t, 2, l.Links[0].Entry, "the challenge's link")
			checked++
		case l.Type == projection.ActionIntended && l.Action.ID == "b":
			assert.Equal(t, 3, l.N, "the last action's line")
			require.Len(t, l.Links, 1)
			assert.Equal(t, transcript.Link{Rel: transcript.LinkFollowed, Seq: bearing2, Entry: 2}, l.Links[0], "the last action's link")
			checked++
		}
	}
	assert.Equal(t, 3, checked, "the lines checked are in the transcript")
}

// TestFollowSeesWhatAnotherHandleAppends: a follower gets the lines from
// the sequence number it asked for, then the events another handle (of
// another Home, as another process would) appends, with their entry
// numbers and links, until its context ends.
func TestFollowSeesWhatAnotherHandleAppends(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Observe(ctx, &note{Topic: "crash", Text: "nil config"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "A nil config.", who, nil)
	require.NoError(t, err)
	from := v.Info().Seq + 1

	reader, err := helm.Open(h.Dir(), nil)
	require.NoError(t, err)
	rv, err := reader.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer rv.Close()

	fctx, cancel := context.WithCancel(ctx)
	lines := make(chan transcript.Line, 16)
	done := make(chan error, 1)
	go func() {
		for l, err := range transcript.Follow(fctx, rv, from) {
			if err != nil {
				done <- err
				return
			}
			lines <- l
		}
		done <- nil
	}()

	writer, err := helm.Open(h.Dir(), nil)
	require.NoError(t, err)
	wv, err := writer.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer wv.Close()
	_, err = wv.Challenge(ctx, 1, helm.Challenge{Feedback: "not nil: empty", Reading: "An empty config."}, who)
	require.NoError(t, err)
	_, err = wv.Note(ctx, "Writing the test.", who)
	require.NoError(t, err)

	challenge := <-lines
	assert.Equal(t, from, challenge.Seq, "nothing before from")
	assert.Equal(t, v.ID(), challenge.VoyageID)
	assert.Equal(t, "challenged bearing 1 (not nil: empty): An empty config.", challenge.Describe())
	require.Len(t, challenge.Links, 1)
	assert.Equal(t, transcript.LinkChallenges, challenge.Links[0].Rel)
	note := <-lines
	assert.Equal(t, "Note 2: Writing the test.", note.Describe())

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// TestFollowStopsWhenTheCallerDoes: leaving the loop ends following,
// without waiting for ctx.
func TestFollowStopsWhenTheCallerDoes(t *testing.T) {
	_, v := voyagetest.Voyage(t, voyagetest.Fixed())
	var seen []string
	for l, err := range transcript.Follow(context.Background(), v, 0) {
		require.NoError(t, err)
		seen = append(seen, l.Describe())
		break
	}
	assert.Equal(t, []string{"started: Resolve #42: fix widget crash"}, seen)
}

// openThing opens thing Number; its inverse closes it (closeThing).
type openThing struct {
	Number int `json:"number"`
}

func (a *openThing) Kind() string { return "create-issue" }
func (a *openThing) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{Number: a.Number}, nil
}
func (a *openThing) Inverse(_ context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	return logbook.Inverse{Kind: "close-issue", Params: json.RawMessage(fmt.Sprintf(`{"number":%d}`, res.Number))}, nil
}

// closeThing takes back an openThing.
type closeThing struct {
	Number int `json:"number"`
}

func (a *closeThing) Kind() string { return "close-issue" }
func (a *closeThing) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{Number: a.Number}, nil
}

// TestUndoIsLinkedToTheIntentItTakesBack: the transcript links an undo's
// intent to the intent of the action it takes back.
func TestUndoIsLinkedToTheIntentItTakesBack(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &closeThing{Number: 7}, who, &helm.PerformOptions{Undoes: 1, Why: "opened by mistake"})
	require.NoError(t, err)

	lines, err := transcript.Read(ctx, h, []string{v.ID()}, nil)
	require.NoError(t, err)
	var intents []transcript.Line
	for _, l := range lines {
		if l.Type == projection.ActionIntended {
			intents = append(intents, l)
		}
	}
	require.Len(t, intents, 2)
	assert.Contains(t, intents[1].Links, transcript.Link{Rel: transcript.LinkUndoes, Seq: intents[0].Seq, Entry: 1})
	assert.Equal(t, "Action 2: close-issue intended (why: opened by mistake)", intents[1].Describe())
}

// TestStatsSumTheAgentsSteps: an agent's tool calls are steps of the
// crew; its prompts, the calls the guard denied and those that failed,
// and the tokens, dollars and model time its steps cost are summed, a
// call's result counted once with its call.
func TestStatsSumTheAgentsSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	ann := logbook.Who{Identity: "ann", Role: "coder", Method: "claude-code"}
	v, err := h.Start(ctx, "claude-code session s", helm.OpenWaters, ann, &helm.StartOptions{Session: "claude-code:s"})
	require.NoError(t, err)
	defer v.Close()
	usage := &logbook.Usage{Model: "m", InputTokens: 100, OutputTokens: 10, CacheReadTokens: 1000, CacheWriteTokens: 5, CostUSD: 0.25, Duration: time.Second}
	call := func(id string, mod func(*logbook.Step)) logbook.Step {
		s := logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: "s", ID: id, Tool: "Bash", Text: "ls"}
		if mod != nil {
			mod(&s)
		}
		return s
	}
	for _, s := range []logbook.Step{
		{Kind: logbook.StepPrompt, Agent: "claude-code", Session: "s", Text: "go", Usage: usage},
		call("t1", nil),
		call("t1", func(s *logbook.Step) { s.Result, s.Usage = &logbook.StepResult{Failed: true}, usage }),
		call("t2", func(s *logbook.Step) { s.Decision = &logbook.StepDecision{Verdict: "deny", Rule: "r"} }),
		call("t3", func(s *logbook.Step) { s.Result = &logbook.StepResult{Output: "ok"} }),
		{Kind: logbook.StepNotification, Agent: "claude-code", Session: "s", Text: "idle"},
	} {
		_, err := v.Step(ctx, s, ann)
		require.NoError(t, err)
	}
	lines, err := transcript.Read(ctx, h, nil, nil)
	require.NoError(t, err)
	stats := transcript.StatsOf(lines)
	require.Len(t, stats, 1)
	assert.Equal(t, logbook.StepStats{Prompts: 1, ToolCalls: 3, DeniedCalls: 1, FailedCalls: 1,
		InputTokens: 200, OutputTokens: 20, CacheReadTokens: 2000, CacheWriteTokens: 10, CostUSD: 0.5, ModelTime: 2 * time.Second}, stats[0].Agents)
	assert.Equal(t, 3, stats[0].TotalSteps, "the tool calls are the crew's steps")
	require.Len(t, stats[0].Crew, 1)
	assert.Equal(t, 3, stats[0].Crew[0].ToolCalls)
	data, err := json.Marshal(stats[0])
	require.NoError(t, err)
	for _, field := range []string{`"tool_calls":3`, `"denied_calls":1`, `"prompts":1`, `"cache_read_tokens":2000`, `"cost_usd":0.5`, `"model_time_ns":2000000000`} {
		assert.Contains(t, string(data), field)
	}
	var text bytes.Buffer
	require.NoError(t, transcript.Write(&text, lines))
	assert.Contains(t, text.String(), "Step 2: Bash: ls")
	assert.Contains(t, text.String(), "claude-code call t1 finished: → failed")
}
