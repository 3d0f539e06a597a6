package helm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/sighting"
)

// A voyage from start to finish: observe, take a bearing, perform an
// action, complete, and read the logbook.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)

	// A fixed clock and id source (Options.Clock and NewID, as package
	// replay's Deterministic makes them) make the output stable, and a
	// voyage replayable byte for byte; production code passes nil.
	start := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	h, err := helm.Open(dir, deterministic(start, time.Minute, "a3b0fc12"))
	if err != nil {
		panic(err)
	}
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
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
	if _, err := v.Perform(ctx, &fakeAction{Message: "Fix null check in widget init"}, who, nil); err != nil {
		panic(err)
	}
	if err := v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init.", who); err != nil {
		panic(err)
	}
	info := v.Info()
	fmt.Printf("%s: %s (%s)\n", info.Intent, info.Status, info.Summary)
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			panic(err)
		}
		switch {
		case e.Bearing != nil:
			fmt.Printf("Bearing %d, on %s: %s\n", e.N, e.Bearing.Observations[0].Label, e.Bearing.Reading.Text)
		case e.Action != nil:
			fmt.Printf("Action %d: %s\n", e.N, logbook.DescribeAction(e.Action))
		}
	}
	// (Package story tells it whole, for a terminal, in markdown or in HTML.)

	// Output:
	// Resolve #42: fix widget crash: completed (Fixed null check in widget init.)
	// Bearing 1, on Note @ widget.rs: Widget module has a null check missing in init().
	// Action 2: committed (abc1234)
}

// Observing the same mark twice keeps the newest observation: the slate is
// a set keyed by mark.
func ExampleVoyage_Observe() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who, nil)
	defer v.Close()

	v.Observe(ctx, &note{Topic: "README", Text: "old"}, who, nil)
	v.Observe(ctx, &note{Topic: "README", Text: "new"}, who, nil)
	for _, o := range v.Slate() {
		r, _ := v.OpenArtifact(ctx, o.Artifact)
		s, _ := sighting.Read(r) // to its end: the bytes are checked there
		r.Close()
		fmt.Println(o.Label, "→", s.(*noteSighting).Text)
	}
	// Output:
	// Note @ README → new
}

// A long story is read from any entry on, and a caller that stops early
// pays for what it read. An error (a damaged log) is yielded, never a
// story cut short.
func ExampleVoyage_Entries() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Read the story in pages", helm.OpenWaters, who, nil)
	defer v.Close()

	for i := range 5 {
		v.Observe(ctx, &note{Topic: fmt.Sprint("file ", i), Text: fmt.Sprint("contents ", i)}, who, nil)
		v.TakeBearing(ctx, fmt.Sprint("reading ", i), who, nil)
	}
	fmt.Println(v.Info().Counts.Entries, "entries")
	for e, err := range v.Entries(ctx, &helm.EntriesOptions{From: 4}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.N, e.Bearing.Reading.Text)
	}
	// Output:
	// 5 entries
	// 4 reading 3
	// 5 reading 4
}

// The logbook's counts are known without reading its entries: a long
// voyage opened from its snapshot answers them from the snapshot's head.
func ExampleLogbookCounts() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Count the story", helm.OpenWaters, who, nil)
	defer v.Close()

	for i := range 3 {
		v.Observe(ctx, &note{Topic: fmt.Sprint("file ", i), Text: fmt.Sprint("contents ", i)}, who, nil)
		v.TakeBearing(ctx, fmt.Sprint("reading ", i), who, nil)
	}
	c := v.Info().Counts
	fmt.Println(c.Entries, "entries,", c.Bearings, "bearings,", c.Actions, "actions")
	// Output:
	// 3 entries, 3 bearings, 0 actions
}

// Challenging a reading keeps the attempt it replaces.
func ExampleVoyage_Challenge() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	agent := logbook.Who{Identity: "john-agent", Role: "coder", Method: "sonnet"}
	v, _ := h.Start(ctx, "Review", helm.OpenWaters, agent, nil)
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

// Open opens a home: a directory of voyages. Opening reads; the first
// Start creates the directory.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)

	h, err := helm.Open(filepath.Join(dir, "home"), fixedOptions())
	if err != nil {
		panic(err)
	}
	v, err := h.Start(ctx, "Look around", helm.OpenWaters, logbook.Who{Identity: "john-agent"}, nil)
	if err != nil {
		panic(err)
	}
	defer v.Close()
	fmt.Println(v.ID())
	fmt.Println(v.Info().Status, v.Info().Identity)
	// Output:
	// a3b0fc12-0000-4000-8000-000000000001
	// active john-agent
}

