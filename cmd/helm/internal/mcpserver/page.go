package mcpserver

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
)

// pageSize is how much text a tool's result or a resource holds at most
// by default: large sightings and stories come in pages.
const pageSize = 64 << 10

// maxPage is the most a caller may ask for in one page.
const maxPage = 1 << 20

// page returns the part of text from byte offset on, at most limit bytes
// (pageSize when 0), cut where a character starts, and a note saying how
// to read on (next names the call that does, given the next offset), or
// "" when the page ends the text.
func page(text string, offset, limit int, next func(offset int) string) (string, string, error) {
	return pageOf(text, 0, true, len(text), offset, limit, next)
}

// pageOf is page for a window of a text: text holds its bytes from base
// on, up to its end when whole, else up to a little beyond the page (a
// pageWriter's). total is the text's length, -1 when it is not known.
func pageOf(text string, base int, whole bool, total, offset, limit int, next func(offset int) string) (string, string, error) {
	if offset < 0 || total >= 0 && offset > total {
		return "", "", &exit.UsageError{Err: fmt.Errorf("%w: offset %d is outside the text (%d bytes)", helm.ErrInvalid, offset, total), Tool: "give an offset a note gave, or 0"}
	}
	if limit <= 0 {
		limit = pageSize
	}
	limit = min(limit, maxPage)
	at := offset - base // offset in the window
	for at > 0 && at < len(text) && !utf8.RuneStart(text[at]) {
		at--
	}
	end := min(at+limit, len(text))
	for end < len(text) && end > at && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == at && end < len(text) {
		// The limit is smaller than the character at offset: give that
		// character whole, so that the next page starts further on.
		_, n := utf8.DecodeRuneInString(text[at:])
		end = at + n
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
	}
	if whole && end == len(text) {
		return text[at:], "", nil
	}
	if total < 0 {
		return text[at:end], fmt.Sprintf("[helm: bytes %d to %d shown, more follow; %s for the rest]", base+at, base+end, next(base+end)), nil
	}
	return text[at:end], fmt.Sprintf("[helm: bytes %d to %d of %d shown; %s for the rest]", base+at, base+end, total, next(base+end)), nil
}

// errPageFull ends the writing of a text once a pageWriter holds its page.
var errPageFull = errors.New("the page is full")

// pageWriter keeps, of the text written to it, the bytes a page from
// offset of at most limit bytes needs (a few more either side, to cut
// where characters start), and counts the bytes after it up to
// countAhead, so that the note of a page can say how long a text of
// ordinary size is; then it refuses the rest with errPageFull: the writer
// of a text of gigabytes stops soon after the page, and the text is never
// held whole.
type pageWriter struct {
	lo, hi int // the window kept: the text's bytes [lo, hi)
	n      int // the bytes written
	buf    []byte
	full   bool
}

func newPageWriter(offset, limit int) *pageWriter {
	if limit <= 0 {
		limit = pageSize
	}
	limit = min(limit, maxPage)
	offset = max(offset, 0)
	return &pageWriter{lo: max(offset-utf8.UTFMax, 0), hi: offset + limit + 2*utf8.UTFMax}
}

func (p *pageWriter) Write(b []byte) (int, error) {
	if p.full {
		return 0, errPageFull
	}
	start := p.n
	p.n += len(b)
	if from, to := max(p.lo-start, 0), min(p.hi-start, len(b)); from < to {
		p.buf = append(p.buf, b[from:to]...)
	}
	if p.n > p.hi+countAhead {
		p.full = true
		return len(b), errPageFull
	}
	return len(b), nil
}

// countAhead is how far past its page a pageWriter counts a text's bytes.
const countAhead = 4 << 20

// page returns the page of what was written, as page does, given the
// error writing ended with: errPageFull is no error.
func (p *pageWriter) page(err error, offset, limit int, next func(offset int) string) (string, string, error) {
	if err != nil && !errors.Is(err, errPageFull) {
		return "", "", err
	}
	switch {
	case p.full:
		return pageOf(string(p.buf), p.lo, false, -1, offset, limit, next)
	case p.n < p.lo: // the text ends before the window
		return pageOf("", p.n, true, p.n, offset, limit, next)
	}
	// The whole text was written: kept up to the window's end, counted
	// after it.
	return pageOf(string(p.buf), p.lo, p.n <= p.hi, p.n, offset, limit, next)
}
