// Package search finds the logbook entries of every voyage of a home
// that match a query (Run): by the mark a bearing sealed, by pull request
// or issue number, by identity, by text. It reads every voyage through
// the root package's public API, a few at once; a voyage that cannot be
// read does not hide the others' hits. Reading never writes.
//
// Which actions act on a pull request or an issue is package actions'
// to say (actions.OnPullRequest, actions.OnIssue): a new action kind is
// found by number as soon as it is described there.
package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/internal/searchindex"
	"github.com/helmlog/helm/logbook"
)

// Query says what Run looks for. Every criterion given must match (they
// are ANDed); at least one must be given.
type Query struct {
	// Mark is a mark's key, or the start of one ("github-pr:octo/widgets#45",
	// "file-contents:"): it matches the bearings that sealed an
	// observation of such a mark.
	Mark string
	// PR is a pull request's number: it matches the actions on that pull
	// request (creating, merging, commenting on, replying on, asking a
	// review of it, and the undos of those), the bearings that sealed a
	// look at it (a github-pr mark), and the entries whose text mentions
	// "#PR".
	PR int
	// Issue is an issue's number: it matches the actions on that issue
	// (creating, closing, commenting on it, and the undos of those), the
	// bearings that sealed a look at it (a github-issue mark), and the
	// entries whose text mentions "#Issue".
	Issue int
	// Who is an identity: it matches what that identity recorded.
	Who string
	// Text matches, ignoring case, the entries holding it: readings (and
	// the challenged ones, and the feedback that challenged them), notes,
	// judgements, actions (what they did, why, their error, and the
	// message, title or body they were given), and voyages' intents and
	// the reasons of their changes of status.
	Text string
	// Words are words to find (letters and digits, case ignored, every
	// one of them), in entries (the texts Text looks in) and inside
	// sightings: the text of a file's contents, a command's output, a web
	// page, any stowed artifact. In narrows where. Words are found by the
	// home's content index (Reindex keeps it) where it vouches for a
	// voyage, and by reading the voyage where it does not; every hit is
	// checked against the voyage's log before it is returned.
	Words string
	// In narrows where Words are looked for: InEntries, InSightings, or
	// both (InAll, or empty).
	In Where
	// NoIndex reads every voyage whole for Words, ignoring the content
	// index: slower, and immune to an index forged to hide hits (one
	// that covers a voyage at its true seq with its words left out cannot
	// be told from a true one without reading the voyage).
	NoIndex bool
	// Limit is the most hits returned (0: all). Find says when there were
	// more.
	Limit int
}

// Where says where Words are looked for.
type Where string

// The places Words are looked for.
const (
	InAll       Where = "all"
	InEntries   Where = "entries"
	InSightings Where = "sightings"
)

// Hit is one thing Run found: a logbook entry (its voyage, its number N,
// its event's Seq, when and by whom, its kind), or a voyage's intent
// (Kind KindVoyage, N 0) or a change of its status with a reason (Kind
// KindStatus, N 0). Text is what matched, on one line: the reading,
// the action's line in the story, the note, ... or, for a text search,
// the field holding the text. Status is the voyage's. Its JSON form is
// stable.
type Hit struct {
	Voyage string         `json:"voyage"`
	Intent string         `json:"intent"`
	Status logbook.Status `json:"status"`
	N      int            `json:"n"`
	Seq    uint64         `json:"seq,omitempty"`
	At     time.Time      `json:"at"`
	Who    logbook.Who    `json:"who"`
	Kind   Kind           `json:"kind"`
	Text   string         `json:"text"`
	// Mark, Artifact and Snippet are set on a hit inside a sighting (Kind
	// KindSighting): the key of the mark it was a sighting of, the
	// artifact's hash, and a short stretch of its text around the first
	// word, redacted. N is then the bearing that sealed the observation
	// (0 while it is on the slate), At and Who the observation's.
	Mark     string `json:"mark,omitempty"`
	Artifact string `json:"artifact,omitempty"`
	Snippet  string `json:"snippet,omitempty"`
}

// Kind says what a hit is: a logbook entry, by its entry kind
// (Kind(logbook.EntryBearing), ...), or one of the kinds below, which
// are no entry (the hit's N is 0).
type Kind string

// The kinds of a hit that is not a logbook entry.
const (
	// KindVoyage is the kind of a hit on a voyage's intent, at its start.
	KindVoyage Kind = "voyage"
	// KindStatus is the kind of a hit on the reason of a change of a
	// voyage's status (a completion's summary, why it was resumed).
	KindStatus Kind = "status"
	// KindSighting is the kind of a hit inside a sighting (Query.Words).
	KindSighting Kind = "sighting"
)

