package search_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/search"
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
