// Package story tells the whole story of a voyage, every entry of it,
// for people: as text for a terminal (WriteText, what helm's log prints),
// as markdown to paste into a pull request or an issue (WriteMarkdown),
// and as one self-contained HTML page with a timeline (WriteHTML). Where
// package report summarises, these tell each bearing with the
// observations it sealed and the history of its reading, each action with
// its parameters, result and links, every note and judgement, the
// lifecycle, and what is left on the slate.
//
// Every stored text is escaped for where it is shown: it reads as written
// and cannot drive a terminal nor change the document's structure. Each
// function first reads the events other handles and processes appended
// (helm.Voyage.Refresh); it reads through the root package's public API
// only, and writes nothing but w.
package story

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/markdown"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// WriteText writes the story as a person reads it in a terminal: the
// voyage (its intent, identity, status, and its lifecycle once it was
// resumed), then each entry in order: a bearing with its marks and
// reading, an action with what it did, a note, a judgement. Stored text
// is escaped so that it cannot drive a terminal (see logbook.WriteStory).
func WriteText(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	if err := v.Refresh(ctx); err != nil {
		return err
	}
	info := v.Info()
	h := logbook.Header{
		Intent: info.Intent, Identity: info.Identity, Current: info.CurrentIdentity, Created: info.Created,
		Status: info.Status, CompletedAt: info.CompletedAt,
		Outcome: info.Outcome, Summary: info.Summary,
	}
	for _, t := range info.Lifecycle {
		h.Lifecycle = append(h.Lifecycle, logbook.Change(t))
	}
	entries, err := collect(v.Entries(ctx, nil))
	if err != nil {
		return err
	}
	return logbook.WriteStory(w, h, entries)
}

// storyDoc is what both documents tell, read from the views at once.
type storyDoc struct {
	Info helm.VoyageInfo
	// Head is where the voyage's chain stands after the events told
	// (Voyage.Head): a witness of them, for whoever holds the document.
	Head    chain.Head
	Entries []logbook.Entry
	// Legacy are the actions an older helm took out of the story when
	// they failed (Entries outside the story).
	Legacy []logbook.Entry
	Slate  []logbook.ObservationRecord
	// Artifacts describes the artifacts the observations name, by hash
	// (those the voyage holds).
	Artifacts map[string]helm.ArtifactInfo
}

// docOf reads the views the documents are made of, after the events
// other writers appended.
func docOf(ctx context.Context, v *helm.Voyage) (*storyDoc, error) {
	if err := v.Refresh(ctx); err != nil {
		return nil, err
	}
	d := &storyDoc{Info: v.Info(), Slate: v.Slate(), Artifacts: map[string]helm.ArtifactInfo{}}
	var err error
	if d.Head, err = v.Head(ctx); err != nil {
		return nil, err
	}
	if d.Entries, err = collect(v.Entries(ctx, nil)); err != nil {
		return nil, err
	}
	if d.Legacy, err = collect(v.Entries(ctx, &helm.EntriesOptions{OutsideStory: true})); err != nil {
		return nil, err
	}
	gone := 0
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		d.Artifacts[a.Hash] = a
		if a.Status != logbook.ArtifactStowed {
			gone++
		}
	}
	if gone > 0 {
		if err := d.curators(ctx, v); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// curators notes who jettisoned or reduced each artifact that is, and
// when, from one read of the voyage's events (the index keeps neither).
func (d *storyDoc) curators(ctx context.Context, v *helm.Voyage) error {
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return err
		}
		if e.Artifact == nil {
			continue
		}
		hash := e.Artifact.Hash
		switch e.Type {
		case projection.ArtifactReduced:
			hash = e.Artifact.DerivedFrom
		case projection.ArtifactJettisoned:
		default:
			continue
		}
		if a, ok := d.Artifacts[hash]; ok && a.Status != logbook.ArtifactStowed {
			a.CuratedBy, a.CuratedAt = &e.Who, e.At
			d.Artifacts[hash] = a
		}
	}
	return nil
}

// collect gathers what seq yields, up to its first error: a document is
// told whole or not at all, never cut short.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for x, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// whoLine renders who recorded something: "bob (reviewer, human)".
func whoLine(w logbook.Who) string {
	var parts []string
	for _, s := range []string{w.Role, w.Method} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return w.Identity
	}
	return w.Identity + " (" + strings.Join(parts, ", ") + ")"
}

