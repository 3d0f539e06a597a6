package helm_test

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
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// crewScenario runs three agents — ann leads the main voyage, bob and
// carol each run a sub-voyage — each in a goroutine of its own. They
// take turns as a script says, so the clock (a minute a reading) and the
// ids come out the same on every run; and returns the home and the main
// voyage's id.
func crewScenario(t *testing.T) (*helm.Home, string) {
	t.Helper()
	ctx := context.Background()
	opts := helm.Deterministic(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), time.Minute, "c0de0000")
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
		return func() error { return voyages[agent].Complete(ctx, helm.OutcomeCompleted, summary, who) }
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
			_, err := voyages["ann"].Judge(ctx, helm.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "Right fix, well tested."},
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
	lines, err := h.Transcript(ctx, []string{main}, helm.TranscriptOptions{Descendants: true})
	require.NoError(t, err)

	var text, jsonl bytes.Buffer
	require.NoError(t, helm.WriteTranscript(&text, lines))
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
	stats := helm.CrewStatsOf(lines)
	require.Len(t, stats, 1)
	s := stats[0]
	assert.Equal(t, main, s.Main)
	assert.Len(t, s.Subs, 2)
	assert.Equal(t, 3, s.Stages)
	assert.Equal(t, 13, s.TotalSteps)
	assert.Equal(t, 10, s.CriticalSteps)
	assert.Equal(t, 3, s.Overhead)
	assert.InDelta(t, 10.0/13, s.Efficiency, 1e-9)
	byID := map[string]helm.CrewStats{}
	for _, c := range s.Crew {
		byID[c.Identity] = c
	}
	assert.Equal(t, helm.CrewStats{Identity: "ann", Roles: []string{"lead"}, Steps: 6, Observations: 2, Bearings: 2, Actions: 1, Failures: 1, Notes: 1,
		First: byID["ann"].First, Last: byID["ann"].Last, Active: byID["ann"].Last.Sub(byID["ann"].First)}, byID["ann"])
	assert.Equal(t, 3, byID["bob"].Steps)
	assert.Equal(t, 4, byID["carol"].Steps)
	assert.Equal(t, 1, byID["carol"].Notes)
	assert.Zero(t, byID["dave"].Steps, "a judgement is not a step")
	require.Len(t, s.Judgements, 1)
	assert.Equal(t, helm.JudgementStats{Voyage: main, Entry: 5, Judge: "dave", Dimension: "correctness", Score: 8}, s.Judgements[0])

	// --who and --since narrow it; one sub-voyage alone is its own main.
	bobs, err := h.Transcript(ctx, nil, helm.TranscriptOptions{Who: "bob"})
	require.NoError(t, err)
	for _, l := range bobs {
		assert.Equal(t, "bob", l.Who.Identity)
	}
	later, err := h.Transcript(ctx, nil, helm.TranscriptOptions{Since: lines[len(lines)-3].At})
	require.NoError(t, err)
	assert.Len(t, later, 3)
	sub := lines[5].VoyageID
	alone, err := h.Transcript(ctx, []string{sub}, helm.TranscriptOptions{})
	require.NoError(t, err)
	st := helm.CrewStatsOf(alone)
	require.Len(t, st, 1)
	assert.Equal(t, sub, st[0].Main)
	assert.Equal(t, st[0].TotalSteps, st[0].CriticalSteps, "one voyage alone is all critical")
}

// TestCriticalStepsByHand: the formula on transcripts built by hand.
func TestCriticalStepsByHand(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 2, 9, m, 0, 0, time.UTC) }
	line := func(voyage, parent string, m int, typ projection.Type) helm.Line {
		return helm.Line{VoyageID: voyage, ParentID: parent, Event: projection.Event{Seq: uint64(m), Type: typ, At: at(m), Who: logbook.Who{Identity: voyage}}}
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
		lines                             []helm.Line
		stages, total, critical, overhead int
	}{
		{"main alone", []helm.Line{line("m", "", 1, obs), line("m", "", 2, brg), line("m", "", 3, act), line("m", "", 4, chal)}, 2, 3, 3, 0},
		{"two subs in one stage", []helm.Line{
			line("m", "", 1, obs), line("a", "m", 2, obs), line("b", "m", 3, obs), line("a", "m", 4, brg), line("b", "m", 5, note),
			line("b", "m", 6, act), line("m", "", 7, brg),
		}, 2, 7, 2 + 3, 2},
		{"subs across stages", []helm.Line{
			line("a", "m", 1, obs), line("m", "", 2, brg), // stage 0: main 1, a 1
			line("a", "m", 3, obs), line("a", "m", 4, obs), line("b", "m", 5, obs), line("m", "", 6, brg), // stage 1: main 1, a 2, b 1
			line("b", "m", 7, act), // stage 2: b 1
		}, 3, 7, (1 + 1) + (1 + 2) + (0 + 1), 1},
		{"a grandchild counts in its sub-voyage's lane", []helm.Line{
			line("a", "m", 1, obs), line("a1", "a", 2, obs), line("b", "m", 3, obs), line("m", "", 4, brg),
		}, 2, 4, 1 + 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stats := helm.CrewStatsOf(tt.lines)
			require.Len(t, stats, 1)
			s := stats[0]
			assert.Equal(t, tt.stages, s.Stages)
			assert.Equal(t, tt.total, s.TotalSteps)
			assert.Equal(t, tt.critical, s.CriticalSteps)
			assert.Equal(t, tt.overhead, s.Overhead)
		})
	}
	assert.Empty(t, helm.CrewStatsOf(nil))
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
		l := helm.Line{Event: projection.Event{Type: typ}}
		assert.Equal(t, string(typ), l.Describe())
	}
	l := helm.Line{Event: projection.Event{Type: projection.ReadingChallenged, Challenge: &projection.Challenge{Feedback: "f", Text: "t"}}}
	assert.Equal(t, "challenged bearing 0 (f): t", l.Describe())
}

// TestTranscriptOfNamedVoyagesIsNotStoppedByAnotherDamagedOne: damage to
// one voyage fails the transcript of every voyage and of that voyage,
// and leaves the transcript of the others readable.
func TestTranscriptOfNamedVoyagesIsNotStoppedByAnotherDamagedOne(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, fixedOptions())
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

	lines, err := h.Transcript(ctx, []string{v.ID()}, helm.TranscriptOptions{Descendants: true})
	require.NoError(t, err)
	assert.Equal(t, "Note 1: still readable", lines[len(lines)-1].Describe())
	_, err = h.Transcript(ctx, []string{other.ID()}, helm.TranscriptOptions{})
	assert.ErrorIs(t, err, helm.ErrDamaged)
	_, err = h.Transcript(ctx, nil, helm.TranscriptOptions{})
	assert.ErrorIs(t, err, helm.ErrDamaged)
}
