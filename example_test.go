package helm_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// A voyage from start to finish: observe, take a bearing, perform an
// action, complete, and print the story.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)

	// A fixed clock and id source make the output stable (and a voyage
	// replayable byte for byte); production code passes nil.
	start := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	h, err := helm.Open(dir, helm.Deterministic(start, time.Minute, "a3b0fc12"))
	if err != nil {
		panic(err)
	}
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who)
	if err != nil {
		panic(err)
	}
	defer v.Close()

	if _, err := v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() { ... }"}, who, nil); err != nil {
		panic(err)
	}
	if _, err := v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil); err != nil {
		panic(err)
	}
	if _, err := v.Perform(ctx, &fakeAction{Message: "Fix null check in widget init"}, who); err != nil {
		panic(err)
	}
	if err := v.Complete(ctx, helm.OutcomeCompleted, "Fixed null check in widget init.", who); err != nil {
		panic(err)
	}
	v.WriteStory(os.Stdout)
	// Output:
	// Voyage: Resolve #42: fix widget crash
	// Identity: john-agent
	// Created: 2026-02-26T17:01:00Z
	// Status: completed (2026-02-26T17:07:00Z)
	// Summary: Fixed null check in widget init.
	//
	// ── Bearing 1 ── 2026-02-26T17:04:00Z
	//   Mark: Note @ widget.rs
	//   Reading: Widget module has a null check missing in init().
	//
	// ── Action 2 ── 2026-02-26T17:05:00Z
	//   committed (abc1234)
}

// Observing the same mark twice keeps the newest observation: the slate is
// a set keyed by mark.
func ExampleVoyage_Observe() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who)
	defer v.Close()

	v.Observe(ctx, &note{Topic: "README", Text: "old"}, who, nil)
	v.Observe(ctx, &note{Topic: "README", Text: "new"}, who, nil)
	for _, o := range v.Slate() {
		s, _ := v.Sighting(ctx, o.Artifact)
		fmt.Println(o.Label, "→", s.(*noteSighting).Text)
	}
	// Output:
	// Note @ README → new
}

// Challenging a reading keeps the attempt it replaces.
func ExampleVoyage_Challenge() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	agent := logbook.Who{Identity: "john-agent", Role: "coder", Method: "sonnet"}
	v, _ := h.Start(ctx, "Review", helm.OpenWaters, agent)
	defer v.Close()
	v.Observe(ctx, &note{Topic: "diff", Text: "+ if w == nil { return }"}, agent, nil)
	v.TakeBearing(ctx, "Looks fine.", agent, nil)

	human := logbook.Who{Identity: "dyreby", Role: "reviewer", Method: "human"}
	e, _ := v.Challenge(ctx, 1, helm.Challenge{
		Feedback: "What about the error path?",
		Reading:  "The nil check is right; the error path still leaks.",
	}, human)
	fmt.Println(e.Bearing.Reading.Text)
	fmt.Println("was:", e.Bearing.Reading.History[0].Text, "—", e.Bearing.Reading.History[0].ChallengedWith)
	// Output:
	// The nil check is right; the error path still leaks.
	// was: Looks fine. — What about the error path?
}

// Replay folds exported events into fresh views, as a test of a recorded
// voyage would.
func ExampleReplay() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Recorded", helm.OpenWaters, who)
	v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)
	v.TakeBearing(ctx, "Seen.", who, nil)
	var export strings.Builder
	v.Export(ctx, &export)
	v.Close()

	events, _ := helm.ReadEvents(strings.NewReader(export.String()))
	views, _ := helm.Replay(events)
	fmt.Println(len(events), "events;", len(views.Logbook), "entry:", views.Logbook[0].Bearing.Reading.Text)
	// Output:
	// 4 events; 1 entry: Seen.
}
