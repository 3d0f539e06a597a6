package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// A recording is a voyage kept to be replayed by later versions of the
// code: its events, in the form WriteEvents writes (NAME.jsonl, or a voyage
// directory), and beside them, in NAME.views.json (DIR.views.json), the
// views they gave when recorded with a digest of the views after each
// event. Replaying it folds the events with the code as it is now; where
// the views differ, the first event after which they do is reported, with
// the fields that differ (a Divergence).

// Recording is a recorded voyage.
type Recording struct {
	// Path is where its events are: a .jsonl file or a voyage directory.
	Path string
	// Events are the recorded events, with their sequence numbers.
	Events []helm.Event
	// Views are the views the events gave when recorded, and Digests a
	// digest of the views after each event (ViewsDigest), in order.
	Views   *Views
	Digests []string
	// Form is the form its events were read in (Open), and Torn a torn
	// final write of a voyage directory, left in place.
	Form Form
	Torn *helm.Cut
}

// recordedViews is the form of a recording's views file.
type recordedViews struct {
	Views   *Views   `json:"views"`
	Digests []string `json:"digests"`
}

// ViewsPath returns where the views of the recording at path are kept.
func ViewsPath(path string) string {
	return strings.TrimSuffix(filepath.Clean(path), ".jsonl") + ".views.json"
}

