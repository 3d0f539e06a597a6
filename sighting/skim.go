package sighting

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Skimming a stored sighting: its JSON is read once, as a stream, and
// decoded with every long string left where it is, a stand-in in its
// place; a reader of the sighting reads a long string from the stored
// JSON when it needs it, a buffer at a time. A file-contents sighting of
// a gigabyte decodes into a few kilobytes of fields and stand-ins, and
// its text passes from the store to the reader's output in chunks.

// SkimOptions bound a skim; the zero value takes the defaults.
type SkimOptions struct {
	// Long is the length of a JSON string, as stored (escaped, without
	// its quotes), beyond which it is left in the stored JSON: 64 KiB
	// when 0.
	Long int
	// MaxDoc is the most the sighting's JSON may hold besides its long
	// strings (its fields, short strings and stand-ins): 16 MiB when 0.
	// A sighting that holds more (a tree of millions of entries) is an
	// error matching ErrTooLarge: its JSON can still be streamed as it
	// is stored.
	MaxDoc int
	// Members names the members whose string values may be left in the
	// stored JSON (the texts a reader streams); nil: any member's. Other
	// strings stay in Doc, bounded by MaxDoc.
	Members []string
}

// ErrTooLarge is matched by the error of skimming a sighting whose JSON
// holds more than SkimOptions.MaxDoc bytes besides its long strings.
var ErrTooLarge = errors.New("the sighting is too large to decode")

// Skimmed is a sighting decoded from its stored JSON with its long
// strings left there: each is a stand-in (IsLong) in Sighting and in Doc,
// and Text reads it.
type Skimmed struct {
	// Sighting is the decoded sighting; a long string in it is a
	// stand-in.
	Sighting Sighting
	// Doc is the stored JSON with each long string a stand-in.
	Doc []byte

	open func() (io.ReadCloser, error)
	long map[string]longString
	cur  *storedCursor
}

// longString is where a long string is in the stored JSON.
type longString struct {
	at      int64 // the offset of its opening quote
	newline bool  // it holds a line feed
}

// Skim reads the stored JSON of a sighting from open (from its start)
// to its end, so that a stored form that verifies itself at its end has
// done so before anything is decoded, and decodes it with every string
// longer than opts.Long left in the stored JSON. Text opens the JSON again
// for a long string; Close closes what it opened. opts may be nil.
func Skim(open func() (io.ReadCloser, error), opts *SkimOptions) (*Skimmed, error) {
	var o SkimOptions
	if opts != nil {
		o = *opts
	}
	opts = &o
	if opts.Long <= 0 {
		opts.Long = 64 << 10
	}
	if opts.MaxDoc <= 0 {
		opts.MaxDoc = 16 << 20
	}
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var nonce [8]byte
	rand.Read(nonce[:])
	sk := &skimmer{r: rc, members: opts.Members, buf: make([]byte, 64<<10), long: opts.Long, maxDoc: opts.MaxDoc, prefix: "\x00helm-long-" + hex.EncodeToString(nonce[:]) + "-",
		strs: map[string]longString{}}
	if err := sk.run(); err != nil {
		return nil, err
	}
	s, err := registry.Unmarshal(sk.doc)
	if err != nil {
		return nil, err
	}
	return &Skimmed{Sighting: s, Doc: sk.doc, open: open, long: sk.strs}, nil
}

// IsLong reports whether s is the stand-in of a long string.
func (k *Skimmed) IsLong(s string) bool {
	_, ok := k.long[s]
	return ok
}

// HasNewline reports whether s, a string of the sighting or the stand-in
// of a long one, holds a line feed.
func (k *Skimmed) HasNewline(s string) bool {
	if l, ok := k.long[s]; ok {
		return l.newline
	}
	return strings.Contains(s, "\n")
}

// Text returns a reader of s, a string of the sighting: the string
// itself, or, for the stand-in of a long string, its text decoded from
// the stored JSON as it is read. The reader is good until the next call
// of Text or Close. Reading long strings in the order they are stored
// reads the stored JSON once.
func (k *Skimmed) Text(s string) (io.Reader, error) {
	l, ok := k.long[s]
	if !ok {
		return strings.NewReader(s), nil
	}
	if k.cur != nil && k.cur.pos() > l.at {
		k.cur.close()
		k.cur = nil
	}
	if k.cur == nil {
		rc, err := k.open()
		if err != nil {
			return nil, err
		}
		k.cur = &storedCursor{rc: rc}
		k.cur.br = bufio.NewReaderSize(&k.cur.count, 64<<10)
		k.cur.count.r = rc
	}
	if _, err := k.cur.br.Discard(int(l.at - k.cur.pos() + 1)); err != nil {
		return nil, fmt.Errorf("sighting: find a long string at offset %d of the stored JSON: %w", l.at, unexpected(err))
	}
	return &unescaper{br: k.cur.br, rc: k.cur.rc, stop: true}, nil
}

// Close closes the stored JSON Text opened, if any.
func (k *Skimmed) Close() error {
	if k.cur != nil {
		k.cur.close()
		k.cur = nil
	}
	return nil
}

// storedCursor is the stored JSON, open at a position.
type storedCursor struct {
	rc    io.ReadCloser
	count countReader
	br    *bufio.Reader
}