// actionParam is one parameter of an action, as it was recorded.
type actionParam struct {
	Key, Value string
}

// actionParams lists an action's recorded parameters in their order: a
// string as it is, anything else as compact JSON.
func actionParams(raw json.RawMessage) []actionParam {
	var out []actionParam
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return out
		}
		var s string
		if json.Unmarshal(val, &s) != nil {
			var b bytes.Buffer
			if json.Compact(&b, val) == nil {
				s = b.String()
			} else {
				s = string(val)
			}
		}
		out = append(out, actionParam{key, s})
	}
	return out
}

// resultParams lists what an action left in the world, by name.
func resultParams(r *logbook.ActionResult) []actionParam {
	if r == nil {
		return nil
	}
	var out []actionParam
	add := func(k, v string) {
		if v != "" {
			out = append(out, actionParam{k, v})
		}
	}
	add("commit", r.SHA)
	add("branch", r.Branch)
	if r.Number != 0 {
		add("number", fmt.Sprintf("#%d", r.Number))
	}
	if r.CommentID != 0 {
		add("comment", fmt.Sprint(r.CommentID))
	}
	add("reviewers", strings.Join(r.Reviewers, ", "))
	return out
}

// lifecycleWord is what the documents call a change of status.
func lifecycleWord(i int, t helm.Transition) string {
	switch {
	case i == 0:
		return "started"
	case t.Status == logbook.StatusActive:
		return "resumed"
	}
	return string(t.Status)
}

// WriteMarkdown writes the voyage's whole story as markdown, for a pull
// request or an issue: its description and lifecycle, then every entry in
// order with who recorded it (identity, role, method) — each bearing with
// the observations it sealed, its reading and the challenged readings
// before it; each action with its parameters, status, result and links;
// every note and judgement — then the failed actions an older helm took
// out of the story, and the observations left on the slate.
//
// Stored text is escaped as report.Report.WriteMarkdown escapes it: it
// reads as written and cannot change the document's structure.
func WriteMarkdown(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	d, err := docOf(ctx, v)
	if err != nil {
		return err
	}
	var b strings.Builder
	d.writeMarkdown(&b)
	_, err = io.WriteString(w, b.String())
	return err
}

func (d *storyDoc) writeMarkdown(b *strings.Builder) {
	info := d.Info
	fmt.Fprintf(b, "# Voyage: %s\n\n", markdown.Heading(info.Intent))
	fmt.Fprintf(b, "- **Voyage:** `%s` (%s)\n", markdown.Code(info.ID), markdown.Inline(string(info.Kind)))
	fmt.Fprintf(b, "- **Head:** `%s`\n", d.Head)
	fmt.Fprintf(b, "- **Identity:** %s\n", markdown.Inline(info.Identity))
	status := markdown.Inline(string(info.Status))
	if !info.CompletedAt.IsZero() && info.Status != logbook.StatusActive {
		status += " (" + stamp(info.CompletedAt) + ")"
	}
	fmt.Fprintf(b, "- **Status:** %s\n", status)
	if info.Summary != "" && info.Status != logbook.StatusActive {
		fmt.Fprintf(b, "- **Summary:** %s\n", markdown.Inline(info.Summary))
	}
	fmt.Fprintf(b, "- **Created:** %s\n", stamp(info.Created))
	if repo := markdown.Repository(info.Repo, info.Branch, info.Base); repo != "" {
		fmt.Fprintf(b, "- **Repository:** %s\n", repo)
	}
	if info.Parent != "" {
		fmt.Fprintf(b, "- **Part of:** voyage `%s`\n", markdown.Code(info.Parent))
	}
	if len(info.Crew) > 0 {
		fmt.Fprintf(b, "- **Crew:** %s\n", markdown.Join(info.Crew))
	}

	if len(info.Lifecycle) > 0 {
		b.WriteString("\n## Lifecycle\n\n")
		for i, t := range info.Lifecycle {
			fmt.Fprintf(b, "- %s %s by %s", stamp(t.At), markdown.Inline(lifecycleWord(i, t)), markdown.Inline(whoLine(t.Who)))
			if t.Reason != "" {
				fmt.Fprintf(b, ": %s", markdown.Inline(t.Reason))
			}
			b.WriteString("\n")
		}
	}

	b.WriteString("\n## Logbook\n")
	if len(d.Entries) == 0 {
		b.WriteString("\nNo entries yet.\n")
	}
	for _, e := range d.Entries {
		d.writeMarkdownEntry(b, e)
	}
	if len(d.Legacy) > 0 {
		b.WriteString("\n## Failed actions taken out of the story\n\nAn older helm took these actions out of the story when they failed; they keep the numbers they were shown with.\n")
		for _, e := range d.Legacy {
			d.writeMarkdownEntry(b, e)
		}
	}
	if len(d.Slate) > 0 {
		b.WriteString("\n## Slate\n\nObservations no bearing has sealed yet:\n\n")
		for _, o := range d.Slate {
			d.writeMarkdownObservation(b, o)
		}
	}
}