// ViewsDigest returns a digest of views: equal views, equal digests.
func ViewsDigest(v *Views) string {
	data, _ := json.Marshal(compared(v)) // Views has no type json cannot encode
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// compared is what of v a recording compares: v without the logbook's
// counts in its Info, which the logbook v holds says already (and which
// recordings made before Info carried them lack), and without the
// current identity while it is the one the voyage started with (which
// recordings made before handoffs lack): a handoff is compared.
func compared(v *Views) *Views {
	if v == nil || (v.Info.Counts == (helm.LogbookCounts{}) && v.Info.CurrentIdentity == "") {
		return v
	}
	c := *v
	c.Info.Counts = helm.LogbookCounts{}
	if c.Info.CurrentIdentity == c.Info.Identity {
		c.Info.CurrentIdentity = ""
	}
	return &c
}

// NewRecording returns the recording of events: their views, and the digest of
// the views after each, as this code folds them.
func NewRecording(events []helm.Event) (*Recording, error) {
	r := &Recording{Events: events}
	_, err := foldViews(events, func(i int, v *Views) {
		r.Digests = append(r.Digests, ViewsDigest(v))
		r.Views = v
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// foldViews folds events and calls fn with the views after each. An
// event that does not fold stops it: its index is returned with the error.
func foldViews(events []helm.Event, fn func(i int, v *Views)) (int, error) {
	st := &projection.State{}
	for i := range events {
		seq := events[i].Seq
		if seq == 0 {
			seq = uint64(i) + 1
		}
		e := events[i]
		if err := st.Apply(seq, &e); err != nil {
			return i, fmt.Errorf("replay: event %d (seq %d, %s): %w", i+1, seq, events[i].Type, err)
		}
		fn(i, viewsOf(st))
	}
	return len(events), nil
}

// WriteFiles writes the recording: its events to Path (a .jsonl file)
// and its views beside them.
func (r *Recording) WriteFiles() error {
	if !strings.HasSuffix(r.Path, ".jsonl") {
		return fmt.Errorf("write recording %s: %w: its events go to a .jsonl file", r.Path, helm.ErrInvalid)
	}
	var events bytes.Buffer
	enc := json.NewEncoder(&events)
	enc.SetEscapeHTML(false)
	for i := range r.Events {
		if err := enc.Encode(&r.Events[i]); err != nil {
			return fmt.Errorf("write recording %s: event %d: %w", r.Path, i+1, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
		return fmt.Errorf("write recording: %w", err)
	}
	if err := os.WriteFile(r.Path, events.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write recording: %w", err)
	}
	return r.WriteViews()
}

// WriteViews writes the recording's views and digests beside its events
// (ViewsPath of Path).
func (r *Recording) WriteViews() error {
	views, err := json.MarshalIndent(recordedViews{Views: r.Views, Digests: r.Digests}, "", "  ")
	if err != nil {
		return fmt.Errorf("write recording %s: %w", r.Path, err)
	}
	if err := os.WriteFile(ViewsPath(r.Path), append(views, '\n'), 0o644); err != nil {
		return fmt.Errorf("write recording: %w", err)
	}
	return nil
}

// ReadRecording reads the recording at path: events in any form Open
// reads (a voyage directory anywhere, an export archive, a recording's
// events), with their views beside them (ViewsPath). Reading writes
// nothing.
func ReadRecording(ctx context.Context, path string) (*Recording, error) {
	src, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	r := &Recording{Path: path, Events: src.Events, Form: src.Form, Torn: src.Torn}
	data, err := os.ReadFile(ViewsPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read recording %s: no recorded views (%s): record the voyage's views first: %w", path, ViewsPath(path), helm.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("read recording %s: %w", path, err)
	}
	var rv recordedViews
	if err := json.Unmarshal(data, &rv); err != nil || rv.Views == nil {
		return nil, fmt.Errorf("read recording %s: %s holds no views (%v): %w", path, ViewsPath(path), err, helm.ErrInvalid)
	}
	r.Views, r.Digests = rv.Views, rv.Digests
	return r, nil
}

// ReadRecordedEvents reads the events at path, in any form Open reads.
// Reading writes nothing.
func ReadRecordedEvents(ctx context.Context, path string) ([]helm.Event, error) {
	src, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return src.Events, nil
}

// Divergence is where replaying a recording with today's code stops
// agreeing with what was recorded.
type Divergence struct {
	// Index is the event (from 0) after which the views first differ;
	// Seq, Type and Who are that event's.
	Index int
	Seq   uint64
	Type  projection.Type
	Who   logbook.Who
	// Fields are the view fields that differ at the end, each as
	// "Logbook[0].Bearing.Reading.Text: - recorded + replayed".
	Fields []string
	// Err is set when today's code cannot fold the event at all.
	Err error
}

func (d *Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the views diverge after event %d (seq %d, %s by %s)", d.Index+1, d.Seq, d.Type, d.Who.Identity)
	if d.Err != nil {
		fmt.Fprintf(&b, ": it no longer folds: %v", d.Err)
	}
	if len(d.Fields) > 0 {
		b.WriteString("; the views differ in:\n")
		for _, f := range d.Fields {
			b.WriteString("  " + f + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Check replays the recording with today's code and compares the views
// after each event with the recorded digests, then the final views with
// the recorded ones. It returns nil when they agree, else where they
// first diverge.
func (r *Recording) Check() *Divergence {
	div := func(i int) *Divergence {
		e := &r.Events[i]
		seq := e.Seq
		if seq == 0 {
			seq = uint64(i) + 1
		}
		return &Divergence{Index: i, Seq: seq, Type: e.Type, Who: e.Who}
	}
	var found *Divergence
	var last *Views
	i, err := foldViews(r.Events, func(i int, v *Views) {
		last = v
		if found == nil && (i >= len(r.Digests) || ViewsDigest(v) != r.Digests[i]) {
			found = div(i)
		}
	})
	if err != nil {
		d := div(i)
		d.Err = err
		return d
	}
	if found == nil && len(r.Digests) != len(r.Events) {
		found = div(len(r.Events) - 1)
	}
	if found == nil && last != nil && ViewsDigest(last) != ViewsDigest(r.Views) {
		found = div(len(r.Events) - 1)
	}
	if found != nil && last != nil {
		found.Fields = DiffViews(r.Views, last)
	}
	return found
}

// DiffViews lists the fields in which two views differ, by path, each
// with its value in want (-) and in got (+).
func DiffViews(want, got *Views) []string {
	a, b := flatten(want), flatten(got)
	var out []string
	for _, k := range slices.Sorted(mapsKeys(a, b)) {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: - %s + %s", k, orAbsent(a[k]), orAbsent(b[k])))
		}
	}
	return out
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func mapsKeys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// flatten maps each leaf of v's JSON form to its value, by a Go-like
// path: Logbook[0].bearing.reading.text.
func flatten(v *Views) map[string]string {
	out := map[string]string{}
	data, err := json.Marshal(compared(v))
	if err != nil {
		return out
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return out
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, y := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, y)
			}
		case []any:
			for i, y := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), y)
			}
		default:
			leaf, _ := json.Marshal(x)
			out[path] = string(leaf)
		}
	}
	walk("", tree)
	return out
}
