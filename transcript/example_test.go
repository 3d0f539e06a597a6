package transcript_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/transcript"
)

// A lead's voyage and two sub-voyages, merged into one timeline, and the
// crew's figures: ann's bearing ends the first stage; in the second, bob
// and carol each took two steps beside her note, so 7 steps ran on a
// critical path of 5.
func ExampleRead() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	opts := replay.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
	n := 0 // ids a3b00001-..., a3b00002-...: the transcript shows their first 8 digits
	opts.NewID = func() uuid.UUID {
		n++
		return uuid.MustParse(fmt.Sprintf("a3b%05d-0000-4000-8000-000000000000", n))
	}
	h, _ := helm.Open(dir, opts)
	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	bob := logbook.Who{Identity: "bob", Role: "coder", Method: "claude"}
	carol := logbook.Who{Identity: "carol", Role: "tester", Method: "human"}

	lead, _ := h.Start(ctx, "Resolve #42", helm.ResolveIssue, ann, nil)
	defer lead.Close()
	report, _ := marks.NewContext("the crash report")
	lead.Observe(ctx, report, ann, nil)
	lead.TakeBearing(ctx, "A nil config: bob fixes init().", ann, nil)
	sub, _ := h.Start(ctx, "Fix init()", helm.OpenWaters, bob, &helm.StartOptions{Parent: lead.ID()})
	defer sub.Close()
	code, _ := marks.NewContext("init.go")
	sub.Observe(ctx, code, bob, nil)
	sub.TakeBearing(ctx, "A nil check fixes it.", bob, nil)
	test, _ := h.Start(ctx, "Test init()", helm.OpenWaters, carol, &helm.StartOptions{Parent: lead.ID()})
	defer test.Close()
	test.Note(ctx, "TestInitNil fails.", carol)
	test.Note(ctx, "It passes with bob's fix.", carol)
	lead.Note(ctx, "Waiting for bob.", ann)

	lines, err := transcript.Read(ctx, h, []string{lead.ID()}, &transcript.Options{Descendants: true})
	if err != nil {
		panic(err)
	}
	transcript.Write(os.Stdout, lines)
	s := transcript.StatsOf(lines)[0]
	fmt.Printf("%d steps, %d critical: parallelism %.2f\n", s.TotalSteps, s.CriticalSteps, s.Parallelism)
	// Output:
	// 2026-02-26T17:01:00Z  a3b00001  ann (lead)      started: Resolve #42
	// 2026-02-26T17:03:00Z  a3b00001  ann (lead)      observed Context: the crash report
	// 2026-02-26T17:04:00Z  a3b00001  ann (lead)      Bearing 1: A nil config: bob fixes init(). [sealed: Context: the crash report]
	// 2026-02-26T17:05:00Z  a3b00002  bob (coder)     started: Fix init() (sub-voyage of a3b00001)
	// 2026-02-26T17:07:00Z  a3b00002  bob (coder)     observed Context: init.go
	// 2026-02-26T17:08:00Z  a3b00002  bob (coder)     Bearing 1: A nil check fixes it. [sealed: Context: init.go]
	// 2026-02-26T17:09:00Z  a3b00003  carol (tester)  started: Test init() (sub-voyage of a3b00001)
	// 2026-02-26T17:10:00Z  a3b00003  carol (tester)  Note 1: TestInitNil fails.
	// 2026-02-26T17:11:00Z  a3b00003  carol (tester)  Note 2: It passes with bob's fix.
	// 2026-02-26T17:12:00Z  a3b00001  ann (lead)      Note 2: Waiting for bob.
	// 7 steps, 5 critical: parallelism 1.40
}
