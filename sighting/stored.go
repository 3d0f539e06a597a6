package sighting

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// StoredText is the text of the index-th content of a file-contents
// sighting, read back out of the sighting's stored JSON, which open
// returns (from its start, each time): a text streamed into the store is
// streamed out of it the same way, never held whole. The content must be
// text, of size bytes as the content records it (its SizeBytes, which
// Encode writes again). A reader of it reads the rest of the JSON before
// it reports the text's end, so that a stored form that verifies itself
// at its end (as a voyage's artifacts do) has done so.
func StoredText(open func() (io.ReadCloser, error), index int, size uint64) TextSource {
	return storedText{open: open, index: index, size: size}
}

type storedText struct {
	open  func() (io.ReadCloser, error)
	index int
	size  uint64
}

// textSize is the size Encode records for the text, which need not be the
// length of the text as stored (redaction changes it).
func (s storedText) textSize() uint64 { return s.size }

// TextSize returns the size a StoredText records for its text (which
// redaction may have made longer or shorter as stored); ok is false for
// any other source, whose size is what it reads.
func TextSize(src TextSource) (size uint64, ok bool) {
	if s, isStored := src.(storedText); isStored {
		return s.size, true
	}
	return 0, false
}

// contentOpen begins every content's object in a sighting's JSON. A JSON
// string holds no unescaped quote, so these bytes stand only where a
// content begins.
const contentOpen = `"content":{`

// textOpen begins a text content's object, after contentOpen.
const textOpen = `"type":"text","text":"`

func (s storedText) OpenText() (io.ReadCloser, error) {
	rc, err := s.open()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	for i := 0; i <= s.index; i++ {
		if err := skipPast(br, contentOpen); err != nil {
			rc.Close()
			return nil, fmt.Errorf("sighting: find content %d in the stored JSON: %w", s.index, err)
		}
	}
	head := make([]byte, len(textOpen))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != textOpen {
		rc.Close()
		return nil, fmt.Errorf("sighting: content %d in the stored JSON is not text", s.index)
	}
	return &unescaper{br: br, rc: rc}, nil
}

// skipPast reads r past the next occurrence of pat (Knuth–Morris–Pratt,
// so a partial match is never read twice).
func skipPast(r io.ByteReader, pat string) error {
	fail := make([]int, len(pat)+1) // fail[j]: the longest proper border of pat[:j]
	fail[0] = -1
	for j, k := 1, 0; j < len(pat); j++ {
		fail[j] = k
		for k >= 0 && pat[k] != pat[j] {
			k = fail[k]
		}
		k++
	}
	for j := 0; j < len(pat); {
		c, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		for j >= 0 && pat[j] != c {
			j = fail[j]
		}
		j++
	}
	return nil
}

// unescaper reads the inside of a JSON string, decoded, up to its closing
// quote; then it reads the rest of the stream, and ends with its error,
// unless stop is set: then it ends there.
type unescaper struct {
	br   *bufio.Reader
	rc   io.ReadCloser
	err  error
	pend []byte // a decoded rune that did not fit the last Read
	stop bool
}

func (u *unescaper) Read(p []byte) (int, error) {
	n := copy(p, u.pend)
	u.pend = u.pend[n:]
	for n < len(p) && u.err == nil {
		// Plain bytes up to the next quote or backslash, as they are.
		if b, _ := u.br.Peek(min(u.br.Buffered(), len(p)-n)); len(b) > 0 {
			end := len(b)
			if i := bytes.IndexByte(b, '"'); i >= 0 {
				end = i
			}
			if i := bytes.IndexByte(b[:end], '\\'); i >= 0 {
				end = i
			}
			if end > 0 {
				n += copy(p[n:], b[:end])
				u.br.Discard(end)
				continue
			}
		}
		c, err := u.br.ReadByte()
		if err != nil {
			u.err = unexpected(err)
			break
		}
		switch c {
		case '"':
			if u.stop {
				u.err = io.EOF
				continue
			}
			// The text's end: read the rest, so the stored form checks
			// itself, and end as it ends.
			if _, err := io.Copy(io.Discard, u.br); err != nil {
				u.err = err
			} else {
				u.err = io.EOF
			}
			continue
		case '\\':
			var buf [utf8.UTFMax]byte
			dec, err := u.escape(buf[:0])
			if err != nil {
				u.err = err
				continue
			}
			k := copy(p[n:], dec)
			n += k
			u.pend = append(u.pend[:0], dec[k:]...)
			if len(u.pend) > 0 {
				return n, nil
			}
			continue
		}
		p[n] = c
		n++
	}
	if n > 0 {
		return n, nil
	}
	return 0, u.err
}

// escape decodes the escape after a backslash into dst.
func (u *unescaper) escape(dst []byte) ([]byte, error) {
	c, err := u.br.ReadByte()
	if err != nil {
		return nil, unexpected(err)
	}
	switch c {
	case '"', '\\', '/':
		return append(dst, c), nil
	case 'b':
		return append(dst, '\b'), nil
	case 'f':
		return append(dst, '\f'), nil
	case 'n':
		return append(dst, '\n'), nil
	case 'r':
		return append(dst, '\r'), nil
	case 't':
		return append(dst, '\t'), nil
	case 'u':
		r, err := u.hex4()
		if err != nil {
			return nil, err
		}
		if utf16.IsSurrogate(r) {
			// The second half must follow as \uXXXX.
			if b, err := u.br.Peek(2); err == nil && string(b) == `\u` {
				u.br.Discard(2)
				r2, err := u.hex4()
				if err != nil {
					return nil, err
				}
				r = utf16.DecodeRune(r, r2)
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(dst, r), nil
	}
	return nil, fmt.Errorf("sighting: stored JSON: bad escape \\%c", c)
}

func (u *unescaper) hex4() (rune, error) {
	var h [4]byte
	if _, err := io.ReadFull(u.br, h[:]); err != nil {
		return 0, unexpected(err)
	}
	v, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("sighting: stored JSON: bad escape \\u%s", h[:])
	}
	return rune(v), nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (u *unescaper) Close() error { return u.rc.Close() }