func (d *storyDoc) writeMarkdownEntry(b *strings.Builder, e logbook.Entry) {
	fmt.Fprintf(b, "\n### %s %d · %s · %s\n\n", logbook.Title(e.Kind), e.N, stamp(e.At), markdown.Inline(whoLine(e.Who)))
	switch e.Kind {
	case logbook.EntryBearing:
		bg := e.Bearing
		if len(bg.Observations) > 0 {
			b.WriteString("Sealed observations:\n\n")
			for _, o := range bg.Observations {
				d.writeMarkdownObservation(b, o)
			}
			b.WriteString("\n")
		}
		b.WriteString("Reading:\n\n")
		markdown.Quote(b, bg.Reading.Text)
		if n := len(bg.Reading.History); n > 0 {
			fmt.Fprintf(b, "\nChallenged %d×, oldest first:\n", n)
			for i, h := range bg.Reading.History {
				fmt.Fprintf(b, "\n%d. %s by %s: “%s” The reading was:\n\n", i+1, stamp(h.ChallengedAt), markdown.Inline(whoLine(h.ChallengedBy)), markdown.Inline(h.ChallengedWith))
				var q strings.Builder
				markdown.Quote(&q, h.Text)
				for _, line := range strings.SplitAfter(strings.TrimSuffix(q.String(), "\n"), "\n") {
					b.WriteString("   " + line)
				}
				b.WriteString("\n")
			}
		}
	case logbook.EntryAction:
		a := e.Action
		fmt.Fprintf(b, "%s — %s", markdown.Inline(logbook.DescribeAction(a)), markdown.Inline(string(a.Status)))
		if !a.DoneAt.IsZero() {
			fmt.Fprintf(b, " at %s", stamp(a.DoneAt))
		}
		b.WriteString("\n")
		var items []string
		for _, p := range actionParams(a.Params) {
			items = append(items, markdown.Inline(p.Key+": "+p.Value))
		}
		if a.Why != "" {
			items = append(items, "why: "+markdown.Inline(a.Why))
		}
		for _, p := range resultParams(a.Result) {
			items = append(items, markdown.Inline(p.Key+": "+p.Value))
		}
		if a.Result != nil {
			if link := markdown.Link(a.Result.URL); link != "" {
				items = append(items, "link: "+link)
			}
		}
		if a.Rule != "" {
			items = append(items, "rule: "+markdown.Inline(a.Rule))
		}
		if a.Error != "" && a.Status == logbook.ActionFailed {
			items = append(items, "error: "+markdown.Inline(a.Error))
		}
		if len(items) > 0 {
			b.WriteString("\n")
			for _, it := range items {
				b.WriteString("- " + it + "\n")
			}
		}
	case logbook.EntryNote:
		markdown.Quote(b, e.Note.Text)
	case logbook.EntryJudgement:
		j := e.Judgement
		fmt.Fprintf(b, "%s: %d/10 (evidence: entries %s)\n", markdown.Inline(j.Dimension), j.Score, logbook.JoinNumbers(j.Evidence))
		if j.Text != "" {
			b.WriteString("\n")
			markdown.Quote(b, j.Text)
		}
	case logbook.EntryPolicy:
		b.WriteString(markdown.Inline(logbook.DescribePolicy(e.Policy)) + "\n")
	case logbook.EntryRechain:
		b.WriteString(markdown.Inline(logbook.DescribeRechain(e.Rechain, e.Who)) + "\n")
	case logbook.EntryHandoff:
		b.WriteString(markdown.Inline(logbook.DescribeHandoff(e.Handoff, e.Who)) + "\n")
	}
}

