package redact

//go:generate go test -run ^TestGeneratedTablesAreCurrent$ -update-tables .

import (
	"encoding/binary"
	"unsafe"
)

// Finding the rules' literals: a few hundred token prefixes and words
// (ghp_, glpat-, AKIA, sk-ant-, password, twitter...), each in any case,
// in one pass over the text. Each literal is known by its rarest pair of
// bytes (its anchor: "kd" for linkedin, "q~" for q~); a table indexed by
// every two bytes of text (64 Ki entries) says whether they anchor a
// literal, and which ones, and only there are literals compared. The text
// is read eight bytes at a time and the table consulted for the seven
// pairs in them, so the pass costs a few table loads a word whatever the
// number of literals, where a search per literal (or per literal's
// rarest byte) costs a pass over the text each.

// lowerASCII maps each byte to its lower case (ASCII letters only).
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

// byteFreq estimates how often each byte occurs in source code and prose,
// per ten thousand bytes (letters by their frequency in English; upper
// case counts as lower case, since literals are found in any case).
var byteFreq = func() (f [256]int) {
	for i := range f {
		f[i] = 5 // punctuation and bytes not listed: rare
	}
	for c, n := range map[byte]int{
		'e': 1270, 't': 910, 'a': 820, 'o': 750, 'i': 700, 'n': 670, 's': 630, 'h': 610, 'r': 600,
		'd': 430, 'l': 400, 'c': 280, 'u': 280, 'm': 240, 'w': 240, 'f': 220, 'g': 200, 'y': 200,
		'p': 190, 'b': 150, 'v': 100, 'k': 80, 'j': 15, 'x': 15, 'q': 10, 'z': 7,
		' ': 1500, '\n': 300, '\t': 300, '_': 200, '.': 200, '-': 100, '(': 150, ')': 150,
		'=': 100, ':': 60, '/': 80, ',': 100, '"': 100, '\'': 50, '{': 50, '}': 50, '*': 30,
		'0': 60, '1': 60, '2': 40, '3': 30, '4': 30, '5': 30, '6': 30, '7': 30, '8': 30, '9': 30,
	} {
		f[c] = n
		if 'a' <= c && c <= 'z' {
			f[c-'a'+'A'] = n
		}
	}
	return f
}()

// anchor returns the offset in lit of its rarest three bytes.
func anchor(lit string) int {
	best, at := -1, 0
	for i := 0; i+2 < len(lit); i++ {
		if score := byteFreq[lit[i]] * byteFreq[lit[i+1]] * byteFreq[lit[i+2]]; best < 0 || score < best {
			best, at = score, i
		}
	}
	return at
}

// trigramHash maps three lower-case bytes (the first in the low byte) to
// an index of litSet.first.
func trigramHash(t uint32) uint32 { return (t * 0x9E3779B1) >> 16 }

const ones = 0x0101010101010101

// lower8 lowers the ASCII upper-case letters of the eight bytes in w.
func lower8(w uint64) uint64 {
	h := w & (0x7f * ones)
	// The high bit of each byte of upper is set where the byte is ASCII
	// and in 'A'..'Z': at least 'A', not past 'Z'.
	upper := ((h + (0x80-'A')*ones) ^ (h + (0x80-'Z'-1)*ones)) &^ w & (0x80 * ones)
	return w | upper>>2
}

// litSet finds a set of literals in text, in any case.
type litSet struct {
	lits []string // lower-case, at least three bytes each
	at   []int    // each literal's anchor offset
	// first maps the hash of three lower-cased bytes of text to one more
	// than the index in buckets of the literals they may anchor; 0: none.
	// The built-in set is static data (tables.go): a process reads the
	// pages of it that it looks at, and builds nothing.
	first   [1 << 16]uint16
	buckets [][]int32
}

// newLitSet returns the set finding lits (lower-case, three bytes or
// more), each known by its index.
func newLitSet(lits []string) *litSet {
	m := &litSet{lits: lits, at: make([]int, len(lits))}
	for i, l := range lits {
		if len(l) < 3 {
			panic("redact: a literal of fewer than three bytes: " + l)
		}
		a := anchor(l)
		m.at[i] = a
		k := trigramHash(uint32(l[a]) | uint32(l[a+1])<<8 | uint32(l[a+2])<<16)
		if m.first[k] == 0 {
			m.buckets = append(m.buckets, nil)
			m.first[k] = uint16(len(m.buckets))
		}
		m.buckets[m.first[k]-1] = append(m.buckets[m.first[k]-1], int32(i))
	}
	return m
}

// each calls fn with the index and start of every literal in s, in order
// of their anchors (not of their starts).
func (m *litSet) each(s string, fn func(lit, start int)) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	// Eight bytes at a time: the triples at i..i+5. Most words hold none.
	for ; i+8 <= len(b); i += 6 {
		w := lower8(binary.LittleEndian.Uint64(b[i:]))
		if m.first[trigramHash(uint32(w)&0xffffff)]|m.first[trigramHash(uint32(w>>8)&0xffffff)]|
			m.first[trigramHash(uint32(w>>16)&0xffffff)]|m.first[trigramHash(uint32(w>>24)&0xffffff)]|
			m.first[trigramHash(uint32(w>>32)&0xffffff)]|m.first[trigramHash(uint32(w>>40)&0xffffff)] == 0 {
			continue
		}
		for j := range 6 {
			if k := m.first[trigramHash(uint32(w>>(8*j))&0xffffff)]; k != 0 {
				m.verify(s, i+j, k, fn)
			}
		}
	}
	for ; i+2 < len(b); i++ {
		t := uint32(lowerASCII[b[i]]) | uint32(lowerASCII[b[i+1]])<<8 | uint32(lowerASCII[b[i+2]])<<16
		if k := m.first[trigramHash(t)]; k != 0 {
			m.verify(s, i, k, fn)
		}
	}
}

// verify calls fn for the literals of bucket k-1 whose anchor is at pos.
func (m *litSet) verify(s string, pos int, k uint16, fn func(lit, start int)) {
	for _, li := range m.buckets[k-1] {
		l := m.lits[li]
		start := pos - m.at[li]
		if start < 0 || start+len(l) > len(s) {
			continue
		}
		if hasPrefixFold(s[start:], l) {
			fn(int(li), start)
		}
	}
}

// hasPrefixFold reports whether s starts with the lower-case lit, in any
// case.
func hasPrefixFold(s, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for i := range len(lit) {
		if lowerASCII[s[i]] != lit[i] {
			return false
		}
	}
	return true
}