// Run finds the logbook entries of every voyage of home h that match q,
// and, for Words, the sightings: ordered by time, then voyage, then entry
// number. A nil or empty query is invalid (helm.ErrInvalid): it would
// match everything. It is Find without the account of how the hits were
// found.
//
// Without Words it reads every voyage's logbook, a few at once: its cost
// grows with the home's size. With Words the content index answers for
// the voyages it vouches for (see Find). A voyage that cannot be read (a
// damaged log) does not hide the others: Run returns every hit it found
// together with a *helm.ListError naming the voyages it could not read,
// as helm.Home.List does. Reading never writes: not even the index.
func Run(ctx context.Context, h *helm.Home, q *Query) ([]Hit, error) {
	res, err := Find(ctx, h, q)
	if res == nil {
		return nil, err
	}
	return res.Hits, err
}

// Find is Run, and says how it found the hits: how many voyages the
// content index answered for and how many it read whole (Result). The
// index (Reindex writes it) vouches for a voyage it holds up to the
// voyage's current seq; every other voyage is read: a search never
// misses what a log holds because the index lags, is lost or damaged.
// Every hit the index suggests is checked against the voyage's log (the
// artifact still stowed, its text holding the words): a forged or stale
// index cannot show what a log does not hold, jettisoned content among
// it. Errors are Run's; the Result holds the hits found either way.
func Find(ctx context.Context, h *helm.Home, q *Query) (*Result, error) {
	const op = "search"
	var query Query
	if q != nil {
		query = *q
	}
	query.Mark, query.Who, query.Text, query.Words = strings.TrimSpace(query.Mark), strings.TrimSpace(query.Who), strings.TrimSpace(query.Text), strings.TrimSpace(query.Words)
	if query.In == InAll {
		query.In = ""
	}
	if err := check(query); err != nil {
		return nil, &helm.VoyageError{Op: op, Err: err}
	}
	m := newMatcher(query)

	infos, err := h.List(ctx, nil)
	var unreadable *helm.ListError
	if err != nil && !errors.As(err, &unreadable) {
		return nil, err
	}
	res := &Result{}
	var hits []Hit
	var failed *helm.ListError
	if query.Words != "" {
		res, hits, failed, err = findWords(ctx, h, query, m, infos)
	} else {
		var found [][]Hit
		found, failed, err = each(ctx, infos, workers(), func(id string) ([]Hit, error) {
			return searchVoyage(ctx, h, id, m)
		})
		for _, f := range found {
			hits = append(hits, f...)
		}
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		return cmp.Or(a.At.Compare(b.At), strings.Compare(a.Voyage, b.Voyage), cmp.Compare(a.N, b.N), strings.Compare(a.Artifact, b.Artifact))
	})
	if query.Limit > 0 && len(hits) > query.Limit {
		hits, res.More = hits[:query.Limit], true
	}
	res.Hits = hits
	if unreadable != nil || failed != nil {
		return res, joinUnreadable(unreadable, failed)
	}
	return res, nil
}

func workers() int { return runtime.GOMAXPROCS(0) }

// check says what is wrong with q, if anything.
func check(q Query) error {
	switch {
	case q.PR < 0 || q.Issue < 0:
		return fmt.Errorf("%w: a pull request or issue number is positive, got %d", helm.ErrInvalid, min(q.PR, q.Issue))
	case q.Mark == "" && q.PR == 0 && q.Issue == 0 && q.Who == "" && q.Text == "" && q.Words == "":
		return fmt.Errorf("%w: nothing to search for: give a mark, a pull request or issue number, an identity, a text or words", helm.ErrInvalid)
	case q.Limit < 0:
		return fmt.Errorf("%w: a limit of hits is positive, got %d", helm.ErrInvalid, q.Limit)
	case q.In != "" && q.In != InEntries && q.In != InSightings:
		return fmt.Errorf("%w: words are looked for in %q, %q or %q, not %q", helm.ErrInvalid, InAll, InEntries, InSightings, q.In)
	case q.In != "" && q.Words == "":
		return fmt.Errorf("%w: where to look (%q) narrows words: give words too", helm.ErrInvalid, q.In)
	case q.Words != "" && len(searchindex.Words(q.Words)) == 0:
		return fmt.Errorf("%w: words %q hold no word (letters or digits)", helm.ErrInvalid, q.Words)
	}
	if q.Who != "" {
		if err := logbook.ValidateIdentity(q.Who); err != nil {
			return fmt.Errorf("%w: %v", helm.ErrInvalid, err)
		}
	}
	for _, f := range []struct{ name, val string }{{"mark", q.Mark}, {"text", q.Text}, {"words", q.Words}} {
		if err := safetext.Check(f.name, f.val); err != nil {
			return fmt.Errorf("%w: %v", helm.ErrInvalid, err)
		}
	}
	return nil
}

