package sighting

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/utf8x"
)

// Streaming a large file's text: a mark may leave a large file's text
// unread and give a TextSource in its place, which Encode reads when the
// sighting is stored. The text then passes from the file through the
// store's compressor a chunk at a time; it is never held in memory whole.

// TextSource stands for the text of a file too large to hold in memory.
type TextSource interface {
	// OpenText opens the text for reading from its start; it may be
	// called more than once. A reader that finds the content to be other
	// than text (a NUL or invalid UTF-8 byte, or a failed read) returns a
	// *NotTextError saying what the content is instead.
	OpenText() (io.ReadCloser, error)
}

// NotTextError is returned by a TextSource's reader whose content turned
// out not to be text while it was read.
type NotTextError struct {
	// Content is what the file holds instead: binary content with its
	// size, or an error saying why it could not be read.
	Content FileContent
	// Index is the content's index in Files.Contents, set by Encode.
	Index int
}

func (e *NotTextError) Error() string { return "the file is not text after all: " + e.Content.String() }

// HasSources reports whether s leaves some text unread (a FileContent with
// a Source), so that it must be stored with Encode rather than Marshal.
func HasSources(s Sighting) bool {
	f, ok := s.(*Files)
	if !ok {
		return false
	}
	for _, c := range f.Contents {
		if c.Content.Source != nil {
			return true
		}
	}
	return false
}

// EncodeOptions shape what Encode writes: both are optional.
type EncodeOptions struct {
	// JSON, when set, rewrites the JSON around the streamed texts (it is
	// given every byte of the sighting except those texts) before it is
	// written. It must leave JSON strings it does not change alone.
	JSON func(doc []byte) []byte
	// Text, when set, returns the writer each streamed text is written
	// through on its way to dst (a redactor, say); Encode closes it at the
	// text's end, and counts as the text's size what it read from the
	// source.
	Text func(dst io.Writer) io.WriteCloser
}

// placeholder stands in the JSON for the i-th streamed text while the rest
// of the sighting is encoded: it holds NUL bytes, which no text and no
// path holds, so it cannot collide with the sighting's own strings.
func placeholder(i int) string { return "\x00helm-text-" + strconv.Itoa(i) + "\x00" }

// Encode writes s's JSON to w. For a sighting without sources it writes
// what Marshal returns (rewritten by opts.JSON). A FileContent with a
// Source is written as text read from the source — as Marshal would
// write it were the text in memory — and its SizeBytes is the number of
// bytes read (for a StoredText, the size it records). When a source's content turns out not to be text, Encode
// returns the source's *NotTextError, having written part of the
// sighting: the caller discards what was written, replaces the content
// with the error's, and encodes again. opts may be nil.
func Encode(w io.Writer, s Sighting, opts *EncodeOptions) error {
	if opts == nil {
		opts = &EncodeOptions{}
	}
	f, ok := s.(*Files)
	if !ok || !HasSources(s) {
		data, err := registry.Marshal(s)
		if err != nil {
			return err
		}
		if opts.JSON != nil {
			data = opts.JSON(data)
		}
		_, err = w.Write(data)
		return err
	}
	// The template: the sighting with a placeholder for each streamed
	// text, then split at the placeholders.
	tmpl := &Files{Contents: make([]FileContents, len(f.Contents))}
	var streamed []int
	for i, c := range f.Contents {
		tmpl.Contents[i] = c
		if c.Content.Source != nil {
			tmpl.Contents[i].Content = FileContent{Type: ContentText, Text: placeholder(len(streamed))}
			streamed = append(streamed, i)
		}
	}
	doc, err := registry.Marshal(tmpl)
	if err != nil {
		return err
	}
	if opts.JSON != nil {
		doc = opts.JSON(doc)
	}
	for k, i := range streamed {
		// The text member, `,"text":"…"`, is written when its first byte
		// is: an empty text has none, as Marshal writes it.
		member := append([]byte(`,"text":`), marshalString(placeholder(k))...)
		at := bytes.Index(doc, member)
		if at < 0 {
			return fmt.Errorf("sighting: encode file-contents: the placeholder of %s was lost", f.Contents[i].Path)
		}
		if _, err := w.Write(doc[:at]); err != nil {
			return err
		}
		text := &textMember{w: w}
		n, err := writeText(text, f.Contents[i].Content.Source, opts.Text)
		if nt, ok := errors.AsType[*NotTextError](err); ok {
			e := *nt
			e.Index = i
			return &e
		}
		if err != nil {
			return err
		}
		// The closing quote, then the size where Marshal puts it: after
		// the text, before the other members (there are none: a streamed
		// content is never truncated and has no error).
		var tail []byte
		if text.begun {
			tail = append(tail, '"')
		}
		if n > 0 {
			tail = strconv.AppendUint(append(tail, `,"size_bytes":`...), n, 10)
		}
		if _, err := w.Write(tail); err != nil {
			return err
		}
		doc = doc[at+len(member):]
	}
	_, err = w.Write(doc)
	return err
}

// textMember writes a text's JSON member, opening it at its first byte.
type textMember struct {
	w     io.Writer
	begun bool
}

func (t *textMember) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !t.begun {
		t.begun = true
		if _, err := io.WriteString(t.w, `,"text":"`); err != nil {
			return 0, err
		}
	}
	return t.w.Write(p)
}

// writeText copies a source's text into w as the inside of a JSON string,
// through wrap if set, and returns the bytes read from the source.
func writeText(w io.Writer, src TextSource, wrap func(io.Writer) io.WriteCloser) (uint64, error) {
	r, err := src.OpenText()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	esc := &escaper{w: w}
	var dst io.WriteCloser = nopCloser{esc}
	if wrap != nil {
		dst = wrap(esc)
	}
	n, err := io.CopyBuffer(dst, r, make([]byte, 256<<10))
	if err != nil {
		return uint64(n), err
	}
	if err := dst.Close(); err != nil {
		return uint64(n), err
	}
	if s, ok := src.(storedText); ok {
		n = int64(s.textSize())
	}
	return uint64(n), esc.flush()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// escaper writes text as the inside of a JSON string, escaped exactly as
// encoding/json escapes it (HTML characters and U+2028/U+2029 included),
// so that a streamed text hashes as the same text in memory would. It
// keeps an incomplete rune at the end of a write for the next one.
type escaper struct {
	w     io.Writer
	carry []byte // the start of a rune split across writes
	out   []byte
}

const hexDigits = "0123456789abcdef"

func (e *escaper) Write(p []byte) (int, error) {
	n := len(p)
	p, e.carry = utf8x.Whole(e.carry, p)
	e.out = appendEscaped(e.out[:0], p)
	if _, err := e.w.Write(e.out); err != nil {
		return 0, err
	}
	return n, nil
}

// flush writes a rune left incomplete at the text's end (as U+FFFD, as
// encoding/json writes invalid UTF-8).
func (e *escaper) flush() error {
	if len(e.carry) == 0 {
		return nil
	}
	e.out = appendEscaped(e.out[:0], e.carry)
	e.carry = nil
	_, err := e.w.Write(e.out)
	return err
}

// appendEscaped appends s escaped as encoding/json escapes a string's
// contents.
func appendEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// marshalString is s as a JSON string, as encoding/json writes it.
func marshalString(s string) []byte {
	return append(appendEscaped([]byte{'"'}, []byte(s)), '"')
}
