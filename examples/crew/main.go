// Command crew has three crew members — two coding agents and a person —
// work one voyage at the same time, each from its own goroutine with its
// own handle on the voyage, as separate processes would.
//
// Each member observes context marks and takes bearings. The slate is
// shared: a bearing seals everything on it, whoever observed it, so one
// member's bearing often seals another's observations. helm serialises
// the writes (a file lock on the event log) and each write first folds in
// what the others appended, so whatever the interleaving, every
// observation ends up in exactly one bearing or is still on the slate.
// The program prints the logbook with who took each entry, then checks
// that promise and exits 1 if it does not hold.
//
//	go run ./examples/crew
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// member is one of the crew: who they are, and what they will observe and
// make of it, round by round.
type member struct {
	who    logbook.Who
	rounds []round
}

// round is a few observations followed by a bearing.
type round struct {
	notes   []string
	reading string
}

var crew = []member{
	{
		who: logbook.Who{Identity: "alice-agent", Role: "reviewer", Method: "example-model-large"},
		rounds: []round{
			{[]string{"the diff touches widget.Init and widget.Close", "no test covers a nil widget"},
				"The fix is in the right place but untested."},
			{[]string{"the new test fails without the fix", "CI is green on fix-widget"},
				"The regression test proves the fix; ready to merge."},
		},
	},
	{
		who: logbook.Who{Identity: "bob-agent", Role: "coder", Method: "example-model-small"},
		rounds: []round{
			{[]string{"Close sets the widget's fields to nil", "render calls Init after Close"},
				"Init runs on closed widgets; it must tolerate nil."},
			{[]string{"added TestInitAfterClose", "go test ./... passes"},
				"Nil check and regression test are in."},
		},
	},
	{
		who: logbook.Who{Identity: "carol", Role: "maintainer", Method: "human"},
		rounds: []round{
			{[]string{"users report the crash only after closing a dialog"},
				"The crash follows Close: look there first."},
			{[]string{"the release is on Friday"},
				"Keep the fix small enough to ship this week."},
		},
	},
}

// handoff is observed by every member after their last bearing: it stays on
// the slate unless another member's bearing seals it.
const handoff = "handing over"

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crew:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "helm-crew-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	h, err := helm.Open(dir, nil)
	if err != nil {
		return err
	}

	// carol starts the voyage; its identity is hers. The others name
	// themselves on every call.
	v, err := h.Start(ctx, "Fix #42: widget crashes after Close", helm.ResolveIssue, crew[2].who, nil)
	if err != nil {
		return err
	}
	id := v.ID()
	if err := v.Close(); err != nil {
		return err
	}

	// Everyone works at once. Each member's goroutine reports the marks
	// it observed (by slate key) so the check below knows what to find.
	observed := make([][]string, len(crew))
	errs := make([]error, len(crew))
	var wg sync.WaitGroup
	for i, m := range crew {
		wg.Go(func() { observed[i], errs[i] = sail(ctx, h, id, m) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	// A fresh handle folds in every event the crew appended.
	v, err = h.Voyage(ctx, id)
	if err != nil {
		return err
	}
	defer v.Close()
	if err := printLogbook(ctx, out, v); err != nil {
		return err
	}
	return checkSealedOnce(ctx, out, v, observed)
}

// sail is one member's work on the voyage.
func sail(ctx context.Context, h *helm.Home, id string, m member) (keys []string, err error) {
	// Each member opens the voyage for itself, as a separate process
	// would. One *helm.Voyage shared by all goroutines works too: it is
	// safe for concurrent use.
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	defer v.Close()

	observe := func(note string) error {
		// The member's name in the description keeps one member's note
		// from replacing another's: the slate is keyed by mark, and
		// a context mark's key is its description.
		mark, err := marks.NewContext(m.who.Identity + ": " + note)
		if err != nil {
			return err
		}
		if _, err := v.Observe(ctx, mark, m.who, nil); err != nil {
			return err
		}
		keys = append(keys, mark.Key())
		return nil
	}

	for _, r := range m.rounds {
		for _, note := range r.notes {
			if err := observe(note); err != nil {
				return keys, err
			}
		}
		_, err := v.TakeBearing(ctx, r.reading, m.who, nil)
		if errors.Is(err, helm.ErrEmptySlate) {
			// Someone else's bearing sealed our observations before we
			// took ours: they are in the logbook, under that bearing.
			// The reading is lost; a real agent would observe again.
			continue
		}
		if err != nil {
			return keys, err
		}
	}
	return keys, observe(handoff)
}

// printLogbook prints each entry with who took it and, for every sealed
// mark, who observed it. The story (package story) does not show either; the
// entries and their observations hold both.
func printLogbook(ctx context.Context, out io.Writer, v *helm.Voyage) error {
	info := v.Info()
	fmt.Fprintf(out, "Voyage: %s (started by %s)\n", info.Intent, info.Identity)
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n── Bearing %d ── taken by %s (%s, %s)\n", e.N, e.Who.Identity, e.Who.Role, e.Who.Method)
		for _, o := range e.Bearing.Observations {
			fmt.Fprintf(out, "  Mark: %s  [observed by %s]\n", o.Label, o.ObservedBy.Identity)
		}
		fmt.Fprintf(out, "  Reading: %s\n", e.Bearing.Reading.Text)
	}
	slate := v.Slate()
	fmt.Fprintf(out, "\nStill on the slate: %d observation(s)\n", len(slate))
	for _, o := range slate {
		fmt.Fprintf(out, "  Mark: %s  [observed by %s]\n", o.Label, o.ObservedBy.Identity)
	}
	return nil
}

// checkSealedOnce checks that every observation the crew made is in
// exactly one place: sealed into one bearing, or still on the slate.
func checkSealedOnce(ctx context.Context, out io.Writer, v *helm.Voyage, observed [][]string) error {
	seen := map[string]int{}
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return err
		}
		for _, o := range e.Bearing.Observations {
			seen[o.Key]++
		}
	}
	for _, o := range v.Slate() {
		seen[o.Key]++
	}
	var problems []error
	total := 0
	for _, keys := range observed {
		for _, k := range keys {
			total++
			if n := seen[k]; n != 1 {
				problems = append(problems, fmt.Errorf("%s is in %d places, not one", k, n))
			}
			delete(seen, k)
		}
	}
	for k := range seen {
		problems = append(problems, fmt.Errorf("%s is in the logbook but nobody observed it", k))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the crew's observations were not each sealed once:\n%w", errors.Join(problems...))
	}
	fmt.Fprintf(out, "\nok: all %d observations were sealed exactly once or are still on the slate\n", total)
	return nil
}
