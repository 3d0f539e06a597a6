package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/searchindex"
	"github.com/helmlog/helm/logbook"
)

// Result is what Find found: the hits, and how it found them.
type Result struct {
	// Hits are the hits, ordered as Run orders them.
	Hits []Hit
	// More says that Query.Limit left hits out.
	More bool
	// Indexed counts the voyages the content index answered for, and
	// Scanned those Find read whole because the index could not vouch for
	// them (not indexed yet, changed since, or the index unreadable):
	// Reindex makes the next search faster. Both are zero without Words.
	Indexed, Scanned int
	// IndexErr is why the index could not be used at all, if it could
	// not (a malformed index: every voyage was scanned; Reindex rewrites
	// it).
	IndexErr error
}

// indexDir is where home h keeps its content index: on this machine,
// beside its guard rules, also for a home on JetStream (a local cache).
func indexDir(h *helm.Home) string { return filepath.Join(h.Dir(), searchindex.Dir) }

// findWords is Find for a query with Words.
func findWords(ctx context.Context, h *helm.Home, q Query, m *matcher, infos []helm.VoyageInfo) (*Result, []Hit, *helm.ListError, error) {
	res := &Result{}
	var ix *searchindex.Index
	if !q.NoIndex {
		var err error
		if ix, err = searchindex.Open(indexDir(h)); err != nil {
			res.IndexErr, ix = err, nil
		}
	}
	if ix != nil {
		defer ix.Close()
	}
	jobs := make(map[string]*job, len(infos))
	trusted := 0
	for _, info := range infos {
		if ix != nil {
			if seq, ok := ix.Covers(info.ID); ok && seq == info.Seq {
				trusted++
				continue
			}
		}
		jobs[info.ID] = &job{scan: true}
	}
	// With a limit, the index is asked for a few more documents than
	// hits are wanted, then more if the re-checks left too few.
	want := 0
	if q.Limit > 0 {
		want = 2*q.Limit + 32
	}
	var hits []Hit
	var failed []*helm.ListError
	for {
		indexMore := false
		if ix != nil && trusted > 0 {
			docs, more, err := ix.Find(ctx, m.words, want)
			if ctx.Err() != nil {
				return nil, nil, nil, ctx.Err()
			}
			if err != nil {
				// A malformed index vouches for nothing: scan every voyage
				// (not searched yet: a scan searches all of a voyage).
				res.IndexErr, ix, trusted, docs = err, nil, 0, nil
				for _, info := range infos {
					if j := jobs[info.ID]; j == nil || !j.scan {
						jobs[info.ID] = &job{scan: true, skipEntries: j != nil && j.entriesDone, skip: checkedOf(j)}
					}
				}
			}
			indexMore = more
			for _, d := range docs {
				j := jobs[d.Voyage]
				if j == nil {
					j = &job{}
					jobs[d.Voyage] = j
				}
				switch {
				case j.scan: // a voyage the index does not vouch for
				case d.Kind == searchindex.KindEntries:
					j.entries = !j.entriesDone
				case !slices.Contains(j.artifacts, d.Artifact) && !j.checked[d.Artifact]:
					j.artifacts = append(j.artifacts, d.Artifact)
				}
			}
		}
		// Search the voyages with work left in the listing's order (oldest
		// first), a batch at a time, so that a limit stops early.
		var todo []helm.VoyageInfo
		for _, info := range infos {
			if j := jobs[info.ID]; j != nil && j.pending() {
				todo = append(todo, info)
			}
		}
		// Opening a voyage waits on the disk more than it computes: a few
		// more readers than cores.
		readers := 4 * workers()
		batch := max(16, 2*readers)
		for len(todo) > 0 {
			n := min(batch, len(todo))
			found, f, err := each(ctx, todo[:n], readers, func(id string) ([]Hit, error) {
				return searchContent(ctx, h, id, m, jobs[id])
			})
			if err != nil {
				return nil, nil, nil, err
			}
			failed = append(failed, f)
			for _, fh := range found {
				hits = append(hits, fh...)
			}
			for _, info := range todo[:n] {
				jobs[info.ID].done()
			}
			todo = todo[n:]
			if q.Limit > 0 && len(hits) >= q.Limit {
				res.More = len(todo) > 0 || indexMore || len(hits) > q.Limit
				break
			}
		}
		if res.More || !indexMore || want == 0 {
			break
		}
		want *= 4
	}
	res.Indexed, res.Scanned = trusted, len(infos)-trusted
	if all := joinUnreadable(failed...); len(all.Voyages) > 0 {
		return res, hits, all, nil
	}
	return res, hits, nil, nil
}