// each calls read for each voyage of infos, a few at once (workers), and
// returns what each read, in infos' order, and the voyages whose read
// failed (nil when none did). A voyage removed since it was listed
// (helm.ErrNoVoyage) is skipped. A cancelled ctx stops it with ctx's
// error.
func each[T any](ctx context.Context, infos []helm.VoyageInfo, workers int, read func(id string) (T, error)) ([]T, *helm.ListError, error) {
	type result struct {
		v   T
		err error
	}
	results := make([]result, len(infos))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(infos), workers) {
		wg.Go(func() {
			for i := range next {
				results[i].v, results[i].err = read(infos[i].ID)
			}
		})
	}
	for i := range infos {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out := make([]T, 0, len(infos))
	var failed helm.ListError
	for i, r := range results {
		switch {
		case r.err == nil:
			out = append(out, r.v)
		case errors.Is(r.err, helm.ErrNoVoyage): // removed since it was listed
		default:
			failed.Voyages = append(failed.Voyages, infos[i].ID)
			failed.Errs = append(failed.Errs, r.err)
		}
	}
	if len(failed.Voyages) == 0 {
		return out, nil, nil
	}
	return out, &failed, nil
}

// joinUnreadable names in one *helm.ListError, by voyage id, the voyages
// the listing could not read and those that failed when opened.
func joinUnreadable(errs ...*helm.ListError) *helm.ListError {
	type named struct {
		id  string
		err error
	}
	var all []named
	for _, e := range errs {
		if e == nil {
			continue
		}
		for i, id := range e.Voyages {
			all = append(all, named{id, e.Errs[i]})
		}
	}
	slices.SortStableFunc(all, func(a, b named) int { return strings.Compare(a.id, b.id) })
	out := &helm.ListError{}
	for _, n := range all {
		out.Voyages = append(out.Voyages, n.id)
		out.Errs = append(out.Errs, n.err)
	}
	return out
}

// searchVoyage returns the hits of m in voyage id of home h.
func searchVoyage(ctx context.Context, h *helm.Home, id string, m *matcher) ([]Hit, error) {
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	info := v.Info()
	var entries []logbook.Entry
	for e, rerr := range v.Entries(ctx, nil) {
		if err = rerr; err != nil {
			break
		}
		entries = append(entries, e)
	}
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return entryHits(info, entries, m), nil
}

// entryHits returns the hits of m in the entries, intent and reasons of
// the voyage info describes.
func entryHits(info helm.VoyageInfo, entries []logbook.Entry, m *matcher) []Hit {
	hit := func(n int, seq uint64, at time.Time, who logbook.Who, kind Kind, text string) Hit {
		return Hit{Voyage: info.ID, Intent: info.Intent, Status: info.Status, N: n, Seq: seq, At: at, Who: who, Kind: kind, Text: oneLine(text)}
	}
	var hits []Hit
	owner := logbook.Who{Identity: info.Identity}
	if len(info.Lifecycle) > 0 {
		owner = info.Lifecycle[0].Who
	}
	if text, ok := m.match(owner, nil, []string{info.Intent}); ok {
		hits = append(hits, hit(0, 0, info.Created, owner, KindVoyage, text))
	}
	for i, t := range info.Lifecycle {
		if t.Reason == "" {
			continue
		}
		word := string(t.Status)
		if i > 0 && t.Status == logbook.StatusActive {
			word = "resumed"
		}
		if text, ok := m.match(t.Who, nil, []string{t.Reason}); ok {
			hits = append(hits, hit(0, 0, t.At, t.Who, KindStatus, word+": "+text))
		}
	}
	for _, e := range entries {
		if text, ok := m.matchEntry(e); ok {
			hits = append(hits, hit(e.N, e.Seq, e.At, e.Who, Kind(e.Kind), text))
		}
	}
	return hits
}

// matcher is a Query made ready to match.
type matcher struct {
	q     Query
	text  string   // q.Text, lower-cased
	words []string // q.Words' terms
	in    Where
}

func newMatcher(q Query) *matcher {
	return &matcher{q: q, text: strings.ToLower(q.Text), words: searchindex.Words(q.Words), in: q.In}
}

// numbered is what an entry names by number: the pull requests and the
// issues its action or its marks are about.
type numbered struct{ prs, issues []int }

