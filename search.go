package helm

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
	"time"

	"github.com/helmlog/helm/logbook"
)

// SearchQuery says what Home.Search looks for. Every criterion given must
// match (they are ANDed); at least one must be given.
type SearchQuery struct {
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
}

// Hit is one thing Home.Search found: a logbook entry (its voyage, its
// number N, its event's Seq, when and by whom, its kind), or a voyage's
// intent (Kind HitVoyage, N 0) or a change of its status with a reason
// (Kind HitStatus, N 0). Text is what matched, on one line: the reading,
// the action's line in the story, the note, ... or, for a text search,
// the field holding the text. Status is the voyage's. Its JSON form is
// stable.
type Hit struct {
	Voyage string    `json:"voyage"`
	Intent string    `json:"intent"`
	Status Status    `json:"status"`
	N      int       `json:"n"`
	Seq    uint64    `json:"seq,omitempty"`
	At     time.Time `json:"at"`
	Who    Who       `json:"who"`
	Kind   EntryKind `json:"kind"`
	Text   string    `json:"text"`
}

// Hit kinds besides the logbook's entry kinds.
const (
	// HitVoyage is a hit on a voyage's intent, at its start.
	HitVoyage EntryKind = "voyage"
	// HitStatus is a hit on the reason of a change of a voyage's status
	// (a completion's summary, why it was resumed).
	HitStatus EntryKind = "status"
)

// The actions on a pull request and on an issue, whose number (in their
// parameters or their result) a search by number matches, undos among
// them; a comment deleted (delete-comment) may be on either.
var (
	pullRequestActions = []string{"create-pull-request", "merge-pull-request", "comment-pull-request", "reply-pull-request", "request-review",
		"close-pull-request", "delete-review-comment", "remove-review-request", "delete-comment"}
	issueActions = []string{"create-issue", "close-issue", "comment-issue", "reopen-issue", "delete-comment"}
)

// Search finds the logbook entries of every voyage of the home that match
// q, ordered by time, then voyage, then entry number.
//
// It reads every voyage's logbook, one after another in a few goroutines:
// its cost grows with the home's size, which is fine for a home of a
// person's or a team's voyages but not for a large archive (an index
// would be the next step). A voyage that cannot be read (a damaged log)
// does not hide the others: Search returns every hit it found together
// with a *ListError naming the voyages it could not read, as List does.
// Reading never writes.
func (h *Home) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	const op = "search"
	q.Mark, q.Who, q.Text = strings.TrimSpace(q.Mark), strings.TrimSpace(q.Who), strings.TrimSpace(q.Text)
	switch {
	case q.PR < 0 || q.Issue < 0:
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: a pull request or issue number is positive, got %d", ErrInvalid, min(q.PR, q.Issue))}
	case q.Mark == "" && q.PR == 0 && q.Issue == 0 && q.Who == "" && q.Text == "":
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: nothing to search for: give a mark, a pull request or issue number, an identity or a text", ErrInvalid)}
	}
	if q.Who != "" {
		if err := ValidateIdentity(q.Who); err != nil {
			return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
		}
	}
	if err := errors.Join(checkText("mark", q.Mark), checkText("text", q.Text)); err != nil {
		return nil, &VoyageError{Op: op, Err: err}
	}
	m := newMatcher(q)

	ids, err := h.back.ids(ctx, "")
	if err != nil {
		return nil, err
	}
	read, unreadable, err := readEach(ctx, ids, runtime.GOMAXPROCS(0), func(id string) ([]Hit, error) {
		return h.searchVoyage(ctx, id, m)
	})
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, r := range read {
		if r != nil {
			hits = append(hits, *r...)
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		return cmp.Or(a.At.Compare(b.At), strings.Compare(a.Voyage, b.Voyage), cmp.Compare(a.N, b.N))
	})
	if unreadable != nil {
		return hits, unreadable
	}
	return hits, nil
}

// searchVoyage returns the hits of m in voyage id.
func (h *Home) searchVoyage(ctx context.Context, id string, m *matcher) ([]Hit, error) {
	v, err := h.open(ctx, id)
	if err != nil {
		return nil, err
	}
	info := v.Info()
	entries, err := collect(v.Entries(ctx, nil))
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	hit := func(n int, seq uint64, at time.Time, who Who, kind EntryKind, text string) Hit {
		return Hit{Voyage: info.ID, Intent: info.Intent, Status: info.Status, N: n, Seq: seq, At: at, Who: who, Kind: kind, Text: oneLine(text)}
	}
	var hits []Hit
	owner := Who{Identity: info.Identity}
	if len(info.Lifecycle) > 0 {
		owner = info.Lifecycle[0].Who
	}
	if text, ok := m.match(owner, nil, []string{info.Intent}); ok {
		hits = append(hits, hit(0, 0, info.Created, owner, HitVoyage, text))
	}
	for i, t := range info.Lifecycle {
		if t.Reason == "" {
			continue
		}
		word := string(t.Status)
		if i > 0 && t.Status == StatusActive {
			word = "resumed"
		}
		if text, ok := m.match(t.Who, nil, []string{t.Reason}); ok {
			hits = append(hits, hit(0, 0, t.At, t.Who, HitStatus, word+": "+text))
		}
	}
	for _, e := range entries {
		if text, ok := m.matchEntry(e); ok {
			hits = append(hits, hit(e.N, e.Seq, e.At, e.Who, e.Kind, text))
		}
	}
	return hits, nil
}

// matcher is a SearchQuery made ready to match.
type matcher struct {
	q    SearchQuery
	text string // q.Text, lower-cased
}

func newMatcher(q SearchQuery) *matcher { return &matcher{q: q, text: strings.ToLower(q.Text)} }

// numbered is what an entry names by number: the pull requests and the
// issues its action or its marks are about.
type numbered struct{ prs, issues []int }

// match reports whether an item recorded by who, about what it names
// (nil for nothing), with these texts (the first is the one shown)
// matches, and the text to show.
func (m *matcher) match(who Who, names *numbered, texts []string) (string, bool) {
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
	return shown, true
}

// matchEntry reports whether entry e matches, and the text to show.
func (m *matcher) matchEntry(e Entry) (string, bool) {
	var names *numbered
	var texts []string
	switch {
	case e.Bearing != nil:
		names = &numbered{}
		marked := m.q.Mark == ""
		for _, o := range e.Bearing.Observations {
			if m.q.Mark != "" && strings.HasPrefix(o.Key, m.q.Mark) {
				marked = true
			}
			if n, ok := markNumber(o.Key, "github-pr:"); ok {
				names.prs = append(names.prs, n)
			}
			if n, ok := markNumber(o.Key, "github-issue:"); ok {
				names.issues = append(names.issues, n)
			}
		}
		if !marked {
			return "", false
		}
		r := e.Bearing.Reading
		texts = append(texts, r.Text)
		for _, h := range r.History {
			texts = append(texts, h.Text, h.ChallengedWith)
		}
	case e.Action != nil:
		if m.q.Mark != "" {
			return "", false
		}
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
			if slices.Contains(pullRequestActions, a.Kind) {
				names.prs = append(names.prs, n)
			}
			if slices.Contains(issueActions, a.Kind) {
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
		return "", false
	}
	texts = slices.DeleteFunc(texts, func(s string) bool { return s == "" })
	return m.match(e.Who, names, texts)
}

func resultNumber(a *ActionRecord) int {
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