// List describes a home's voyages, oldest first, without reading their
// events.
func ExampleHome_List() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent"}
	for _, intent := range []string{"Fix #41", "Fix #42"} {
		v, _ := h.Start(ctx, intent, helm.ResolveIssue, who, nil)
		if intent == "Fix #41" {
			v.Complete(ctx, logbook.OutcomeCancelled, "A duplicate of #42.", who)
		}
		v.Close()
	}

	all, err := h.List(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, info := range all {
		fmt.Printf("%s: %s (final: %t)\n", info.Intent, info.Status, info.Status.Final())
	}
	active, _ := h.List(ctx, &helm.ListOptions{Status: helm.ListActive})
	fmt.Println(len(active), "active:", active[0].Intent)
	closed, _ := h.List(ctx, &helm.ListOptions{Status: helm.ListClosed})
	fmt.Println(len(closed), "closed:", closed[0].Intent)
	// Output:
	// Fix #41: cancelled (final: true)
	// Fix #42: active (final: false)
	// 1 active: Fix #42
	// 1 closed: Fix #41
}

// Perform records the intent before it touches the world and the outcome
// after: an Action is anything with a Kind and a Perform (package actions
// has git's and GitHub's). A failure is an *ActionError, recorded among
// the failed actions rather than in the story.
func ExampleVoyage_Perform() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
	defer v.Close()

	e, err := v.Perform(ctx, &fakeAction{Message: "Fix null check"}, who, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.N, e.Action.Kind, e.Action.Status, e.Action.Result.SHA)
	fmt.Println(string(e.Action.Params))

	_, err = v.Perform(ctx, &fakeAction{Message: "Again", fail: errors.New("nothing to commit")}, who, nil)
	var ae *helm.ActionError
	fmt.Println(errors.As(err, &ae), ae.Err)
	for e, err := range v.Entries(ctx, &helm.EntriesOptions{From: 2}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(v.Info().Counts.Entries, "in the story; entry", e.N, "is", e.Action.Status)
	}
	// Output:
	// 1 commit performed abc1234def5678
	// {"message":"Fix null check"}
	// true nothing to commit
	// 2 in the story; entry 2 is failed
}

// Complete ends a voyage with an outcome; nothing more is recorded on it
// afterwards.
func ExampleVoyage_Complete() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Fix #42", helm.ResolveIssue, who, nil)
	defer v.Close()

	if err := v.Complete(ctx, logbook.OutcomeBlocked, "Waiting on upstream.", who); err != nil {
		panic(err)
	}
	info := v.Info()
	fmt.Println(info.Status, info.Outcome, info.Summary)

	_, err := v.Observe(ctx, &note{Topic: "late", Text: "too late"}, who, nil)
	fmt.Println(errors.Is(err, helm.ErrVoyagePaused))

	// A blocked voyage is resumed; a completed one is final.
	if err := v.Resume(ctx, "Upstream released the fix.", who); err != nil {
		panic(err)
	}
	fmt.Println(v.Info().Status)
	v.Complete(ctx, logbook.OutcomeCompleted, "Fixed with upstream's release.", who)
	err = v.Resume(ctx, "", who)
	fmt.Println(v.Info().Status, errors.Is(err, helm.ErrNotResumable))
	// Output:
	// blocked blocked Waiting on upstream.
	// true
	// active
	// completed true
}

// Verify reads a voyage whole: every record of its log and every artifact
// against its address. Damage is in the report, each problem a
// *DamageError saying which file, where and why.
func ExampleHome_Verify() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who, nil)
	v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)
	v.Observe(ctx, &note{Topic: "b", Text: "b"}, who, nil)
	v.Close()

	rep, err := h.Verify(ctx, v.ID()[:8], nil)
	if err != nil {
		panic(err) // the check could not run
	}
	fmt.Println(rep.OK(), rep.Events.Records, "records,", rep.Artifacts, "artifacts checked")
	for _, p := range rep.Problems {
		fmt.Println(p.File, p.Offset, p.Reason)
	}
	// Output:
	// true 7 records, 2 artifacts checked
}

// HintOf says what to do about an error, as data: a program puts it in
// its own words. No error's message includes it.
func ExampleHintOf() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who, nil)
	defer v.Close()

	_, err := v.TakeBearing(ctx, "Nothing seen yet.", who, nil)
	fmt.Println(err)
	what := helm.HintOf(err)
	fmt.Println(what.Kind == hint.Observe, "-", what.Text)
	// Output:
	// take bearing on voyage a3b0fc12-0000-4000-8000-000000000001: slate is empty: a bearing needs at least one observation
	// true - observe a mark first, or seal observations made elsewhere (BearingOptions.Observations)
}

