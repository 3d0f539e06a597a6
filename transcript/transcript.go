// Package transcript merges the events of several voyages into one
// timeline (Read, Follow), and computes a crew's figures over it
// (StatsOf): critical steps, parallelism, each identity's part.
//
// It reads voyages through the root package's read path only
// (helm.Voyage.Events and Follow). Each Line is one event of one voyage,
// in the JSON form exports share (its type, version, time, who and
// payload, with its sequence number), with the voyage's id, its parent's,
// the number of the entry it records as the story shows it, and its links
// to the events it rests on. docs/transcript.md documents the form; it is
// versioned as the events are, by each line's type and "v". Reading
// writes nothing.
package transcript

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Line is one event of a transcript.
type Line struct {
	// VoyageID is the id of the voyage the event belongs to; ParentID
	// its parent's, for a sub-voyage.
	VoyageID string `json:"voyage_id"`
	ParentID string `json:"parent_id,omitempty"`
	// The event as the read path yields it: seq, type, v, at, who, the
	// entry number n (for an entry, as the story numbers it, also in
	// voyages written before numbers were stored) and the payload.
	helm.Event
	// Links point from the event to those it rests on.
	Links []Link `json:"links,omitempty"`
}

// Link points from a transcript line to another event of its voyage.
type Link struct {
	// Rel is how the two are linked: LinkFollowed, LinkSealed,
	// LinkChallenges, LinkOutcomeOf or LinkUndoes.
	Rel string `json:"rel"`
	// Seq is the sequence number of the event linked to, and Entry its
	// entry number when it records one.
	Seq   uint64 `json:"seq"`
	Entry int    `json:"entry,omitempty"`
	// Label names what is linked to: an observation's mark.
	Label string `json:"label,omitempty"`
}

// Link relations.
const (
	// LinkFollowed links an intended or refused action to the last
	// bearing before it.
	LinkFollowed = "followed"
	// LinkSealed links a bearing to each observation it sealed.
	LinkSealed = "sealed"
	// LinkChallenges links a challenge to the bearing whose reading it
	// challenged.
	LinkChallenges = "challenges"
	// LinkOutcomeOf links an action's outcome to its intent.
	LinkOutcomeOf = "outcome-of"
	// LinkUndoes links an undo's intent to the intent of the action it
	// takes back.
	LinkUndoes = "undoes"
)

// Options narrow a transcript. The zero value (or nil) keeps every event
// of the voyages named.
type Options struct {
	// Since, when set, keeps the events at or after it.
	Since time.Time
	// Who, when set, keeps the events of that identity.
	Who string
	// Descendants adds each named voyage's sub-voyages, and theirs.
	Descendants bool
}

// Read merges the events of the voyages of home h that ids name (ids or
// unambiguous prefixes; none means every voyage of the home) into one
// timeline, ordered by time, then by voyage id, then by sequence number:
// the same voyages always give the same transcript. Artifacts' storage
// events are left out (the observations that name them are in). A voyage
// that cannot be read (damaged) fails the transcript of every voyage, and
// of those ids name when it is one of them; a sub-voyage that cannot be
// read is not among the descendants, since its parent cannot be told.
func Read(ctx context.Context, h *helm.Home, ids []string, opts *Options) ([]Line, error) {
	if opts == nil {
		opts = &Options{}
	}
	voyages, err := voyagesOf(ctx, h, ids, opts.Descendants)
	if err != nil {
		return nil, err
	}
	var out []Line
	for _, info := range voyages {
		lines, err := voyageLines(ctx, h, info)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if (opts.Since.IsZero() || !l.At.Before(opts.Since)) && (opts.Who == "" || l.Who.Identity == opts.Who) {
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Line) int {
		return cmp.Or(a.At.Compare(b.At), strings.Compare(a.VoyageID, b.VoyageID), cmp.Compare(a.Seq, b.Seq))
	})
	return out, nil
}

