package redact

import (
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Redacting a stream: a text too large to hold in memory (a large file's
// contents) is redacted as it passes, a chunk at a time. Each chunk is
// looked at with streamReach bytes of what follows it, and is cut short
// of any secret that runs past its end, so a secret shorter than
// streamReach is found wherever the chunks fall.

const (
	// streamChunk is how much text a Writer redacts at a time.
	streamChunk = 1 << 20
	// streamReach is how far past a chunk's end a secret found in it may
	// run: beyond the reach of every built-in rule (a private key block,
	// 64 KiB past its literal).
	streamReach = 128 << 10
)

// Writer redacts the text written to it on its way to another writer, as
// String would redact the whole text, in a stream of any length, holding
// at most about a megabyte of it: the text is cut into chunks where no
// finding's match runs across the cut, and String runs on each chunk
// that holds a finding. A secret whose match is longer than 128 KiB (a
// caller's pattern, say) may be hidden only in part. Close writes what is
// held back; Count says how many secrets were hidden, as String counts.
type Writer struct {
	r   *Redactor
	w   io.Writer
	buf []byte // held back, not yet written
	out []byte // the redacted text, when there is something to hide
	n   int
	err error
}

// Writer returns a Writer redacting text on its way to w.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Write takes p in; text is written on, redacted, once enough follows it.
func (x *Writer) Write(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	x.buf = append(x.buf, p...)
	if len(x.buf) >= streamChunk+streamReach {
		x.err = x.emit(false)
	}
	return len(p), x.err
}

// Close redacts and writes what is held back.
func (x *Writer) Close() error {
	if x.err != nil {
		return x.err
	}
	x.err = x.emit(true)
	if x.err == nil {
		x.err = io.ErrClosedPipe // nothing more may be written
		return nil
	}
	return x.err
}

// Count returns how many secrets were hidden so far.
func (x *Writer) Count() int { return x.n }

// emit writes the held text redacted: all of it when final, else all but
// the last streamReach bytes, cut short of any finding that runs past.
func (x *Writer) emit(final bool) error {
	// The held bytes as a string, without a copy: they do not change
	// until the output is written.
	s := unsafe.String(unsafe.SliceData(x.buf), len(x.buf))
	found := x.r.spans(s)
	cut := len(s)
	if !final {
		cut = cutBefore(found, len(s)-streamReach)
	}
	out := x.buf[:cut]
	if len(found) > 0 && found[0].from < cut {
		// Something to hide before the cut, and no match runs across it:
		// String on the text up to the cut hides what it would in the
		// whole text, under the same markers, with the same count.
		red, n := x.r.String(s[:cut])
		x.out = append(x.out[:0], red...)
		out = x.out
		x.n += n
	}
	_, err := x.w.Write(out)
	// Keep what follows the cut, at the buffer's start.
	x.buf = x.buf[:copy(x.buf, x.buf[cut:])]
	return err
}

// span is a finding: s[start:end] is a secret, in the text a rule
// matched, s[from:to] (the name of a NAME=VALUE, the
// user of a URL's credentials...), marked with name.
type span struct {
	start, end int
	from, to   int
	name       string
	prio       int // the value's or rule's rank: the lower names a merged span
}

// cutBefore returns where to cut the text at or before at so that no
// finding's match runs across the cut: the next chunk then holds all of
// what made it a secret, and finds it again. A match that begins at the
// text's start (longer than the reach) is taken whole instead, the cut
// moved past it.
func cutBefore(found []span, at int) int {
	cut := at
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range found {
			if f.from < cut && cut < f.to {
				cut, moved = f.from, true
			}
		}
	}
	if cut > 0 || at == 0 {
		return cut
	}
	cut = at
	for moved := true; moved; {
		moved = false
		for _, f := range found {
			if f.from < cut && cut < f.to {
				cut, moved = f.to, true
			}
		}
	}
	return cut
}

// scratch holds the buffers spans reuses between calls.
type scratch struct {
	hits, sorted []hit
	counts, next []int
	order        []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPasses bounds how many times spans runs the rules over a text: the
// text itself, then the text with what was found replaced, while that
// finds more.
const maxPasses = 3

// spans returns what String hides in s: every finding of every value and
// rule, in order of what they hide, overlapping findings merged into one,
// named by the value or the earliest rule among them (a finding that is a
// marker already is left out), judged as if each were replaced by its
// marker already. A marker changes what stands next to it: a token that
// ran on into a secret's letters ends at the marker's bracket, and a rule
// that wants its token to end there (sk- and 32 hex digits, glued to an
// xoxa- token) finds it only once the other is hidden. So when the rules
// find something, they run again over the text with the findings
// replaced, and what they find there is added (in s's positions), until
// a pass finds nothing new or after maxPasses passes: redacting what
// String returns finds nothing more, and clean text is read once.
func (r *Redactor) spans(s string) []span {
	found := r.pass(s)
	for range maxPasses - 1 {
		if len(found) == 0 {
			return found
		}
		t, marks := render(s, found)
		more := r.pass(t)
		if len(more) == 0 {
			break
		}
		all := append(slices.Clip(found), marks.toSource(t, found, more)...)
		merged := mergeSpans(all)
		if slices.Equal(merged, found) {
			break // what the pass found lies within markers already
		}
		found = merged
	}
	return found
}

// render returns s with each span of found replaced by its marker, and
// where each marker starts in it.
func render(s string, found []span) (string, markers) {
	var b strings.Builder
	b.Grow(len(s) + len(found)*len("[REDACTED:secret-assignment]"))
	m := make(markers, len(found))
	last := 0
	for k, f := range found {
		b.WriteString(s[last:f.start])
		m[k] = [2]int{b.Len(), 0}
		b.WriteString(Marker(f.name))
		m[k][1] = b.Len()
		last = f.end
	}
	b.WriteString(s[last:])
	return b.String(), m
}

// markers are where the markers of a rendered text stand in it: start
// and end, in order, one for each span rendered.
type markers [][2]int

// toSource returns the spans found in t, the text rendered from found,
// in the positions of the text found was found in. What a span hides of
// a marker becomes all of what the marker hides; its match reaches over
// the whole match of a marker it touches or abuts (the marker made it a
// secret: a boundary, a context), so that a Writer cuts no chunk
// between them.
func (m markers) toSource(t string, found, more []span) []span {
	out := make([]span, 0, len(more))
	for _, f := range more {
		g := f
		g.start = m.pos(found, f.start, false, false)
		g.end = m.pos(found, f.end, true, false)
		g.from = m.pos(found, f.from, false, true)
		g.to = m.pos(found, f.to, true, true)
		out = append(out, g)
	}
	return out
}

// pos maps a position of the rendered text to the source's. A position
// inside a marker (an end: after its first byte; a start: before its
// last) maps to the marker span's start or end; with match, to its
// match's, and a position abutting a marker too.
func (m markers) pos(found []span, p int, end, match bool) int {
	// The last marker starting at or before p (an end: before p).
	k := sort.Search(len(m), func(i int) bool {
		if end {
			return m[i][0] >= p
		}
		return m[i][0] > p
	}) - 1
	if match && k+1 < len(m) && m[k+1][0] == p && end {
		return found[k+1].to // a match that ends where a marker starts
	}
	if k < 0 {
		return p
	}
	inside := p < m[k][1]
	if end {
		inside = p <= m[k][1]
	}
	switch {
	case inside && match && end:
		return found[k].to
	case inside && match:
		return found[k].from
	case inside && end:
		return found[k].end
	case inside:
		return found[k].start
	case match && !end && p == m[k][1]:
		return found[k].from // a match that starts where a marker ends
	}
	return found[k].end + p - m[k][1]
}

// mergeSpans sorts spans by start (and rank) and merges those that
// overlap, as pass does.
func mergeSpans(found []span) []span {
	slices.SortStableFunc(found, func(a, b span) int {
		if d := a.start - b.start; d != 0 {
			return d
		}
		return a.prio - b.prio
	})
	merged := make([]span, 0, len(found))
	for _, f := range found {
		merged = mergeSpan(merged, f)
	}
	return merged
}

// mergeSpan appends f to merged, spans in order of start, or widens the
// last span when f overlaps it: the higher priority names it.
func mergeSpan(merged []span, f span) []span {
	if k := len(merged) - 1; k >= 0 && f.start < merged[k].end {
		m := &merged[k]
		m.end, m.from, m.to = max(m.end, f.end), min(m.from, f.from), max(m.to, f.to)
		if f.prio < m.prio {
			m.name, m.prio = f.name, f.prio
		}
		return merged
	}
	return append(merged, f)
}

// pass returns every finding of every value and rule in s, in order of
// what they hide, overlapping findings merged into one, named by the
// value or the earliest rule among them. A finding that is a marker
// already is left out.
func (r *Redactor) pass(s string) []span {
	if r == nil {
		return nil
	}
	var found []span
	for i, v := range r.values {
		for from := 0; ; {
			j := strings.Index(s[from:], v.text)
			if j < 0 {
				break
			}
			j += from
			found = append(found, span{start: j, end: j + len(v.text), from: j, to: j + len(v.text), name: v.name, prio: i})
			from = j + len(v.text)
		}
	}
	// The hits of every literal, by rule (a counting sort: literals are
	// numbered rule by rule), each rule's in order of start.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.hits = sc.hits[:0]
	r.lits.each(s, func(lit, start int) { sc.hits = append(sc.hits, hit{start: start, lit: lit}) })
	add := func(i int, fs []finding) {
		for _, f := range fs {
			// A value holding a marker was judged when the marker was
			// put there: hiding it again would not be idempotent.
			if f.hide[0] >= f.hide[1] || strings.Contains(s[f.hide[0]:f.hide[1]], "[REDACTED:") {
				continue
			}
			name := f.name
			if name == "" {
				name = r.rules[i].name
			}
			found = append(found, span{start: f.hide[0], end: f.hide[1], from: f.match[0], to: f.match[1], name: name, prio: len(r.values) + i})
		}
	}
	if len(sc.hits) > 0 {
		counts := sc.counts[:0]
		counts = append(counts, make([]int, len(r.rules)+1)...)
		for _, h := range sc.hits {
			counts[r.owner[h.lit].start+1]++
		}
		for i := 1; i < len(counts); i++ {
			counts[i] += counts[i-1]
		}
		sorted := append(sc.sorted[:0], make([]hit, len(sc.hits))...)
		next := append(sc.next[:0], counts...)
		for _, h := range sc.hits {
			o := r.owner[h.lit]
			sorted[next[o.start]] = hit{start: h.start, lit: o.lit}
			next[o.start]++
		}
		for i := range r.rules {
			group := sorted[counts[i]:counts[i+1]]
			if len(group) == 0 {
				continue
			}
			// Nearly in order already (by anchor): insertion sort.
			for a := 1; a < len(group); a++ {
				for b := a; b > 0 && group[b].start < group[b-1].start; b-- {
					group[b], group[b-1] = group[b-1], group[b]
				}
			}
			add(i, r.rules[i].findings(s, group))
		}
		sc.counts, sc.sorted, sc.next = counts, sorted, next
	}
	for i := range r.rules {
		if r.rules[i].literals == nil {
			add(i, r.rules[i].findings(s, nil))
		}
	}
	if len(found) == 0 {
		return nil
	}
	// In order of start (and rank): by index, spans being large.
	order := sc.order[:0]
	for i := range found {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int {
		if d := found[a].start - found[b].start; d != 0 {
			return d
		}
		return found[a].prio - found[b].prio
	})
	sc.order = order
	merged := make([]span, 0, len(found))
	for _, i := range order {
		merged = mergeSpan(merged, found[i])
	}
	return merged
}