func (d *storyDoc) writeMarkdownObservation(b *strings.Builder, o logbook.ObservationRecord) {
	fmt.Fprintf(b, "- %s — observed %s", markdown.Inline(o.Label), stamp(o.ObservedAt))
	if o.ObservedBy.Identity != "" {
		fmt.Fprintf(b, " by %s", markdown.Inline(whoLine(o.ObservedBy)))
	}
	if o.Artifact != "" {
		fmt.Fprintf(b, "; sighting `%s`", markdown.Code(shortHash(o.Artifact)))
		if a, ok := d.Artifacts[o.Artifact]; ok {
			fmt.Fprintf(b, " (%s, %s)", byteCount(a.Size), markdown.Inline(artifactState(a)))
		}
	}
	b.WriteString("\n")
}

// artifactState says where an artifact stands: "stowed", "reduced to
// 9f2c4e1a0b3d", "jettisoned: holds a customer's data".
// Who jettisoned or reduced it, and when, follow when known.
func artifactState(a helm.ArtifactInfo) string {
	by := ""
	if a.CuratedBy != nil {
		by = " by " + whoLine(*a.CuratedBy) + " at " + stamp(a.CuratedAt)
	}
	switch {
	case a.Status == logbook.ArtifactReduced && a.ReducedTo != "":
		return "reduced to " + shortHash(a.ReducedTo) + by
	case a.Status == logbook.ArtifactJettisoned && a.Reason != "":
		return "jettisoned" + by + ": " + a.Reason
	case a.Status == logbook.ArtifactJettisoned:
		return "jettisoned" + by
	}
	return string(a.Status)
}

// shortHash is the first 12 digits of an artifact's hash.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// byteCount renders a size for people: "812 B", "96.0 KiB".
func byteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

//go:embed story.html.tmpl
var storyHTMLSource string

// storyHTML is the page WriteHTML writes, parsed on first use: every program that links this package (helm
// version too) would parse it at start.
var storyHTML = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("voyage").Parse(storyHTMLSource))
})

// WriteHTML writes the voyage as one self-contained HTML page, to look at
// in a browser or attach to a review: its description and lifecycle, then
// a vertical timeline of its entries, each with its time, who recorded it
// (identity, role, method) and its kind — bearings with the observations
// they sealed and the history of their readings, actions with their
// parameters, results and links (failed and refused ones marked), notes and
// judgements — and what is left on the slate. The page makes no request of
// its own: its style is inline, it has no script, and its
// Content-Security-Policy forbids both.
//
// Every stored text is escaped (html/template): a reading that holds
// markup shows as text. Control characters and bidirectional overrides
// show as visible escapes, as in the story.
func WriteHTML(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	d, err := docOf(ctx, v)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := storyHTML().Execute(&b, d.htmlPage()); err != nil {
		return &helm.VoyageError{Op: "write the story as html", Voyage: d.Info.ID, Err: err}
	}
	// The templates defined after the page leave their line breaks.
	page := append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
	_, err = w.Write(page)
	return err
}

// The page's data: every text made safe to show (safetext), ready for
// html/template to escape.

type htmlPage struct {
	Intent, ID, Head, Kind, Identity, Status, Created string
	Completed, Summary                                string
	Repo, Branch, Base, Parent                        string
	Crew                                              []string
	Lifecycle                                         []htmlChange
	Entries, Legacy                                   []htmlEntry
	Slate                                             []htmlObservation
}

type htmlChange struct {
	At, Word, Who, Reason string
}

type htmlEntry struct {
	N                 int
	Kind, Title, Icon string
	At                string
	Identity          string
	Role, Method      string
	Status            string // an action's: performed, failed, refused, outcome-unknown
	Observations      []htmlObservation
	Reading           string
	History           []htmlAttempt
	Description       string
	DoneAt            string
	Params, Result    []actionParam
	Link              string
	Why, Rule, Error  string
	Text              string
	Dimension         string
	Score             int
	Evidence          string
}

type htmlAttempt struct {
	Text, Feedback, By, At string
}

type htmlObservation struct {
	Label, Key, At, By, Artifact, Size, Status string
}

// entryIcons are the timeline's marks of each kind of entry.
var entryIcons = map[logbook.EntryKind]string{
	logbook.EntryBearing:   "◎",
	logbook.EntryAction:    "⚙",
	logbook.EntryNote:      "✎",
	logbook.EntryJudgement: "⚖",
	logbook.EntryPolicy:    "§",
	logbook.EntryRechain:   "⛓",
	logbook.EntryHandoff:   "⇄",
}