// voyagesOf resolves ids (all voyages when none), with their descendants
// when asked. A voyage that cannot be read fails the transcript of all
// voyages, and of the voyages named when it is one of them; it is not
// found among the descendants, whose parent it cannot tell.
func voyagesOf(ctx context.Context, h *helm.Home, ids []string, descendants bool) ([]helm.VoyageInfo, error) {
	all, err := h.List(ctx, nil)
	var unreadable *helm.ListError
	if err != nil && (len(ids) == 0 || !errors.As(err, &unreadable)) {
		return nil, err
	}
	if len(ids) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, p := range ids {
		id, err := h.Resolve(ctx, p)
		if err != nil {
			return nil, &helm.VoyageError{Op: "transcript", Err: err}
		}
		if unreadable != nil {
			if i := slices.Index(unreadable.Voyages, id); i >= 0 {
				return nil, &helm.VoyageError{Op: "transcript", Voyage: id, Err: unreadable.Errs[i]}
			}
		}
		want[id] = true
	}
	for grew := descendants; grew; {
		grew = false
		for _, i := range all {
			if !want[i.ID] && want[i.Parent] {
				want[i.ID], grew = true, true
			}
		}
	}
	var out []helm.VoyageInfo
	for _, i := range all {
		if want[i.ID] {
			out = append(out, i)
		}
	}
	return out, nil
}

// voyageLines reads one voyage's events as transcript lines, folding
// them as they are read for the entry numbers and the links.
func voyageLines(ctx context.Context, h *helm.Home, info helm.VoyageInfo) ([]Line, error) {
	v, err := h.Voyage(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	var out []Line
	f := newFolder(info)
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return nil, err
		}
		l, ok, err := f.fold(&e)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l)
		}
	}
	// In a voyage written before numbers were stored, an action that
	// failed later took the numbers of the entries recorded meanwhile:
	// number the lines and links as the story shows them in the end.
	final := make(map[uint64]int, len(f.st.Entries)+len(f.st.FailedActions))
	for _, en := range f.st.FailedActions {
		final[en.Seq] = en.N
	}
	for _, en := range f.st.Entries {
		final[en.Seq] = en.N
	}
	for i := range out {
		l := &out[i]
		if n, ok := final[l.Seq]; ok && projection.IsEntry(l.Type) {
			l.N = n
		}
		for j := range l.Links {
			if n, ok := final[l.Links[j].Seq]; ok && l.Links[j].Entry != 0 {
				l.Links[j].Entry = n
			}
		}
	}
	return out, nil
}

// Follow yields the lines of voyage v from sequence number from (0 and 1
// mean every event), in order, with their entry numbers and links, and
// then the line of each event appended afterwards, by this handle,
// another one or another process, as it is appended: a viewer follows a
// voyage being recorded (see helm.Voyage.Follow). It waits until ctx is
// done, then yields ctx.Err() and ends; the caller may stop earlier by
// leaving its loop. Like Read, it leaves out artifacts' storage events.
//
// The lines of a voyage written before entry numbers were stored number
// an action that failed later as it was numbered when recorded; Read,
// which sees the whole voyage, numbers it as the story does in the end.
func Follow(ctx context.Context, v *helm.Voyage, from uint64) iter.Seq2[Line, error] {
	return func(yield func(Line, error) bool) {
		f := newFolder(v.Info())
		for e, err := range v.Follow(ctx, 1) {
			if err != nil {
				yield(Line{}, err)
				return
			}
			l, ok, err := f.fold(&e)
			if err != nil {
				yield(Line{}, err)
				return
			}
			if ok && e.Seq >= from && !yield(l, nil) {
				return
			}
		}
	}
}

