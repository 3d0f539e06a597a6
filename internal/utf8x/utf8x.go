// Package utf8x holds what helm's packages need of UTF-8 beyond the
// standard library's unicode/utf8: text arrives in chunks that may cut a
// rune in two.
package utf8x

import "unicode/utf8"

// CompleteRunes returns the length of the longest prefix of data that
// does not end in the middle of a UTF-8 sequence: all of it, unless its
// last bytes start a multi-byte rune they do not finish.
func CompleteRunes(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if utf8.FullRune(data[i:]) {
				return len(data)
			}
			return i
		}
	}
	return len(data)
}

// Whole joins carry, the start of a rune an earlier chunk cut off, to p
// and returns the complete runes, and the bytes to carry into the next
// chunk (a copy of its own: p may be the caller's, and reused).
func Whole(carry, p []byte) (whole, rest []byte) {
	if len(carry) > 0 {
		p = append(carry, p...)
	}
	k := CompleteRunes(p)
	if k < len(p) {
		rest = append([]byte(nil), p[k:]...)
	}
	return p[:k], rest
}
