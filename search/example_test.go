package search_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/search"
	"github.com/helmlog/helm/sighting"
)

// Finding what happened to a pull request across every voyage of a home.
func ExampleRun() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	john := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	bob := logbook.Who{Identity: "bob", Role: "reviewer", Method: "human"}

	fix, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, john, nil)
	fix.Note(ctx, "Opened PR #45; waiting for CI.", john)
	fix.Close()
	review, _ := h.Start(ctx, "Review the widget fix", helm.OpenWaters, bob, nil)
	review.Note(ctx, "PR #45 looks right; merging after CI.", bob)
	review.Note(ctx, "PR #450 is another matter.", bob)
	review.Close()

	hits, err := search.Run(ctx, h, &search.Query{PR: 45})
	if err != nil {
		panic(err)
	}
	for _, hit := range hits {
		fmt.Printf("%s %s %d %s %s: %s\n", hit.At.Format(time.TimeOnly), hit.Voyage[:8], hit.N, hit.Kind, hit.Who.Identity, hit.Text)
	}
	// Output:
	// 17:02:00 a3b0fc12 1 note john-agent: Opened PR #45; waiting for CI.
	// 17:04:00 a3b0fc12 1 note bob: PR #45 looks right; merging after CI.
}

// Finding a word inside what was seen (a command's output), with the
// content index brought up to date first.
func ExampleFind() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	john := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}

	v, _ := h.Start(ctx, "Chase the flaky test", helm.OpenWaters, john, nil)
	m, _ := marks.NewCommand("/src/widgets", "go", "test", "./...")
	code := 1
	v.Record(ctx, helm.Observation{Mark: m, Sighting: &sighting.Command{ExitCode: &code,
		Stdout: "--- FAIL: TestSpin (0.01s)\n    spin_test.go:9: widget wobbles at 3000 rpm\nFAIL\n"}}, john)
	v.TakeBearing(ctx, "TestSpin fails: the widget wobbles.", john, nil)
	v.Complete(ctx, logbook.OutcomeCompleted, "Found the wobble.", john)
	v.Close()

	if _, err := search.Reindex(ctx, h, nil); err != nil {
		panic(err)
	}
	res, err := search.Find(ctx, h, &search.Query{Words: "wobbles", In: search.InSightings})
	if err != nil {
		panic(err)
	}
	for _, hit := range res.Hits {
		fmt.Printf("%s %d %s %s\n  %s\n", hit.Voyage[:8], hit.N, hit.Kind, hit.Mark, hit.Snippet)
	}
	fmt.Printf("%d voyage(s) answered by the index, %d read whole\n", res.Indexed, res.Scanned)
	// Output:
	// a3b0fc12 1 sighting command:"/src/widgets" "go" "test" "./..."
	//   --- FAIL: TestSpin (0.01s) spin_test.go:9: widget wobbles at 3000 rpm FAIL
	// 1 voyage(s) answered by the index, 0 read whole
}
