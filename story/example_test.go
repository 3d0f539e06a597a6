package story_test

import (
	"context"
	"os"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/story"
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

// The story of a voyage, as a terminal shows it.
func ExampleWriteText() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	defer v.Close()
	m, _ := marks.NewContext("init() dereferences a nil config")
	v.Observe(ctx, m, who, nil)
	v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	v.Perform(ctx, &stubCommit{Message: "Fix null check in widget init"}, who, nil)
	v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init.", who)

	if err := story.WriteText(ctx, os.Stdout, v); err != nil {
		panic(err)
	}
	// Output:
	// Voyage: Resolve #42: fix widget crash
	// Identity: john-agent
	// Created: 2026-02-26T17:01:00Z
	// Status: completed (2026-02-26T17:07:00Z)
	// Summary: Fixed null check in widget init.
	//
	// ── Bearing 1 ── 2026-02-26T17:04:00Z
	//   Mark: Context: init() dereferences a nil config
	//   Reading: Widget module has a null check missing in init().
	//
	// ── Action 2 ── 2026-02-26T17:05:00Z
	//   committed (abc1234)
}

// The same story in markdown, for a pull request or an issue.
func ExampleWriteMarkdown() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	defer v.Close()
	v.Note(ctx, "The crash needs a nil config: see #42.", who)

	if err := story.WriteMarkdown(ctx, os.Stdout, v); err != nil {
		panic(err)
	}
	// Output:
	// # Voyage: Resolve #42: fix widget crash
	//
	// - **Voyage:** `a3b0fc12-0000-4000-8000-000000000001` (resolve-issue)
	// - **Head:** `2:bac8e65561882ead85eb7ed2ea4eb2cfd08185efbc5a3db51e87cb6a1147be28`
	// - **Identity:** john-agent
	// - **Status:** active
	// - **Created:** 2026-02-26T17:01:00Z
	// - **Crew:** john-agent
	//
	// ## Lifecycle
	//
	// - 2026-02-26T17:01:00Z started by john-agent (coder, human)
	//
	// ## Logbook
	//
	// ### Note 1 · 2026-02-26T17:02:00Z · john-agent (coder, human)
	//
	// > The crash needs a nil config: see #42.
}
