package replay_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
)

// Fold folds a voyage's exported events into fresh views, as a test of a
// recorded voyage would: Deterministic makes the voyage the same bytes on
// every run.
func ExampleFold() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Recorded", helm.OpenWaters, who, nil)
	m, _ := marks.NewContext("the crash report")
	v.Observe(ctx, m, who, nil)
	v.TakeBearing(ctx, "Seen.", who, nil)
	var export strings.Builder
	replay.WriteEvents(ctx, &export, v)
	v.Close()

	events, _ := replay.ReadEvents(strings.NewReader(export.String()))
	views, err := replay.Fold(events)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(events), "events;", len(views.Logbook), "entry:", views.Logbook[0].Bearing.Reading.Text)
	fmt.Println(views.Info.ID, views.Info.Created)
	// Output:
	// 4 events; 1 entry: Seen.
	// a3b0fc12-0000-4000-8000-000000000001 2026-02-26 17:01:00 +0000 UTC
}

// A recording keeps a voyage's events with the views they gave; Check
// replays them with the code as it is now.
func ExampleRecording_Check() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Recorded", helm.OpenWaters, who, nil)
	v.Note(ctx, "A note.", who)
	var export strings.Builder
	replay.WriteEvents(ctx, &export, v)
	v.Close()
	events, _ := replay.ReadEvents(strings.NewReader(export.String()))

	rec, _ := replay.NewRecording(events)
	fmt.Println("today's code:", rec.Check())
	rec.Views.Logbook[0].Note.Text = "A note, as an older version folded it."
	fmt.Println(rec.Check())
	// Output:
	// today's code: <nil>
	// the views diverge after event 2 (seq 2, note-added by john-agent); the views differ in:
	//   Logbook[0].note.text: - "A note, as an older version folded it." + "A note."
}
