package redact

import (
	"io"
	"slices"
	"strings"
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

// Writer redacts the text written to it on its way to another writer:
// what String would hide, in a stream of any length, holding at most
// about a megabyte of it. Where two findings overlap, their union is
// hidden under the first one's marker. A secret longer than 128 KiB (a
// match of a caller's pattern, say) may be hidden only in part. Close
// writes what is held back; Count says how many secrets were hidden.
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
		cut = len(s) - streamReach
		for _, f := range found {
			if f.start < cut && cut < f.end {
				if f.start > 0 {
					cut = f.start
				} else {
					cut = f.end
				}
				break
			}
		}
	}
	out := x.buf[:cut]
	if len(found) > 0 && found[0].end <= cut {
		x.out = x.out[:0]
		last := 0
		for _, f := range found {
			if f.end > cut {
				break
			}
			x.out = append(append(x.out, s[last:f.start]...), Marker(f.name)...)
			last = f.end
			x.n++
		}
		out = append(x.out, s[last:cut]...)
		x.out = out
	}
	_, err := x.w.Write(out)
	// Keep what follows the cut, at the buffer's start.
	x.buf = x.buf[:copy(x.buf, x.buf[cut:])]
	return err
}

// span is a finding: s[start:end] is a secret found by the rule name.
type span struct {
	start, end int
	name       string
}

// spans returns every finding of every value and rule in s, in order,
// overlapping findings merged into one under the first one's name. A
// finding that is a marker already is left out.
func (r *Redactor) spans(s string) []span {
	if r == nil {
		return nil
	}
	var found []span
	for _, v := range r.values {
		for from := 0; ; {
			i := strings.Index(s[from:], v.text)
			if i < 0 {
				break
			}
			i += from
			found = append(found, span{i, i + len(v.text), v.name})
			from = i + len(v.text)
		}
	}
	candidate := r.candidates(s)
	for i, ru := range r.rules {
		if !candidate[i] {
			continue
		}
		for _, sp := range ru.matches(s) {
			if sp[0] < sp[1] && !strings.HasPrefix(s[sp[0]:sp[1]], "[REDACTED:") {
				found = append(found, span{sp[0], sp[1], ru.name})
			}
		}
	}
	slices.SortStableFunc(found, func(a, b span) int { return a.start - b.start })
	merged := found[:0]
	for _, f := range found {
		if k := len(merged) - 1; k >= 0 && f.start < merged[k].end {
			merged[k].end = max(merged[k].end, f.end)
			continue
		}
		merged = append(merged, f)
	}
	return merged
}
