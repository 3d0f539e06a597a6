package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm/replay"
)

// voyageReplayCommand replays a recorded voyage with this helm.
type voyageReplayCommand struct{ record bool }

func (c *voyageReplayCommand) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.record, "record", false, "write the views this helm folds beside the events (FILE.views.json, DIR.views.json) instead of checking them")
}

// replayResult is the --json form of voyage replay.
type replayResult struct {
	Path       string   `json:"path"`
	Events     int      `json:"events"`
	Agrees     bool     `json:"agrees"`
	Event      int      `json:"event,omitempty"`
	Seq        uint64   `json:"seq,omitempty"`
	Type       string   `json:"type,omitempty"`
	Who        string   `json:"who,omitempty"`
	Fields     []string `json:"fields,omitempty"`
	FoldError  string   `json:"fold_error,omitempty"`
	RecordedTo string   `json:"recorded_to,omitempty"`
	Form       string   `json:"form,omitempty"`
	Digest     string   `json:"digest,omitempty"`
	Torn       any      `json:"torn,omitempty"`
}

func (c *voyageReplayCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "voyage replay: one DIR (a voyage directory) or FILE (a .jsonl export) expected, got %d arguments", len(args))
	}
	path := a.abs(args[0])
	if c.record {
		return c.writeViews(ctx, a, path)
	}
	if _, err := os.Stat(replay.ViewsPath(path)); errors.Is(err, os.ErrNotExist) {
		return c.fold(ctx, a, path, args[0])
	}
	rec, err := replay.ReadRecording(ctx, path)
	if err != nil {
		return &usageError{Err: err, Hint: "helm voyage replay --record " + args[0] + ", to record the views this helm folds"}
	}
	out := replayResult{Path: path, Events: len(rec.Events), Agrees: true}
	d := rec.Check()
	if d != nil {
		out.Agrees, out.Event, out.Seq, out.Type, out.Who, out.Fields = false, d.Index+1, d.Seq, string(d.Type), d.Who.Identity, d.Fields
		if d.Err != nil {
			out.FoldError = d.Err.Error()
		}
	}
	if a.g.json {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else if d == nil {
		fmt.Fprintf(a.stdout, "OK: %d events replay to the recorded views\n", len(rec.Events))
	} else {
		fmt.Fprintf(a.stdout, "%s\n", printable(strings.ReplaceAll(d.String(), "\n", " | ")))
	}
	if d != nil {
		return fmt.Errorf("replay %s: %w", printable(args[0]), errDiverged)
	}
	return nil
}

// replayAccepts is the hint of a path voyage replay cannot read.
const replayAccepts = "give a voyage directory (voyages/ID of a home, or a copy of one), what helm voyage export --format jsonl writes, or a recording's .jsonl events"

var errDiverged = errors.New("this helm folds the recorded events to other views (see above)")

// writeViews records the views of the events at path.
func (c *voyageReplayCommand) writeViews(ctx context.Context, a *app, path string) error {
	events, err := replay.ReadRecordedEvents(ctx, path)
	if err != nil {
		return &usageError{Err: err, Hint: replayAccepts}
	}
	rec, err := replay.NewRecording(events)
	if err != nil {
		return err
	}
	rec.Path = path
	if err := rec.WriteViews(); err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, replayResult{Path: path, Events: len(events), Agrees: true, RecordedTo: replay.ViewsPath(path)})
	}
	_, err = fmt.Fprintf(a.stdout, "Recorded the views of %d events in %s\n", len(events), printable(replay.ViewsPath(path)))
	return err
}

// fold replays the events at path, in any form helm exports, with no
// recorded views to compare: it says whether this helm folds them, and
// the digest of the views it folds them to (equal views, equal digests).
func (c *voyageReplayCommand) fold(ctx context.Context, a *app, path, arg string) error {
	src, err := replay.Open(ctx, path)
	if err != nil {
		return &usageError{Err: err, Hint: replayAccepts}
	}
	views, err := replay.Fold(src.Events)
	if err != nil {
		return fmt.Errorf("replay %s (%s): %w", printable(arg), src.Form, err)
	}
	out := replayResult{Path: path, Events: len(src.Events), Agrees: true, Form: string(src.Form), Digest: replay.ViewsDigest(views)}
	if src.Torn != nil {
		out.Torn = src.Torn
		fmt.Fprintf(a.stderr, "warning: %s ends in a torn write (%d bytes at offset %d of %s), left in place: the %d events before it are replayed\n",
			printable(arg), src.Torn.Bytes, src.Torn.Offset, printable(src.Torn.File), len(src.Events))
	}
	if a.g.json {
		return writeJSON(a.stdout, out)
	}
	_, err = fmt.Fprintf(a.stdout, "OK: %d events of the %s fold with this helm (views %s); no recorded views to compare (helm voyage replay --record %s records them)\n",
		len(src.Events), src.Form, out.Digest, printable(arg))
	return err
}