func (c *storedCursor) pos() int64 { return c.count.n - int64(c.br.Buffered()) }
func (c *storedCursor) close()     { c.rc.Close() }

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// skimmer copies a sighting's JSON into doc, a long string's stand-in in
// its place.
type skimmer struct {
	r      io.Reader
	buf    []byte
	i, n   int   // buf[i:n] is yet to be read
	off    int64 // the stored offset of buf[0]
	err    error
	long   int
	maxDoc int
	prefix string
	doc    []byte
	str    []byte // the string being read, while it is short
	strs   map[string]longString
	// Where the JSON is: a member's name is never long.
	nest      []byte // '{' and '[' of the objects and arrays open
	expectKey bool   // a string here is a member's name
	key       string // the name of the member being read
	members   []string
}

// mayLeave reports whether the string being read, long, may be left in
// the stored JSON.
func (s *skimmer) mayLeave() bool {
	if s.expectKey || len(s.nest) == 1 && s.key == "kind" {
		return false // names are never left, nor the kind (Unmarshal reads it)
	}
	return s.members == nil || slices.Contains(s.members, s.key)
}

// fill reads more of the JSON into buf; false at its end (err set).
func (s *skimmer) fill() bool {
	if s.err != nil {
		return false
	}
	s.off += int64(s.n)
	s.i, s.n = 0, 0
	for s.n == 0 && s.err == nil {
		s.n, s.err = s.r.Read(s.buf)
	}
	return s.n > 0
}

// ended is the error the JSON's end leaves: nil for its end, or what
// reading it failed with.
func (s *skimmer) ended() error {
	if errors.Is(s.err, io.EOF) {
		return nil
	}
	return s.err
}

// structure follows the JSON's structure through b, bytes outside its
// strings.
func (s *skimmer) structure(b []byte) {
	for _, c := range b {
		switch c {
		case '{':
			s.nest = append(s.nest, c)
			s.expectKey = true
		case '[':
			s.nest = append(s.nest, c)
			s.expectKey = false
		case '}', ']':
			if len(s.nest) > 0 {
				s.nest = s.nest[:len(s.nest)-1]
			}
			s.expectKey = false
		case ',':
			s.expectKey = len(s.nest) > 0 && s.nest[len(s.nest)-1] == '{'
		case ':':
			s.expectKey = false
		}
	}
}

func (s *skimmer) add(b []byte) error {
	if len(s.doc)+len(b) > s.maxDoc {
		return fmt.Errorf("%w: its JSON holds more than %d bytes besides its long strings", ErrTooLarge, s.maxDoc)
	}
	s.doc = append(s.doc, b...)
	return nil
}

func (s *skimmer) run() error {
	for {
		if s.i == s.n && !s.fill() {
			if err := s.ended(); err != nil {
				return err
			}
			// Read to the end, as the reader asks; the end says whether
			// the bytes were intact.
			return nil
		}
		chunk := s.buf[s.i:s.n]
		q := bytes.IndexByte(chunk, '"')
		if q < 0 {
			s.structure(chunk)
			if err := s.add(chunk); err != nil {
				return err
			}
			s.i = s.n
			continue
		}
		s.structure(chunk[:q])
		if err := s.add(chunk[:q]); err != nil {
			return err
		}
		at := s.off + int64(s.i+q)
		s.i += q + 1
		if err := s.readString(at); err != nil {
			return err
		}
	}
}

// readString reads a string after its opening quote, at offset at: a
// short one is added to doc as it is, a long one as its stand-in.
func (s *skimmer) readString(at int64) error {
	s.str = s.str[:0]
	long, newline := false, false
	esc := 0 // 1: after a backslash; 2..5: in the hex digits of \u
	var hexd [4]byte
	for {
		if s.i == s.n && !s.fill() {
			if err := s.ended(); err != nil {
				return err
			}
			return fmt.Errorf("sighting: stored JSON: %w inside a string at offset %d", io.ErrUnexpectedEOF, at)
		}
		chunk := s.buf[s.i:s.n]
		end := -1
		for j := 0; j < len(chunk); {
			switch {
			case esc == 1:
				switch chunk[j] {
				case 'n':
					newline = true
					esc = 0
				case 'u':
					esc = 2
				default:
					esc = 0
				}
				j++
				continue
			case esc >= 2:
				hexd[esc-2] = chunk[j] | 0x20 // lower case
				j++
				if esc++; esc == 6 {
					newline = newline || string(hexd[:]) == "000a"
					esc = 0
				}
				continue
			}
			k := bytes.IndexAny(chunk[j:], "\"\\")
			if k < 0 {
				break
			}
			j += k
			if chunk[j] == '"' {
				end = j
				break
			}
			esc = 1
			j++
		}
		part := chunk
		if end >= 0 {
			part = chunk[:end]
		}
		if !long {
			s.str = append(s.str, part...)
			long = len(s.str) > s.long && s.mayLeave()
		}
		if end < 0 {
			s.i = s.n
			continue
		}
		s.i += end + 1
		if s.expectKey {
			s.key = string(s.str)
		}
		if !long {
			if err := s.add([]byte{'"'}); err != nil {
				return err
			}
			if err := s.add(s.str); err != nil {
				return err
			}
			return s.add([]byte{'"'})
		}
		stand := s.prefix + strconv.Itoa(len(s.strs)) + "\x00"
		s.strs[stand] = longString{at: at, newline: newline}
		return s.add(marshalString(stand))
	}
}
