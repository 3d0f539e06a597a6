// Package report summarises a voyage: what it set out to do, who took
// part, what it found and did, what changed in the repository, how it
// was judged, and its sub-voyages (Of). WriteMarkdown renders the summary
// for a pull request's description; its JSON form is stable. The story
// (package story) tells every entry; the report summarises.
//
// It reads voyages through the root package's public API only, and
// reading never writes.
package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/markdown"
	"github.com/helmlog/helm/logbook"
)

// Report summarises a voyage: its description and lifecycle, its crew,
// its bearings with their readings, its actions with what they left in
// the world, the files changed between the commit it started from and its
// last commit, its notes, its judgements and its sub-voyages. Build one
// with Of; WriteMarkdown renders it for a pull request. Its JSON form is
// stable.
type Report struct {
	// Voyage describes the voyage, its lifecycle included.
	Voyage helm.VoyageInfo `json:"voyage"`
	// Head is where the voyage's tamper-evident chain stood when the
	// report was made (Voyage.Head): pasted in a pull request with the
	// report, a witness of every record up to it.
	Head chain.Head `json:"head"`
	// Ended is when the voyage was last completed, or, while it is
	// active (Ongoing), the time of its last event.
	Ended   time.Time `json:"ended"`
	Ongoing bool      `json:"ongoing,omitempty"`
	// DurationSeconds is from its start to Ended, in whole seconds.
	DurationSeconds int64 `json:"duration_seconds"`
	// Crew is who took part: every identity that recorded an event, with
	// the roles and methods it recorded them in and its entries.
	Crew     []CrewMember `json:"crew"`
	Bearings []Bearing    `json:"bearings"`
	// Actions lists every action of the story, in order, whatever its
	// status (performed, failed, refused or outcome unknown); then those
	// an older helm took out of the story when they failed (Legacy).
	Actions    []Action    `json:"actions"`
	Notes      []Note      `json:"notes"`
	Judgements []Judgement `json:"judgements"`
	// Diff is what changed in the repository between the voyage's base
	// commit and its last commit.
	Diff Diff `json:"diff"`
	// SubVoyages are the voyages started with this one as their parent.
	SubVoyages []SubVoyage `json:"sub_voyages"`
	// Agents sums the steps agent hosts reported (helm.Voyage.Step): the
	// prompts, the tool calls and those denied or failed, and what they
	// cost; zero when none did.
	Agents logbook.StepStats `json:"agents,omitzero"`
	// Unreadable lists the voyages of the home that could not be read
	// while looking for sub-voyages: any of them may be one.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Duration is how long the voyage took: from its start to Ended.
func (r *Report) Duration() time.Duration { return time.Duration(r.DurationSeconds) * time.Second }

// CrewMember is one identity of a voyage's crew: the roles and methods it
// recorded entries and changes in, and how many entries of each kind.
type CrewMember struct {
	Identity   string   `json:"identity"`
	Roles      []string `json:"roles"`
	Methods    []string `json:"methods"`
	Entries    int      `json:"entries"`
	Bearings   int      `json:"bearings"`
	Actions    int      `json:"actions"`
	Notes      int      `json:"notes"`
	Judgements int      `json:"judgements"`
}

// Bearing is a bearing as the report tells it: what was looked at (the
// marks' labels and keys) and the reading, with the challenged attempts
// before it.
type Bearing struct {
	N       int             `json:"n"`
	At      time.Time       `json:"at"`
	Who     logbook.Who     `json:"who"`
	Marks   []string        `json:"marks"`
	Keys    []string        `json:"keys"`
	Reading logbook.Reading `json:"reading"`
}

// Action is an action as the report tells it. Description is the story's
// line for it ("created PR #45"); Result is what it left in the world
// (commit, pushed branch, pull request number and link, ...).
type Action struct {
	N           int                   `json:"n"`
	At          time.Time             `json:"at"`
	Who         logbook.Who           `json:"who"`
	Kind        string                `json:"kind"`
	Status      logbook.ActionStatus  `json:"status"`
	Description string                `json:"description"`
	Why         string                `json:"why,omitempty"`
	Result      *logbook.ActionResult `json:"result,omitempty"`
	Error       string                `json:"error,omitempty"`
	Rule        string                `json:"rule,omitempty"`
	// Legacy marks an action that failed before entry numbers were
	// stored: an older helm took it out of the story, and N is the number
	// it was shown with then (helm.EntriesOptions.OutsideStory).
	Legacy bool `json:"legacy,omitempty"`
	// Undoes is the entry this action takes back, UndoneBy the one that
	// took this action back (0: none).
	Undoes   int `json:"undoes,omitempty"`
	UndoneBy int `json:"undone_by,omitempty"`
}

// Succeeded reports whether the action was performed.
func (a *Action) Succeeded() bool { return a.Status == logbook.ActionPerformed }

// Note is a note as the report tells it.
type Note struct {
	N    int         `json:"n"`
	At   time.Time   `json:"at"`
	Who  logbook.Who `json:"who"`
	Text string      `json:"text"`
}

// Judgement is a judgement as the report tells it: the judge (Who), the
// score on its dimension, the entries cited and what the judge said.
type Judgement struct {
	N         int         `json:"n"`
	At        time.Time   `json:"at"`
	Who       logbook.Who `json:"who"`
	Dimension string      `json:"dimension"`
	Score     int         `json:"score"`
	Evidence  []int       `json:"evidence"`
	Text      string      `json:"text"`
}

// SubVoyage is a voyage started with the reported one as its parent.
type SubVoyage struct {
	ID       string         `json:"id"`
	Intent   string         `json:"intent"`
	Status   logbook.Status `json:"status"`
	Identity string         `json:"identity"`
	Crew     []string       `json:"crew,omitempty"`
}

// FileChange is one file changed between two commits: the lines added
// and deleted, or Binary (git counts no lines in a binary file); From is
// the path it was renamed from, if it was.
type FileChange struct {
	Path    string `json:"path"`
	From    string `json:"from,omitempty"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Diff is what changed in the repository over a voyage: the files that
// differ between Base, the commit checked out when the voyage started,
// and Head, its last commit (that of its last commit or push action, or
// of the undo of a commit), with the lines added and deleted in all.
// Missing says, when Files is not known, why.
type Diff struct {
	Base    string       `json:"base,omitempty"`
	Head    string       `json:"head,omitempty"`
	Files   []FileChange `json:"files"`
	Added   int          `json:"added"`
	Deleted int          `json:"deleted"`
	Missing string       `json:"missing,omitempty"`
}

// Options tune Of. Nil is the zero Options.
type Options struct {
	// DiffStat lists the files changed between commits base and head of
	// the repository whose top directory is dir (the voyage's recorded
	// directory, which may no longer exist). The voyage knows no git: a
	// caller passes one backed by git (package runner's Runner.DiffStat
	// counts the files as git does). Nil leaves the files out, and the
	// report says so.
	DiffStat func(ctx context.Context, dir, base, head string) ([]FileChange, error)
}

// Why a report lists no files.
const (
	missingBase     = "no base commit recorded: the voyage did not start in a git repository (or the repository had no commit yet)"
	missingHead     = "no commit recorded: the voyage performed no commit or push"
	missingDiffStat = "the files were not compared: no DiffStat was given"
)

// Of summarises the voyage id (an id or an unambiguous prefix) of home
// h. It reads the voyage's views, and lists the home's voyages for its
// sub-voyages: a voyage of the home that cannot be read is named in the
// report (Unreadable) rather than failing it. The files changed come from
// opts.DiffStat: when it fails, the report says why there is no list
// (Diff.Missing) and carries the rest. Reading never writes.
func Of(ctx context.Context, h *helm.Home, id string, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	info := v.Info()
	head, herr := v.Head(ctx)
	entries, legacy, err := entriesOf(ctx, v)
	if err == nil {
		err = herr
	}
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	r := build(info, entries, legacy)
	r.Head = head

	all, err := h.List(ctx, nil)
	var unreadable *helm.ListError
	if err != nil && !errors.As(err, &unreadable) {
		return nil, &helm.VoyageError{Op: "report", Voyage: info.ID, Err: fmt.Errorf("list the home's voyages for sub-voyages: %w", err)}
	}
	if unreadable != nil {
		r.Unreadable = slices.Clone(unreadable.Voyages)
	}
	for _, s := range all {
		if s.Parent == info.ID {
			r.SubVoyages = append(r.SubVoyages, SubVoyage{ID: s.ID, Intent: s.Intent, Status: s.Status, Identity: s.Identity, Crew: s.Crew})
		}
	}

	d := &r.Diff
	switch {
	case d.Base == "":
		d.Missing = missingBase
	case d.Head == "":
		d.Missing = missingHead
	case opts.DiffStat == nil:
		d.Missing = missingDiffStat
	default:
		files, err := opts.DiffStat(ctx, info.Dir, d.Base, d.Head)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &helm.VoyageError{Op: "report", Voyage: info.ID, Err: err}
			}
			d.Missing = "the files could not be compared: " + err.Error()
			break
		}
		d.Files = files
		for _, f := range files {
			d.Added += f.Added
			d.Deleted += f.Deleted
		}
	}
	if d.Files == nil {
		d.Files = []FileChange{}
	}
	return r, nil
}

// entriesOf reads the story's entries of v, and the failed actions an
// older helm took out of it: both whole, or the error that stopped the
// reading (a report never summarises a story cut short).
func entriesOf(ctx context.Context, v *helm.Voyage) (entries, legacy []logbook.Entry, err error) {
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	for e, err := range v.Entries(ctx, &helm.EntriesOptions{OutsideStory: true}) {
		if err != nil {
			return nil, nil, err
		}
		legacy = append(legacy, e)
	}
	return entries, legacy, nil
}

// build makes the report of the voyage info describes from its entries
// and the actions an older helm took out of its story (legacy), all but
// its sub-voyages and its files changed (whose Base and Head it sets).
func build(info helm.VoyageInfo, entries, legacy []logbook.Entry) *Report {
	r := &Report{
		Voyage: info, Bearings: []Bearing{}, Actions: []Action{}, Notes: []Note{},
		Judgements: []Judgement{}, SubVoyages: []SubVoyage{},
		Diff: Diff{Base: info.Base},
	}
	r.Ended, r.Ongoing = info.CompletedAt, false
	if info.Status == logbook.StatusActive || info.CompletedAt.IsZero() {
		r.Ended, r.Ongoing = info.LastAt, true
	}
	if r.Ended.After(info.Created) {
		r.DurationSeconds = int64(r.Ended.Sub(info.Created) / time.Second)
	}

	crew := map[string]*CrewMember{}
	member := func(w logbook.Who) *CrewMember {
		if w.Identity == "" {
			return nil
		}
		m, ok := crew[w.Identity]
		if !ok {
			m = &CrewMember{Identity: w.Identity, Roles: []string{}, Methods: []string{}}
			crew[w.Identity] = m
		}
		if w.Role != "" && !slices.Contains(m.Roles, w.Role) {
			m.Roles = append(m.Roles, w.Role)
		}
		if w.Method != "" && !slices.Contains(m.Methods, w.Method) {
			m.Methods = append(m.Methods, w.Method)
		}
		return m
	}
	for _, id := range info.Crew {
		member(logbook.Who{Identity: id})
	}
	for _, t := range info.Lifecycle {
		member(t.Who)
	}

	action := func(e logbook.Entry, legacy bool) Action {
		a := e.Action
		return Action{
			N: e.N, At: e.At, Who: e.Who, Kind: a.Kind, Status: a.Status, Description: logbook.DescribeAction(a),
			Why: a.Why, Result: a.Result, Error: a.Error, Rule: a.Rule, Legacy: legacy, Undoes: a.Undoes, UndoneBy: a.UndoneBy,
		}
	}
	for _, e := range entries {
		m := member(e.Who)
		if m != nil {
			m.Entries++
		}
		switch {
		case e.Bearing != nil:
			b := Bearing{N: e.N, At: e.At, Who: e.Who, Marks: []string{}, Keys: []string{}, Reading: e.Bearing.Reading}
			for _, o := range e.Bearing.Observations {
				b.Marks = append(b.Marks, o.Label)
				b.Keys = append(b.Keys, o.Key)
				member(o.ObservedBy)
			}
			for _, h := range e.Bearing.Reading.History {
				member(h.ChallengedBy)
			}
			r.Bearings = append(r.Bearings, b)
			if m != nil {
				m.Bearings++
			}
		case e.Action != nil:
			r.Actions = append(r.Actions, action(e, false))
			if m != nil {
				m.Actions++
			}
			if a := e.Action; a.Status == logbook.ActionPerformed && a.Result != nil && a.Result.SHA != "" && actions.MovesHead(a.Kind) {
				r.Diff.Head = a.Result.SHA
			}
		case e.Step != nil:
			r.Agents.Add(e.Step)
		case e.Note != nil:
			r.Notes = append(r.Notes, Note{N: e.N, At: e.At, Who: e.Who, Text: e.Note.Text})
			if m != nil {
				m.Notes++
			}
		case e.Judgement != nil:
			j := e.Judgement
			r.Judgements = append(r.Judgements, Judgement{N: e.N, At: e.At, Who: e.Who, Dimension: j.Dimension, Score: j.Score,
				Evidence: slices.Clone(j.Evidence), Text: j.Text})
			if m != nil {
				m.Judgements++
			}
		}
	}
	for _, e := range legacy {
		if e.Action != nil {
			r.Actions = append(r.Actions, action(e, true))
		}
	}

	r.Crew = make([]CrewMember, 0, len(crew))
	for _, m := range crew {
		slices.Sort(m.Roles)
		slices.Sort(m.Methods)
		r.Crew = append(r.Crew, *m)
	}
	// The voyage's own identity first, then the others by name.
	slices.SortFunc(r.Crew, func(a, b CrewMember) int {
		return cmp.Or(cmp.Compare(boolRank(a.Identity != info.Identity), boolRank(b.Identity != info.Identity)), strings.Compare(a.Identity, b.Identity))
	})
	return r
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteMarkdown renders the report as GitHub-flavoured markdown, to paste
// into a pull request: the voyage, its crew and lifecycle, the files
// changed, its bearings, actions (with links to what they made), the
// failed and refused ones apart, notes, judgements and sub-voyages.
//
// Every stored text (an intent, a reading, a file name, an error) is
// escaped so that it reads as written and cannot change the document's
// structure: markdown's punctuation is backslash-escaped, so a pipe
// cannot end a table cell, a leading # cannot make a heading nor < an
// HTML tag; line breaks in a one-line field become spaces, and control
// characters visible escapes. Only links to http(s) addresses are made.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	info := r.Voyage
	fmt.Fprintf(&b, "## Voyage report: %s\n\n", markdown.Heading(info.Intent))

	fmt.Fprintf(&b, "- **Voyage:** `%s` (%s)\n", markdown.Code(info.ID), markdown.Inline(string(info.Kind)))
	fmt.Fprintf(&b, "- **Head:** `%s`\n", r.Head)
	status := markdown.Inline(string(info.Status))
	if info.Summary != "" && info.Status != logbook.StatusActive {
		status += " — " + markdown.Inline(info.Summary)
	}
	fmt.Fprintf(&b, "- **Status:** %s\n", status)
	if repo := markdown.Repository(info.Repo, info.Branch, info.Base); repo != "" {
		fmt.Fprintf(&b, "- **Repository:** %s\n", repo)
	}
	if info.Parent != "" {
		fmt.Fprintf(&b, "- **Part of:** voyage `%s`\n", markdown.Code(info.Parent))
	}
	fmt.Fprintf(&b, "- **Started:** %s by %s\n", stamp(info.Created), markdown.Inline(info.Identity))
	if a := r.Agents; a != (logbook.StepStats{}) {
		fmt.Fprintf(&b, "- **Agent steps:** %s, %s (%d denied, %d failed); %d input, %d output, %d cache tokens; $%.4f\n",
			countWord(a.Prompts, "prompt"), countWord(a.ToolCalls, "tool call"), a.DeniedCalls, a.FailedCalls,
			a.InputTokens, a.OutputTokens, a.CacheReadTokens+a.CacheWriteTokens, a.CostUSD)
	}
	switch {
	case r.Ongoing:
		fmt.Fprintf(&b, "- **Last event:** %s (%s so far)\n", stamp(r.Ended), humanDuration(r.Duration()))
	case info.Status.Resumable():
		fmt.Fprintf(&b, "- **Stopped:** %s (%s so far)\n", stamp(r.Ended), humanDuration(r.Duration()))
	default:
		fmt.Fprintf(&b, "- **Ended:** %s (%s)\n", stamp(r.Ended), humanDuration(r.Duration()))
	}

	b.WriteString("\n### Crew\n\n| Identity | Roles | Methods | Entries |\n|---|---|---|---:|\n")
	for _, m := range r.Crew {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", markdown.Inline(m.Identity), markdown.Join(m.Roles), markdown.Join(m.Methods), crewCounts(m))
	}

	if len(info.Lifecycle) > 0 {
		b.WriteString("\n### Lifecycle\n\n")
		for i, t := range info.Lifecycle {
			word := string(t.Status)
			switch {
			case i == 0:
				word = "started"
			case t.Status == logbook.StatusActive:
				word = "resumed"
			}
			fmt.Fprintf(&b, "- %s %s by %s", stamp(t.At), markdown.Inline(word), markdown.Inline(t.Who.Identity))
			if t.Reason != "" {
				fmt.Fprintf(&b, ": %s", markdown.Inline(t.Reason))
			}
			b.WriteString("\n")
		}
	}

	b.WriteString("\n### Files changed\n\n")
	d := r.Diff
	switch {
	case d.Missing != "":
		fmt.Fprintf(&b, "No file list: %s.\n", markdown.Inline(strings.TrimSuffix(d.Missing, ".")))
	case len(d.Files) == 0:
		fmt.Fprintf(&b, "No file differs between base `%s` and `%s`.\n", markdown.Code(markdown.ShortSHA(d.Base)), markdown.Code(markdown.ShortSHA(d.Head)))
	default:
		fmt.Fprintf(&b, "Between base `%s` and `%s`: %s, +%d −%d.\n\n", markdown.Code(markdown.ShortSHA(d.Base)), markdown.Code(markdown.ShortSHA(d.Head)),
			countWord(len(d.Files), "file"), d.Added, d.Deleted)
		b.WriteString("| File | + | − |\n|---|---:|---:|\n")
		for _, f := range d.Files {
			name := markdown.Inline(f.Path)
			if f.From != "" {
				name = markdown.Inline(f.From) + " → " + name
			}
			if f.Binary {
				fmt.Fprintf(&b, "| %s | binary | binary |\n", name)
			} else {
				fmt.Fprintf(&b, "| %s | %d | %d |\n", name, f.Added, f.Deleted)
			}
		}
	}

	if len(r.Bearings) > 0 {
		b.WriteString("\n### Bearings\n")
		for _, e := range r.Bearings {
			fmt.Fprintf(&b, "\n**Bearing %d** · %s%s", e.N, stamp(e.At), mdBy(e.Who, info.Identity))
			if len(e.Marks) > 0 {
				marks := make([]string, len(e.Marks))
				for i, m := range e.Marks {
					marks[i] = markdown.Inline(m)
				}
				fmt.Fprintf(&b, "\\\nMarks: %s", strings.Join(marks, "; "))
			}
			b.WriteString("\n\n")
			markdown.Quote(&b, e.Reading.Text)
			if n := len(e.Reading.History); n > 0 {
				feedback := make([]string, n)
				for i, h := range e.Reading.History {
					feedback[i] = "“" + markdown.Inline(h.ChallengedWith) + "”"
				}
				fmt.Fprintf(&b, "\n(challenged %d×: %s)\n", n, strings.Join(feedback, "; "))
			}
		}
	}

	var performed, troubled []Action
	for _, a := range r.Actions {
		if a.Succeeded() {
			performed = append(performed, a)
		} else {
			troubled = append(troubled, a)
		}
	}
	if len(performed) > 0 {
		b.WriteString("\n### Actions\n\n")
		for _, a := range performed {
			fmt.Fprintf(&b, "- **Action %d** · %s", a.N, markdown.Inline(a.Description))
			if a.Result != nil {
				if link := markdown.Link(a.Result.URL); link != "" {
					b.WriteString(" — " + link)
				}
				if a.Result.SHA != "" && !actions.MovesHead(a.Kind) { // their line names it
					fmt.Fprintf(&b, " (`%s`)", markdown.Code(markdown.ShortSHA(a.Result.SHA)))
				}
			}
			b.WriteString(mdBy(a.Who, info.Identity))
			if a.Why != "" {
				fmt.Fprintf(&b, "\\\n  Why: %s", markdown.Inline(a.Why))
			}
			b.WriteString("\n")
		}
	}
	if len(troubled) > 0 {
		b.WriteString("\n### Failed or refused actions\n\n")
		for _, a := range troubled {
			fmt.Fprintf(&b, "- **Action %d** · %s%s", a.N, markdown.Inline(a.Description), mdBy(a.Who, info.Identity))
			if a.Legacy {
				b.WriteString(" (taken out of the story by an older helm)")
			}
			if a.Why != "" {
				fmt.Fprintf(&b, "\\\n  Why: %s", markdown.Inline(a.Why))
			}
			b.WriteString("\n")
		}
	}

	if len(r.Notes) > 0 {
		b.WriteString("\n### Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- **Note %d** · %s%s: %s\n", n.N, stamp(n.At), mdBy(n.Who, info.Identity), markdown.Inline(n.Text))
		}
	}

	if len(r.Judgements) > 0 {
		b.WriteString("\n### Judgements\n\n| Entry | Judge | Dimension | Score | Evidence | Says |\n|---:|---|---|---:|---|---|\n")
		for _, j := range r.Judgements {
			judge := markdown.Inline(j.Who.Identity)
			if j.Who.Role != "" {
				judge += " (" + markdown.Inline(j.Who.Role) + ")"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %d/10 | %s | %s |\n", j.N, judge, markdown.Inline(j.Dimension), j.Score, logbook.JoinNumbers(j.Evidence), markdown.Inline(j.Text))
		}
	}

	if len(r.SubVoyages) > 0 || len(r.Unreadable) > 0 {
		b.WriteString("\n### Sub-voyages\n\n")
		for _, s := range r.SubVoyages {
			fmt.Fprintf(&b, "- `%s` %s — %s, by %s\n", markdown.Code(shortID(s.ID)), markdown.Inline(s.Intent), markdown.Inline(string(s.Status)), markdown.Inline(s.Identity))
		}
		for _, id := range r.Unreadable {
			fmt.Fprintf(&b, "- `%s` could not be read: it may be a sub-voyage\n", markdown.Code(id))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// crewCounts renders "5 (2 bearings, 3 actions)".
func crewCounts(m CrewMember) string {
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{m.Bearings, "bearing"}, {m.Actions, "action"}, {m.Notes, "note"}, {m.Judgements, "judgement"}} {
		if c.n > 0 {
			parts = append(parts, countWord(c.n, c.word))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprint(m.Entries)
	}
	return fmt.Sprintf("%d (%s)", m.Entries, strings.Join(parts, ", "))
}

func countWord(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// humanDuration renders a duration for people: "2d 3h", "1h 30m", "45s".
func humanDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d <= 0 {
		return "0s"
	}
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	var parts []string
	for _, u := range units {
		if n := d / u.d; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
			d -= n * u.d
		}
		if len(parts) == 2 {
			break
		}
	}
	return strings.Join(parts, " ")
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// mdBy names who recorded an entry when it was not the voyage's
// identity: " · bob (reviewer)".
func mdBy(w logbook.Who, owner string) string {
	if by := logbook.ByLine(w, owner); by != "" {
		return " · " + markdown.Inline(by)
	}
	return ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