// job is a voyage to search for Words: what the index named in it
// (entries, artifacts), or, when scan, all of it; and what was searched
// already, so that a second round (the index asked for more) does not
// search it twice.
type job struct {
	scan        bool
	entries     bool
	artifacts   []string
	entriesDone bool
	checked     map[string]bool
	// skipEntries and skip are what a scan leaves out: searched before
	// the index turned out malformed.
	skipEntries bool
	skip        map[string]bool
	scanned     bool
}

func (j *job) pending() bool {
	if j.scan {
		return !j.scanned
	}
	return j.entries || len(j.artifacts) > 0
}

// done records that what j named was searched.
func (j *job) done() {
	if j.scan {
		j.scanned = true
		return
	}
	if j.entries {
		j.entries, j.entriesDone = false, true
	}
	if j.checked == nil {
		j.checked = map[string]bool{}
	}
	for _, a := range j.artifacts {
		j.checked[a] = true
	}
	j.artifacts = nil
}

func checkedOf(j *job) map[string]bool {
	if j == nil {
		return nil
	}
	return j.checked
}

// maxArtifactRead bounds what a search reads of one artifact: a sighting
// beyond it is searched in its first maxArtifactRead bytes (the index
// holds its words in full, the re-check only what is read).
const maxArtifactRead = 256 << 20

// observed is what a bearing or the slate says of an observation.
type observed struct {
	n    int
	seq  uint64
	key  string
	at   time.Time
	who  logbook.Who
	prs  []int
	isss []int
}

// searchContent returns the hits of m in voyage id of home h: in what j
// names, or, when j.scan, in all of it. Every hit is checked against the
// voyage as it is now: an artifact no longer stowed (jettisoned, reduced)
// is no hit, whatever the index says, and a sighting is a hit only when
// its text holds the words.
func searchContent(ctx context.Context, h *helm.Home, id string, m *matcher, j *job) ([]Hit, error) {
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	info := v.Info()
	var entries []logbook.Entry
	for e, rerr := range v.Entries(ctx, nil) {
		if rerr != nil {
			return nil, rerr
		}
		entries = append(entries, e)
	}
	var hits []Hit
	if m.in != InSightings && ((j.scan && !j.skipEntries) || j.entries) {
		hits = entryHits(info, entries, m)
	}
	if m.in == InEntries {
		return hits, nil
	}
	obs := map[string]observed{}
	note := func(n int, seq uint64, o logbook.ObservationRecord) {
		if _, ok := obs[o.Artifact]; ok || o.Artifact == "" {
			return
		}
		ob := observed{n: n, seq: seq, key: o.Key, at: o.ObservedAt, who: o.ObservedBy}
		if p, ok := markNumber(o.Key, "github-pr:"); ok {
			ob.prs = append(ob.prs, p)
		}
		if p, ok := markNumber(o.Key, "github-issue:"); ok {
			ob.isss = append(ob.isss, p)
		}
		obs[o.Artifact] = ob
	}
	for _, e := range entries {
		if e.Bearing != nil {
			for _, o := range e.Bearing.Observations {
				note(e.N, e.Seq, o)
			}
		}
	}
	for _, o := range v.Slate() {
		note(0, 0, o)
	}
	arts := j.artifacts
	if j.scan {
		arts = nil
		for a, err := range v.Artifacts(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if a.Status == logbook.ArtifactStowed && !j.skip[a.Hash] {
				arts = append(arts, a.Hash)
			}
		}
	}
	for _, hash := range arts {
		a, err := v.ArtifactInfo(ctx, hash)
		if errors.Is(err, helm.ErrNoArtifact) || (err == nil && (a.Status != logbook.ArtifactStowed || a.Hash != hash)) {
			continue // not stowed: jettisoned, reduced, or never there
		}
		if err != nil {
			return nil, err
		}
		o, ok := obs[hash]
		if !ok && a.DerivedFrom != "" {
			o, ok = obs[a.DerivedFrom]
		}
		if !ok {
			o = observed{at: info.Created, who: logbook.Who{Identity: info.Identity}}
		}
		if !m.matchSighting(o) {
			continue
		}
		raw, err := readArtifact(ctx, v, hash)
		if err != nil {
			return nil, err
		}
		snippet, ok := m.findIn(raw)
		if !ok {
			continue
		}
		if red, _, rerr := h.Redact(snippet); rerr == nil {
			snippet = red
		} else {
			snippet = "[not shown: the redactor failed]"
		}
		hits = append(hits, Hit{Voyage: info.ID, Intent: info.Intent, Status: info.Status, N: o.n, Seq: o.seq, At: o.at, Who: o.who,
			Kind: KindSighting, Text: snippet, Mark: o.key, Artifact: hash, Snippet: snippet})
	}
	return hits, nil
}