// folder turns a voyage's events, read in order, into transcript lines:
// it folds them as they come, for the entry numbers and the links.
type folder struct {
	info     helm.VoyageInfo
	st       projection.State
	observed map[string]uint64 // slate key -> the Observed event that put it there
	bearings map[uint64]int    // BearingTaken seq -> entry number
	last     Link              // the last bearing
	intents  map[string]Link   // action id -> its intent
}

func newFolder(info helm.VoyageInfo) *folder {
	return &folder{info: info, observed: map[string]uint64{}, bearings: map[uint64]int{}, intents: map[string]Link{}}
}

// fold folds event e and returns its line; ok is false for the events a
// transcript leaves out (artifacts' storage).
func (f *folder) fold(e *helm.Event) (l Line, ok bool, err error) {
	seq := e.Seq
	if err := f.st.Apply(seq, e); err != nil {
		return Line{}, false, &helm.VoyageError{Op: "transcript", Voyage: f.info.ID, Err: err}
	}
	l = Line{VoyageID: f.info.ID, ParentID: f.info.Parent, Event: *e}
	switch e.Type {
	case projection.ArtifactStowed, projection.ArtifactReduced, projection.ArtifactJettisoned:
		return Line{}, false, nil
	case projection.Observed:
		f.observed[e.Obs.Key] = seq
	case projection.MarkErased:
		delete(f.observed, e.Key)
	case projection.SlateWiped:
		clear(f.observed)
	case projection.ReadingChallenged:
		l.Links = []Link{{Rel: LinkChallenges, Seq: e.Challenge.Bearing, Entry: f.bearings[e.Challenge.Bearing]}}
	}
	if projection.IsEntry(e.Type) {
		en := f.st.Entries[len(f.st.Entries)-1]
		l.N = en.N
		switch e.Type {
		case projection.BearingTaken:
			for _, o := range en.Bearing.Observations {
				l.Links = append(l.Links, Link{Rel: LinkSealed, Seq: f.observed[o.Key], Label: o.Label})
			}
			clear(f.observed)
			f.bearings[seq] = en.N
			f.last = Link{Rel: LinkFollowed, Seq: seq, Entry: en.N}
		case projection.ActionIntended, projection.ActionRefused:
			if f.last.Seq != 0 {
				l.Links = []Link{f.last}
			}
			f.intents[e.Action.ID] = Link{Rel: LinkOutcomeOf, Seq: seq, Entry: en.N}
			if n := e.Action.Undoes; n > 0 && n <= len(f.st.Entries) {
				l.Links = append(l.Links, Link{Rel: LinkUndoes, Seq: f.st.Entries[n-1].Seq, Entry: n})
			}
		}
	}
	if e.Type == projection.ActionPerformed || e.Type == projection.ActionFailed {
		if in, ok := f.intents[e.Action.ID]; ok {
			l.Links = []Link{in}
		}
	}
	return l, true, nil
}

