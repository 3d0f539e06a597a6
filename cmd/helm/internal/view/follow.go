package view

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// Following a voyage: helm log --follow prints the story so far, then
// each entry as it is recorded (by this process or any other), until the
// voyage is completed or the reader stops.

// FollowOptions choose how FollowLog tells the story: as WriteLog does
// (Evidence, Who), or as JSON lines.
type FollowOptions struct {
	Evidence bool
	Who      string
	// JSON writes one JSON object a line: {"voyage":…} first and once
	// more when the voyage is completed, {"entry":…} for each entry.
	JSON bool
}

// FollowLog writes v's story as WriteLog (or LogOf, one line each) does,
// then each entry as it is recorded, and an entry again, whole, under
// its same number, when it changes once recorded (a tool call's result
// arriving, a reading challenged). When the voyage's status changes it
// writes the header's lines that changed. It returns nil once the voyage
// is no longer active (after writing its completion), and ctx's error
// when ctx is done first. Each entry is written whole, at once: a reader
// stopped never sees half of one.
func FollowLog(ctx context.Context, w io.Writer, v *helm.Voyage, opts FollowOptions) error {
	head, err := v.Head(ctx)
	if err != nil {
		return err
	}
	f := &follower{w: w, v: v, opts: opts, printed: map[int]string{}}
	if err := f.update(ctx); err != nil || f.done {
		return err
	}
	// One goroutine follows the log and wakes the writer; the writer
	// reads the story once for however many events came meanwhile.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	failed := make(chan error, 1)
	go func() {
		for _, err := range v.Follow(fctx, head.Seq+1) {
			if err != nil {
				failed <- err
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-failed:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		case <-wake:
		}
		if err := f.update(ctx); err != nil || f.done {
			return err
		}
	}
}

// follower is what FollowLog has written so far.
type follower struct {
	w       io.Writer
	v       *helm.Voyage
	opts    FollowOptions
	started bool
	header  string
	printed map[int]string // by entry number, what was written of it
	done    bool
}

// update writes what is new in the story since the last update.
func (f *follower) update(ctx context.Context) error {
	st, err := storyOf(ctx, f.v)
	if err != nil {
		return err
	}
	info := f.v.Info()
	f.done = info.Status != logbook.StatusActive
	var b bytes.Buffer
	if !f.started {
		b.WriteString(st.header + "\n")
		if f.opts.JSON {
			b.Reset()
			writeJSONLine(&b, map[string]any{"voyage": info})
		}
	} else if st.header != f.header && !f.opts.JSON {
		b.WriteString("\n" + changedLines(f.header, st.header))
	}
	f.started, f.header = true, st.header
	if err := f.flush(ctx, &b); err != nil {
		return err
	}
	for i, e := range st.entries {
		if f.opts.Who != "" && e.Who.Identity != f.opts.Who {
			continue
		}
		seen := st.blocks[i]
		if f.opts.JSON {
			j, err := json.Marshal(e)
			if err != nil {
				return err
			}
			seen = string(j)
		}
		if f.printed[e.N] == seen {
			continue
		}
		f.printed[e.N] = seen
		if f.opts.JSON {
			b.WriteString(`{"entry":` + seen + "}\n")
		} else if err := writeEntry(ctx, &b, f.v, e, st.blocks[i], f.opts.Evidence); err != nil {
			return err
		}
		if err := f.flush(ctx, &b); err != nil {
			return err
		}
	}
	if f.done && f.opts.JSON {
		writeJSONLine(&b, map[string]any{"voyage": info})
	}
	return f.flush(ctx, &b)
}

// flush writes b whole, unless ctx is done: what was interrupted is not
// half-written.
func (f *follower) flush(ctx context.Context, b *bytes.Buffer) error {
	if b.Len() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := f.w.Write(b.Bytes())
	b.Reset()
	return err
}

func writeJSONLine(b *bytes.Buffer, x any) {
	j, err := json.Marshal(x)
	if err != nil {
		panic(err) // VoyageInfo always marshals
	}
	b.Write(j)
	b.WriteString("\n")
}

// changedLines are the lines of header now that were not in it before,
// each ending in a newline.
func changedLines(before, now string) string {
	old := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		old[l] = true
	}
	var out strings.Builder
	for _, l := range strings.Split(now, "\n") {
		if !old[l] {
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}