func readArtifact(ctx context.Context, v *helm.Voyage, hash string) ([]byte, error) {
	rc, err := v.OpenArtifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, maxArtifactRead))
}

// matchSighting reports whether an observation meets the criteria other
// than words: who made it, its mark, the numbers its mark names.
func (m *matcher) matchSighting(o observed) bool {
	q := m.q
	switch {
	case q.Who != "" && o.who.Identity != q.Who,
		q.Mark != "" && !strings.HasPrefix(o.key, q.Mark),
		q.PR > 0 && !slices.Contains(o.prs, q.PR),
		q.Issue > 0 && !slices.Contains(o.isss, q.Issue):
		return false
	}
	return true
}

// snippetAround is how much text a snippet shows on each side of the word.
const snippetAround = 60

// findIn looks for the words (and the query's text, if any) in the
// strings of a sighting's JSON: every word somewhere in it, and returns
// the stretch around the first word's first appearance.
func (m *matcher) findIn(raw []byte) (string, bool) {
	found := make([]bool, len(m.words))
	left := len(m.words)
	snippet, text := "", m.text == ""
	// An error (a sighting cut at maxArtifactRead) leaves what was read
	// before it searched, as Reindex indexed it.
	_ = jsonStrings(raw, func(s string) bool {
		if !text && strings.Contains(strings.ToLower(s), m.text) {
			text = true
		}
		searchindex.TermsAt(s, func(t []byte, from, to int) {
			for i, w := range m.words {
				if !found[i] && string(t) == w {
					found[i] = true
					left--
				}
				if i == 0 && snippet == "" && string(t) == w {
					snippet = around(s, from, to)
				}
			}
		})
		return left > 0 || !text
	})
	return snippet, left == 0 && text
}

// around returns s[from:to] with up to snippetAround bytes each side, on
// one line, marked "…" where cut.
func around(s string, from, to int) string {
	a, b := max(0, from-snippetAround), min(len(s), to+snippetAround)
	for a > 0 && !utf8.RuneStart(s[a]) {
		a--
	}
	for b < len(s) && !utf8.RuneStart(s[b]) {
		b++
	}
	out := oneLine(s[a:b])
	if a > 0 {
		out = "…" + out
	}
	if b < len(s) {
		out += "…"
	}
	return out
}

// jsonStrings calls fn with each string value of the JSON in raw (object
// keys apart), until fn returns false. It is a scanner, not a decoder:
// artifacts are JSON helm wrote, and a string without escapes (most of
// them) costs one copy. JSON it cannot follow is an error, after fn has
// had the strings before it.
func jsonStrings(raw []byte, fn func(string) bool) error {
	type level struct{ object, key bool } // key: the next string is a key
	var stack []level
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '{', '[':
			stack = append(stack, level{object: c == '{', key: c == '{'})
			i++
		case '}', ']':
			if len(stack) == 0 {
				return fmt.Errorf("sighting JSON: unbalanced %q at byte %d", c, i)
			}
			stack = stack[:len(stack)-1]
			i++
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
			i++
		case '"':
			j, esc := i+1, false
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					esc = true
					j++
				}
				j++
			}
			if j >= len(raw) {
				return fmt.Errorf("sighting JSON: a string at byte %d does not end", i)
			}
			if n := len(stack); n > 0 && stack[n-1].key {
				stack[n-1].key = false
				i = j + 1
				continue
			}
			var s string
			if esc || !utf8.Valid(raw[i+1:j]) { // escapes, or bytes the decoder would replace
				if err := json.Unmarshal(raw[i:j+1], &s); err != nil {
					return fmt.Errorf("sighting JSON: string at byte %d: %w", i, err)
				}
			} else {
				s = string(raw[i+1 : j])
			}
			if !fn(s) {
				return nil
			}
			i = j + 1
		default: // white space, ':', numbers, true, false, null
			i++
		}
	}
	return nil
}

// voyageTexts calls fn with the texts a search looks in: each entry's,
// the voyage's intent and reasons: the entries document of the index.
func voyageTexts(info helm.VoyageInfo, entries []logbook.Entry, fn func(string)) {
	fn(info.Intent)
	for _, t := range info.Lifecycle {
		fn(t.Reason)
	}
	for _, e := range entries {
		if _, _, texts, ok := entryFacts(e); ok {
			for _, t := range texts {
				fn(t)
			}
		}
	}
}