// Describe renders a transcript line as one line of text: what happened,
// without who or when. Stored text is returned as it is: a printer
// escapes it for its terminal.
func (l *Line) Describe() string {
	e := &l.Event
	if payloadMissing(e) {
		return string(e.Type) // a line built by hand, without its payload
	}
	switch e.Type {
	case projection.VoyageStarted:
		s := "started: " + e.Voyage.Intent
		if e.Voyage.Parent != "" {
			s += " (sub-voyage of " + e.Voyage.Parent[:min(8, len(e.Voyage.Parent))] + ")"
		}
		return s
	case projection.VoyageCompleted:
		return string(e.Completion.Outcome) + ": " + e.Completion.Summary
	case projection.VoyageResumed:
		return "resumed: " + e.Resumption.Reason
	case projection.Observed:
		return "observed " + e.Obs.Label
	case projection.MarkErased:
		return "erased " + e.Key
	case projection.SlateWiped:
		return "wiped the slate"
	case projection.BearingTaken:
		return fmt.Sprintf("Bearing %d: %s", l.N, e.Bearing.Reading.Text)
	case projection.ReadingChallenged:
		entry := 0
		if len(l.Links) > 0 {
			entry = l.Links[0].Entry
		}
		return fmt.Sprintf("challenged bearing %d (%s): %s", entry, e.Challenge.Feedback, e.Challenge.Text)
	case projection.ActionIntended:
		s := fmt.Sprintf("Action %d: %s intended", l.N, e.Action.Kind)
		if e.Action.Why != "" {
			s += " (why: " + e.Action.Why + ")"
		}
		return s
	case projection.ActionPerformed, projection.ActionFailed:
		a := &logbook.ActionRecord{Kind: e.Action.Kind, Status: logbook.ActionPerformed, Result: e.Action.Result, Error: e.Action.Error}
		if e.Type == projection.ActionFailed {
			a.Status = logbook.ActionFailed
		}
		s := logbook.DescribeAction(a)
		if len(l.Links) > 0 {
			s = fmt.Sprintf("Action %d: %s", l.Links[0].Entry, s)
		}
		return s
	case projection.ActionRefused:
		a := *e.Action
		a.Status = logbook.ActionRefused
		return fmt.Sprintf("Action %d: %s", l.N, logbook.DescribeAction(&a))
	case projection.NoteAdded:
		return fmt.Sprintf("Note %d: %s", l.N, e.Note.Text)
	case projection.Judged:
		j := e.Judgement
		return fmt.Sprintf("Judgement %d: %s %d/10 (evidence: %s): %s", l.N, j.Dimension, j.Score, logbook.JoinNumbers(j.Evidence), j.Text)
	case projection.StepRecorded:
		return fmt.Sprintf("Step %d: %s", l.N, strings.Join(logbook.DescribeStep(e.Step), "; "))
	case projection.StepFinished:
		// The call's own line is its entry's; this one says how it ended.
		return fmt.Sprintf("%s call %s finished: %s", e.Step.Agent, e.Step.ID, strings.Join(logbook.DescribeStep(e.Step)[1:], "; "))
	}
	return string(e.Type)
}

// Write writes lines as text, one line each: time, voyage (its id's first
// 8 characters), identity (role), and what happened with its links: an
// action names the bearing it followed, a bearing the observations it
// sealed. Stored text is escaped so that it cannot drive a terminal.
func Write(w io.Writer, lines []Line) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i := range lines {
		l := &lines[i]
		by := l.Who.Identity
		if l.Who.Role != "" {
			by += " (" + l.Who.Role + ")"
		}
		text := l.Describe()
		var sealed []string
		for _, k := range l.Links {
			switch k.Rel {
			case LinkFollowed:
				text += fmt.Sprintf(" [after bearing %d]", k.Entry)
			case LinkSealed:
				sealed = append(sealed, k.Label)
			}
		}
		if len(sealed) > 0 {
			text += " [sealed: " + strings.Join(sealed, "; ") + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.At.UTC().Format(time.RFC3339), l.VoyageID[:min(8, len(l.VoyageID))],
			safetext.Line(by), safetext.Line(text))
	}
	return tw.Flush()
}

// payloadMissing reports whether e lacks the payload its type carries.
func payloadMissing(e *helm.Event) bool {
	switch e.Type {
	case projection.VoyageStarted:
		return e.Voyage == nil
	case projection.VoyageCompleted:
		return e.Completion == nil
	case projection.VoyageResumed:
		return e.Resumption == nil
	case projection.Observed:
		return e.Obs == nil
	case projection.BearingTaken:
		return e.Bearing == nil
	case projection.ReadingChallenged:
		return e.Challenge == nil
	case projection.ActionIntended, projection.ActionPerformed, projection.ActionFailed, projection.ActionRefused:
		return e.Action == nil
	case projection.NoteAdded:
		return e.Note == nil
	case projection.Judged:
		return e.Judgement == nil
	case projection.StepRecorded, projection.StepFinished:
		return e.Step == nil
	}
	return false
}
