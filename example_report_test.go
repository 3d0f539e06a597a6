package helm_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/helmlog/helm"
)

// A voyage's report, in markdown for a pull request. The files changed
// come from the DiffStat given: here a stand-in; package runner's
// Runner.DiffStat asks git.
func ExampleVoyage_Report() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, helm.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := helm.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, &helm.StartOptions{Repo: "octo/widgets", Dir: "/src/widgets", Base: "1a2b3c4d5e6f", Branch: "main"})

	defer v.Close()

	v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() { ... }"}, who, nil)
	v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	v.Perform(ctx, &fakeAction{Message: "Fix null check in widget init"}, who, nil)
	v.Complete(ctx, helm.OutcomeCompleted, "Fixed null check in widget init.", who)

	r, err := v.Report(ctx, helm.ReportOptions{
		DiffStat: func(ctx context.Context, dir, base, head string) ([]helm.FileChange, error) {
			return []helm.FileChange{{Path: "src/widget.rs", Added: 2, Deleted: 1}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	r.WriteMarkdown(os.Stdout)
	// Output:
	// ## Voyage report: Resolve #42: fix widget crash
	//
	// - **Voyage:** `a3b0fc12-0000-4000-8000-000000000001` (resolve-issue)
	// - **Status:** completed — Fixed null check in widget init.
	// - **Repository:** octo/widgets, branch main, base `1a2b3c4`
	// - **Started:** 2026-02-26T17:01:00Z by john-agent
	// - **Ended:** 2026-02-26T17:07:00Z (6m)
	//
	// ### Crew
	//
	// | Identity | Roles | Methods | Entries |
	// |---|---|---|---:|
	// | john-agent | coder | human | 2 (1 bearing, 1 action) |
	//
	// ### Lifecycle
	//
	// - 2026-02-26T17:01:00Z started by john-agent
	// - 2026-02-26T17:07:00Z completed by john-agent: Fixed null check in widget init.
	//
	// ### Files changed
	//
	// Between base `1a2b3c4` and `abc1234`: 1 file, +2 −1.
	//
	// | File | + | − |
	// |---|---:|---:|
	// | src/widget.rs | 2 | 1 |
	//
	// ### Bearings
	//
	// **Bearing 1** · 2026-02-26T17:04:00Z\
	// Marks: Note @ widget.rs
	//
	// > Widget module has a null check missing in init().
	//
	// ### Actions
	//
	// - **Action 2** · committed (abc1234)
}

// Finding what happened to a pull request across every voyage of a home.
func ExampleHome_Search() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, helm.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	john := helm.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	bob := helm.Who{Identity: "bob", Role: "reviewer", Method: "human"}

	fix, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, john, nil)
	fix.Note(ctx, "Opened PR #45; waiting for CI.", john)
	fix.Close()
	review, _ := h.Start(ctx, "Review the widget fix", helm.OpenWaters, bob, nil)
	review.Note(ctx, "PR #45 looks right; merging after CI.", bob)
	review.Note(ctx, "PR #450 is another matter.", bob)
	review.Close()

	hits, err := h.Search(ctx, helm.SearchQuery{PR: 45})
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
