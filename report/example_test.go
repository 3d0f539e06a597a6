package report_test

import (
	"context"
	"os"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/report"
)

// stubCommit stands in for a commit (package actions' Commit runs git):
// it leaves the commit abc1234 and touches nothing.
type stubCommit struct {
	Message string `json:"message"`
}

func (*stubCommit) Kind() string { return "commit" }
func (*stubCommit) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

// A voyage's report, in markdown for a pull request. The files changed
// come from the DiffStat given: here a stand-in; package runner's
// Runner.DiffStat asks git.
func ExampleOf() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who,
		&helm.StartOptions{Repo: "octo/widgets", Dir: "/src/widgets", Base: "1a2b3c4d5e6f", Branch: "main"})
	m, _ := marks.NewContext("init() dereferences a nil config")
	v.Observe(ctx, m, who, nil)
	v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	v.Perform(ctx, &stubCommit{Message: "Fix null check in widget init"}, who, nil)
	v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init.", who)
	v.Close()

	r, err := report.Of(ctx, h, v.ID(), &report.Options{
		DiffStat: func(ctx context.Context, dir, base, head string) ([]report.FileChange, error) {
			return []report.FileChange{{Path: "src/widget.rs", Added: 2, Deleted: 1}}, nil
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
	// - **Head:** `8:900266c2855b1f268479ff9643430b845c8668c85c769bd8d1187525d09c4a2c`
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
	// Marks: Context: init() dereferences a nil config
	//
	// > Widget module has a null check missing in init().
	//
	// ### Actions
	//
	// - **Action 2** · committed (abc1234)
}