func (d *storyDoc) htmlPage() htmlPage {
	line, block := safetext.Line, func(s string) string { return safetext.Text(s, "") }
	info := d.Info
	p := htmlPage{
		Intent: line(info.Intent), ID: info.ID, Head: d.Head.String(), Kind: line(string(info.Kind)), Identity: line(info.Identity),
		Status: line(string(info.Status)), Created: stamp(info.Created), Summary: block(info.Summary),
		Repo: line(info.Repo), Branch: line(info.Branch), Base: line(info.Base), Parent: line(info.Parent),
	}
	if info.Status == logbook.StatusActive {
		p.Summary = ""
	} else if !info.CompletedAt.IsZero() {
		p.Completed = stamp(info.CompletedAt)
	}
	for _, c := range info.Crew {
		p.Crew = append(p.Crew, line(c))
	}
	for i, t := range info.Lifecycle {
		p.Lifecycle = append(p.Lifecycle, htmlChange{At: stamp(t.At), Word: lifecycleWord(i, t), Who: line(whoLine(t.Who)), Reason: block(t.Reason)})
	}
	for _, e := range d.Entries {
		p.Entries = append(p.Entries, d.htmlEntry(e))
	}
	for _, e := range d.Legacy {
		p.Legacy = append(p.Legacy, d.htmlEntry(e))
	}
	for _, o := range d.Slate {
		p.Slate = append(p.Slate, d.htmlObservation(o))
	}
	return p
}

func (d *storyDoc) htmlEntry(e logbook.Entry) htmlEntry {
	line, block := safetext.Line, func(s string) string { return safetext.Text(s, "") }
	h := htmlEntry{
		N: e.N, Kind: string(e.Kind), Title: logbook.Title(e.Kind), Icon: entryIcons[e.Kind], At: stamp(e.At),
		Identity: line(e.Who.Identity), Role: line(e.Who.Role), Method: line(e.Who.Method),
	}
	switch e.Kind {
	case logbook.EntryBearing:
		for _, o := range e.Bearing.Observations {
			h.Observations = append(h.Observations, d.htmlObservation(o))
		}
		h.Reading = block(e.Bearing.Reading.Text)
		for _, a := range e.Bearing.Reading.History {
			h.History = append(h.History, htmlAttempt{Text: block(a.Text), Feedback: block(a.ChallengedWith), By: line(whoLine(a.ChallengedBy)), At: stamp(a.ChallengedAt)})
		}
	case logbook.EntryAction:
		a := e.Action
		h.Status, h.Description = string(a.Status), line(logbook.DescribeAction(a))
		if !a.DoneAt.IsZero() {
			h.DoneAt = stamp(a.DoneAt)
		}
		for _, pa := range actionParams(a.Params) {
			h.Params = append(h.Params, actionParam{line(pa.Key), block(pa.Value)})
		}
		for _, pa := range resultParams(a.Result) {
			h.Result = append(h.Result, actionParam{pa.Key, line(pa.Value)})
		}
		if a.Result != nil {
			h.Link = markdown.WebLink(a.Result.URL)
		}
		h.Why, h.Rule = block(a.Why), line(a.Rule)
		if a.Status == logbook.ActionFailed {
			h.Error = block(a.Error)
		}
	case logbook.EntryNote:
		h.Text = block(e.Note.Text)
	case logbook.EntryJudgement:
		j := e.Judgement
		h.Dimension, h.Score, h.Evidence, h.Text = line(j.Dimension), j.Score, logbook.JoinNumbers(j.Evidence), block(j.Text)
	case logbook.EntryPolicy:
		h.Text = block(logbook.DescribePolicy(e.Policy))
	case logbook.EntryRechain:
		h.Text = block(logbook.DescribeRechain(e.Rechain, e.Who))
	case logbook.EntryHandoff:
		h.Text = block(logbook.DescribeHandoff(e.Handoff, e.Who))
	}
	return h
}

func (d *storyDoc) htmlObservation(o logbook.ObservationRecord) htmlObservation {
	h := htmlObservation{Label: safetext.Line(o.Label), Key: safetext.Line(o.Key), At: stamp(o.ObservedAt), Artifact: safetext.Line(o.Artifact)}
	if o.ObservedBy.Identity != "" {
		h.By = safetext.Line(whoLine(o.ObservedBy))
	}
	if a, ok := d.Artifacts[o.Artifact]; ok {
		h.Size, h.Status = byteCount(a.Size), safetext.Line(artifactState(a))
	}
	return h
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