// A look that failed is an observation all the same, recorded; Observe
// says so with an *ObservationError beside the Observed, so that a
// caller checking err cannot miss it.
func ExampleObservationError() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who, nil)
	defer v.Close()

	m, _ := marks.NewFileContents("no-such-file.txt")
	_, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	var failed *helm.ObservationError
	switch {
	case errors.As(err, &failed):
		// Recorded: the slate holds what was seen, failures and all.
		for _, f := range failed.Failures {
			fmt.Println(f.Kind, "-", f.Message)
		}
		fmt.Println(len(v.Slate()), "observation on the slate")
		// Not worth a bearing: take it off the slate.
		if err := v.Erase(ctx, failed.Key, who); err != nil {
			fmt.Println(err)
		}
		fmt.Println(len(v.Slate()), "after Erase")
	case err != nil:
		fmt.Println("nothing recorded:", err)
	}
	// Output:
	// missing - no-such-file.txt could not be read: no such file or directory
	// 1 observation on the slate
	// 0 after Erase
}

// Failures lists what a look found failed, as the ObservationError Observe
// returned with it does.
func ExampleObserved_Failures() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "john-agent"}
	v, _ := h.Start(ctx, "Look around", helm.OpenWaters, who, nil)
	defer v.Close()

	m, _ := marks.NewFileContents("no-such-file.txt")
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	if _, recorded := errors.AsType[*helm.ObservationError](err); err != nil && !recorded {
		fmt.Println("nothing recorded:", err)
		return
	}
	for _, f := range o.Failures() {
		fmt.Println(f.Kind, "-", f.Message)
	}
	// Output:
	// missing - no-such-file.txt could not be read: no such file or directory
}

// Everything a voyage stores passes the home's redactor first; Redact
// shows what it hides.
func ExampleHome_Redact() {
	h, err := helm.Open(os.TempDir(), &helm.Options{Redaction: helm.Redaction{
		Environ:  []string{"GH_TOKEN=ghp_exampleEXAMPLEexample0123456789abcd"},
		Patterns: []redact.Pattern{{Name: "ticket", Regexp: `TICKET-(\d+)`}},
	}})
	if err != nil {
		panic(err)
	}
	text, n, err := h.Redact("GH_TOKEN is ghp_exampleEXAMPLEexample0123456789abcd; see TICKET-4242; DB_PASSWORD=correct-horse-battery")
	if err != nil {
		panic(err)
	}
	fmt.Println(n, text)
	// Output: 3 GH_TOKEN is [REDACTED:env:GH_TOKEN]; see TICKET-[REDACTED:ticket]; DB_PASSWORD=[REDACTED:secret-assignment]
}

// An agent host's steps, as a hook reports them: the call is recorded
// before it runs, with the guard's decision, and its result is attached
// to the same entry once it ran.
func ExampleVoyage_Step() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, nil)
	who := logbook.Who{Identity: "ann", Role: "coder", Method: "claude-code"}
	v, _ := h.Start(ctx, "claude-code session 5c1e", helm.OpenWaters, who, &helm.StartOptions{Session: "claude-code:5c1e"})
	defer v.Close()

	cc := logbook.Step{Agent: "claude-code", Session: "5c1e"}
	prompt := cc
	prompt.Kind, prompt.Text = logbook.StepPrompt, "make the tests pass"
	v.Step(ctx, prompt, who)

	call := cc
	call.Kind, call.ID, call.Tool, call.Text = logbook.StepTool, "toolu_01", "Bash", "go test ./..."
	call.Input = json.RawMessage(`{"command":"go test ./..."}`)
	call.Decision = &logbook.StepDecision{Verdict: "allow"}
	e, _ := v.Step(ctx, call, who)
	fmt.Println("entry", e.N, "waits for its result:", e.Step.Result == nil)

	call.Result = &logbook.StepResult{Output: "ok  \texample.com/x\t0.2s", Duration: 1200 * time.Millisecond}
	e, _ = v.Step(ctx, call, who)
	fmt.Println("entry", e.N, "failed:", e.Step.Result.Failed)
	for _, line := range logbook.DescribeStep(e.Step) {
		fmt.Println(line)
	}
	info := v.Info()
	fmt.Println(info.Session, info.Counts.Steps, "steps")
	// Output:
	// entry 2 waits for its result: true
	// entry 2 failed: false
	// Bash: go test ./...
	// → ok (1.2s)
	// claude-code:5c1e 2 steps
}