// match reports whether an item recorded by who, about what it names
// (nil for nothing), with these texts (the first is the one shown)
// matches, and the text to show.
func (m *matcher) match(who logbook.Who, names *numbered, texts []string) (string, bool) {
	q := m.q
	if q.Who != "" && who.Identity != q.Who {
		return "", false
	}
	if q.Mark != "" && names == nil {
		return "", false
	}
	if names == nil {
		names = &numbered{}
	}
	if q.PR > 0 && !slices.Contains(names.prs, q.PR) && !slices.ContainsFunc(texts, func(s string) bool { return mentions(s, q.PR) }) {
		return "", false
	}
	if q.Issue > 0 && !slices.Contains(names.issues, q.Issue) && !slices.ContainsFunc(texts, func(s string) bool { return mentions(s, q.Issue) }) {
		return "", false
	}
	shown := ""
	if len(texts) > 0 {
		shown = texts[0]
	}
	if m.text != "" {
		i := slices.IndexFunc(texts, func(s string) bool { return strings.Contains(strings.ToLower(s), m.text) })
		if i < 0 {
			return "", false
		}
		shown = texts[i]
	}
	if len(m.words) > 0 {
		text, ok := holdsWords(texts, m.words)
		if !ok {
			return "", false
		}
		if m.text == "" {
			shown = text
		}
	}
	return shown, true
}

// holdsWords reports whether texts hold every word between them, and
// the first text holding the first word.
func holdsWords(texts, words []string) (string, bool) {
	found := make([]bool, len(words))
	left, shown := len(words), ""
	for _, s := range texts {
		searchindex.Terms(s, func(t []byte) {
			for i, w := range words {
				if string(t) == w {
					if !found[i] {
						found[i] = true
						left--
					}
					if i == 0 && shown == "" {
						shown = s
					}
				}
			}
		})
	}
	return shown, left == 0
}

// matchEntry reports whether entry e matches, and the text to show.
func (m *matcher) matchEntry(e logbook.Entry) (string, bool) {
	names, keys, texts, ok := entryFacts(e)
	if !ok {
		return "", false
	}
	if m.q.Mark != "" && !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, m.q.Mark) }) {
		return "", false
	}
	return m.match(e.Who, names, texts)
}

// entryFacts returns what a search looks at in entry e: the numbers it
// names (nil for an entry that names none: a note, a judgement), the keys
// of the marks its bearing sealed, and its texts; ok is false for a kind
// of entry search does not look at.
func entryFacts(e logbook.Entry) (names *numbered, keys, texts []string, ok bool) {
	switch {
	case e.Bearing != nil:
		names = &numbered{}
		for _, o := range e.Bearing.Observations {
			keys = append(keys, o.Key)
			if n, ok := markNumber(o.Key, "github-pr:"); ok {
				names.prs = append(names.prs, n)
			}
			if n, ok := markNumber(o.Key, "github-issue:"); ok {
				names.issues = append(names.issues, n)
			}
		}
		r := e.Bearing.Reading
		texts = append(texts, r.Text)
		for _, h := range r.History {
			texts = append(texts, h.Text, h.ChallengedWith)
		}
	case e.Action != nil:
		a := e.Action
		var p struct {
			Number               int
			Message, Title, Body string
		}
		_ = json.Unmarshal(a.Params, &p) // parameters of another shape name nothing searched
		names = &numbered{}
		for _, n := range []int{p.Number, resultNumber(a)} {
			if n == 0 {
				continue
			}
			if actions.OnPullRequest(a.Kind) {
				names.prs = append(names.prs, n)
			}
			if actions.OnIssue(a.Kind) {
				names.issues = append(names.issues, n)
			}
		}
		texts = append(texts, logbook.DescribeAction(a), a.Why, a.Error, p.Message, p.Title, p.Body)
	case e.Note != nil:
		texts = append(texts, e.Note.Text)
	case e.Judgement != nil:
		j := e.Judgement
		texts = append(texts, fmt.Sprintf("%s %d/10: %s", j.Dimension, j.Score, j.Text))
	default:
		return nil, nil, nil, false
	}
	return names, keys, slices.DeleteFunc(texts, func(s string) bool { return s == "" }), true
}

func resultNumber(a *logbook.ActionRecord) int {
	if a.Result == nil {
		return 0
	}
	return a.Result.Number
}

// markNumber returns the number a mark key of kind prefix names:
// "github-pr:octo/widgets#45 focus=summary" → 45.
func markNumber(key, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	_, rest, ok = strings.Cut(rest, "#")
	if !ok {
		return 0, false
	}
	rest, _, _ = strings.Cut(rest, " ")
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// mentions reports whether s mentions "#n": the number whole, not the
// start of a longer one (#45 is not mentioned by #450).
func mentions(s string, n int) bool {
	ref := "#" + strconv.Itoa(n)
	for {
		i := strings.Index(s, ref)
		if i < 0 {
			return false
		}
		s = s[i+len(ref):]
		if s == "" || s[0] < '0' || s[0] > '9' {
			return true
		}
	}
}

// oneLine puts text on one line: its runs of white space, line breaks
// among them, become single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
