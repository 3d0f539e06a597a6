// Package safetext checks text before helm stores it and escapes it before
// helm prints it.
//
// Stored text must be valid UTF-8: the event log is JSON, and encoding/json
// would silently replace invalid bytes with U+FFFD, so the log would hold
// something other than what the caller gave. Check finds the first invalid
// byte so that the error can say where it is.
//
// Printed text must not drive the terminal: an intent, a reading or a file
// name may hold an escape sequence ("\x1b[2K\r" erases the line it is
// printed on) or a bidirectional override that reorders what follows. Line
// and Block render such characters as visible Go-style escapes (`\x1b`,
// `\r`, `\u202e`) and leave every other character as it is, so the output
// for ordinary text does not change. JSON output needs none of this:
// encoding/json escapes control characters itself.
package safetext

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/utf8x"
)

// InvalidUTF8 returns the byte offset of the first byte of s that is not
// part of a valid UTF-8 sequence, or -1 when s is valid UTF-8.
func InvalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// Check returns an error naming field when s is not valid UTF-8, with the
// offending byte and its offset, such as:
//
//	reading is not valid UTF-8: byte 0xff at offset 12 (helm stores text as UTF-8)
//
// The error wraps no sentinel; callers wrap it with their own.
func Check(field, s string) error {
	i := InvalidUTF8(s)
	if i < 0 {
		return nil
	}
	return fmt.Errorf("%s is not valid UTF-8: byte 0x%02x at offset %d (helm stores text as UTF-8)", field, s[i], i)
}

// Line renders s for a terminal on one line: control characters
// (including newline and tab), DEL, the C1 controls, bidirectional
// formatting characters, line and paragraph separators and invalid UTF-8
// bytes become visible escapes. Anything else is unchanged.
func Line(s string) string { return escape(s, "", false, false) }

// Block renders s for a terminal as Line does, but keeps its line breaks:
// each newline is printed followed by indent, so the continuation lines sit
// inside the block that holds them and cannot pass for lines of the
// surrounding output. Give indent as wide as the label the first line
// follows ("  Reading: " → 11 spaces).
func Block(s, indent string) string { return escape(s, indent, true, false) }

// Text renders s as Block does but keeps its tabs as well: for a
// program's own message shown whole (git indents its advice and file
// lists with tabs) in an error or an HTML page, where a tab moves to the
// next tab stop and nowhere else.
func Text(s, indent string) string { return escape(s, indent, true, true) }

// Writer escapes a stream for a terminal as Block does with no indent,
// but keeps tabs as well as line breaks: it shows a program's output as
// the program writes it (tabs align test results; they move no cursor
// anywhere else). A UTF-8 sequence cut between two writes is held back
// until the next; Flush writes what is held back at the end.
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer escaping onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it, except for an incomplete UTF-8 sequence
// at its end. It reports len(p) written unless w failed.
func (t *Writer) Write(p []byte) (int, error) {
	var data []byte
	data, t.pending = utf8x.Whole(t.pending, p)
	if _, err := io.WriteString(t.w, escape(string(data), "", true, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a sequence held back by Write, escaped: the stream ended
// in the middle of it.
func (t *Writer) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	s := string(t.pending)
	t.pending = nil
	_, err := io.WriteString(t.w, escape(s, "", true, true))
	return err
}

func escape(s, indent string, keepNewlines, keepTabs bool) string {
	// A newline printed as it is needs no work unless it is indented.
	if !needsEscape(s, keepNewlines && indent == "", keepTabs) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
			b.WriteString(indent)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t' && keepTabs:
			b.WriteByte('\t')
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape is the fast path: most text is printed as it is. plainNewline
// and plainTab say a newline and a tab are printed unchanged.
func needsEscape(s string, plainNewline, plainTab bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' && plainNewline:
		case c == '\t' && plainTab:
		case c < 0x20 || c == 0x7f:
			return true
		case c >= 0x80:
			// Multi-byte: decode the rest once, the slow way.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) || r < 0x20 && !(r == '\n' && plainNewline) && !(r == '\t' && plainTab) || r == 0x7f {
					return true
				}
			}
			return false
		}
	}
	return false
}

// unsafeRune reports the non-ASCII characters a terminal acts on instead
// of showing: the C1 controls (U+0080–U+009F; U+009B is a one-character
// CSI on some terminals), the bidirectional marks, embeddings, overrides
// and isolates ("Trojan Source"), and the Unicode line and paragraph
// separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
