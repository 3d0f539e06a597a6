package helmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/replay"
)

// VoyageID is the id of the voyage Started begins.
const VoyageID = IDPrefix + "-0000-4000-8000-0000000000a1"

// Started is the event that begins a given history: voyage VoyageID with
// intent, started by who.
func Started(intent string, who logbook.Who) projection.Event {
	return projection.Event{Type: projection.VoyageStarted, Who: who,
		Voyage: &projection.VoyageInfo{ID: VoyageID, Intent: intent, Kind: string(helm.OpenWaters)}}
}

// Observed is an observation of a context mark with text, by who.
func Observed(text string, who logbook.Who) projection.Event {
	mark, _ := json.Marshal(map[string]string{"kind": "context", "description": text})
	return projection.Event{Type: projection.Observed, Who: who, Obs: &logbook.ObservationRecord{
		Key: "context:" + text, Mark: mark, Label: "Context: " + text, Artifact: "given", ObservedBy: who,
	}}
}

// Bearing is a bearing with reading, sealing the slate as it stands.
func Bearing(reading string, who logbook.Who) projection.Event {
	return projection.Event{Type: projection.BearingTaken, Who: who, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: reading, Source: logbook.SourceAgent}}}
}

// Noted is a note.
func Noted(text string, who logbook.Who) projection.Event {
	return projection.Event{Type: projection.NoteAdded, Who: who, Note: &logbook.Note{Text: text}}
}

// Completed ends the voyage with outcome and summary.
func Completed(outcome logbook.Outcome, summary string, who logbook.Who) projection.Event {
	return projection.Event{Type: projection.VoyageCompleted, Who: who, Completion: &projection.Completion{Outcome: projection.Outcome(outcome), Summary: summary}}
}

// Scenario is a given-when-then check of what a change records.
type Scenario struct {
	t      testing.TB
	home   *helm.Home
	v      *helm.Voyage
	given  int // events given
	err    error
	events []projection.Event // what When recorded
	ran    bool
}

// Given starts a scenario: a voyage in a test home whose history is
// events (Started first), as if recorded. An event without a time gets
// one a second after the one before it, from Epoch; entries are numbered
// in order where they are not.
func Given(t testing.TB, events ...projection.Event) *Scenario {
	t.Helper()
	return GivenIn(t, Home(t), events...)
}

// GivenIn is Given in home h: one opened with options of the test's own,
// such as a policy (helm.Options.Policy).
func GivenIn(t testing.TB, h *helm.Home, events ...projection.Event) *Scenario {
	t.Helper()
	given := make([]projection.Event, len(events))
	at := Epoch
	n := 0
	for i, e := range events {
		if e.At.IsZero() {
			e.At = at
		}
		at = e.At.Add(time.Second)
		if projection.IsEntry(e.Type) {
			if n++; e.N == 0 {
				e.N = n
			}
		}
		given[i] = e
	}
	v, err := h.Seed(context.Background(), given)
	if err != nil {
		t.Fatalf("helmtest: given: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	return &Scenario{t: t, home: h, v: v, given: int(v.Info().Seq)} // what Seed wrote: the history, and the home's rules if it recorded none
}

// When runs fn on the voyage and keeps what it recorded and the error it
// returned, for Then.
func (s *Scenario) When(fn func(v *helm.Voyage) error) *Scenario {
	s.t.Helper()
	s.err = fn(s.v)
	s.ran = true
	all, err := eventsOf(context.Background(), s.v)
	if err != nil {
		s.t.Fatalf("helmtest: when: read what was recorded: %v", err)
	}
	s.events = nil
	for _, e := range all {
		if e.Seq > uint64(s.given) {
			s.events = append(s.events, e)
		}
	}
	return s
}

// Then requires that When succeeded and recorded want (see ThenEvents).
func (s *Scenario) Then(want ...projection.Event) *Scenario {
	s.t.Helper()
	return s.ThenError(nil).ThenEvents(want...)
}

// ThenError requires When's error to match target (errors.Is); nil
// requires success.
func (s *Scenario) ThenError(target error) *Scenario {
	s.t.Helper()
	s.mustHaveRun()
	switch {
	case target == nil && s.err != nil:
		s.t.Fatalf("helmtest: then: want success, got %v", s.err)
	case target != nil && !errors.Is(s.err, target):
		s.t.Fatalf("helmtest: then: want an error matching %q, got %v", target, s.err)
	}
	return s
}

// ThenEvents requires When to have recorded want, in order. What the test
// cannot know is not compared: times, sequence numbers, versions, action
// ids, observations' times and artifact hashes, and an entry's number
// where want leaves it 0; events that store artifacts are left out.
func (s *Scenario) ThenEvents(want ...projection.Event) *Scenario {
	s.t.Helper()
	s.mustHaveRun()
	recorded := withoutArtifacts(s.events)
	want = withoutArtifacts(want)
	for i := range min(len(recorded), len(want)) {
		if want[i].N == 0 {
			recorded[i].N = 0
		}
	}
	got := comparable(recorded)
	exp := comparable(want)
	for i := range max(len(got), len(exp)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			w = exp[i]
		}
		if g != w {
			s.t.Fatalf("helmtest: then: recorded event %d differs:\n  want: %s\n  got:  %s", i+1, orNone(w), orNone(g))
		}
	}
	return s
}

// ThenViews calls check with the voyage's views after When.
func (s *Scenario) ThenViews(check func(t testing.TB, v *replay.Views)) *Scenario {
	s.t.Helper()
	s.mustHaveRun()
	events, err := eventsOf(context.Background(), s.v)
	if err == nil {
		var views *replay.Views
		if views, err = replay.Fold(events); err == nil {
			check(s.t, views)
			return s
		}
	}
	s.t.Fatalf("helmtest: then: %v", err)
	return s
}

func (s *Scenario) mustHaveRun() {
	s.t.Helper()
	if !s.ran {
		s.t.Fatalf("helmtest: then before when")
	}
}

// withoutArtifacts returns a copy of events without those that store
// artifacts.
func withoutArtifacts(events []projection.Event) []projection.Event {
	var out []projection.Event
	for _, e := range events {
		switch e.Type {
		case projection.ArtifactStowed, projection.ArtifactReduced, projection.ArtifactJettisoned:
			continue
		}
		out = append(out, e)
	}
	return out
}

// comparable renders events as JSON lines without what ThenEvents does
// not compare.
func comparable(events []projection.Event) []string {
	var out []string
	for _, e := range events {
		data, _ := projection.EncodeJSON(&e)
		var c projection.Event
		if err := json.Unmarshal(data, &c); err != nil {
			out = append(out, fmt.Sprint(err))
			continue
		}
		c.At, c.Seq, c.V = time.Time{}, 0, 0
		if c.Action != nil {
			c.Action.ID = ""
		}
		if c.Obs != nil {
			c.Obs.ObservedAt, c.Obs.Artifact = time.Time{}, ""
		}
		out = append(out, line(&c))
	}
	return out
}
