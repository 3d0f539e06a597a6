package policy

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// A glob is matched against a whole value, rune by rune, case-sensitively:
//
//	*        any sequence of characters, including none, '/' and spaces
//	?        exactly one character
//	[abc]    one of the characters listed
//	[a-z]    one character in the range (both ends included)
//	[!a-z]   one character not listed ([^a-z] is the same)
//	\c       the character c itself (\*, \?, \[, \\; also inside a class)
//
// Any other character matches itself. An empty pattern is no matcher at
// all and matches every value (see Rule). A malformed pattern — an
// unclosed or empty class, a reversed range, a trailing lone backslash,
// text that is not UTF-8 — is reported by checkGlob; matchGlob assumes a
// checked pattern and never panics on any other.
//
// matchGlob runs in O(len(pattern)×len(value)) at worst, with no
// allocation: a star only remembers where to resume (the last star seen
// and how much of the value it has taken), because a later star can
// absorb anything an earlier one could have, so no older choice ever needs
// revisiting.

// checkGlob reports why pattern is not a well-formed glob, or nil.
func checkGlob(pattern string) error {
	if !utf8.ValidString(pattern) {
		return errors.New("is not valid UTF-8")
	}
	for i := 0; i < len(pattern); {
		switch pattern[i] {
		case '\\':
			if i+1 == len(pattern) {
				return errors.New(`ends with a lone '\' (write \\ for a backslash)`)
			}
			_, n := utf8.DecodeRuneInString(pattern[i+1:])
			i += 1 + n
		case '[':
			end, err := checkClass(pattern, i)
			if err != nil {
				return err
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// checkClass checks the class opening at pattern[start] ('[') and returns
// the index just past its ']'.
func checkClass(pattern string, start int) (int, error) {
	i := start + 1
	if i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^') {
		i++
	}
	first := true
	for {
		if i >= len(pattern) {
			return 0, fmt.Errorf("has a '[' at byte %d that is never closed (write \\[ for a bracket)", start)
		}
		if pattern[i] == ']' {
			if first {
				return 0, fmt.Errorf("has an empty class at byte %d (write \\[ for a bracket)", start)
			}
			return i + 1, nil
		}
		first = false
		lo, next, ok := classChar(pattern, i)
		if !ok {
			return 0, fmt.Errorf("has a '[' at byte %d that is never closed (write \\[ for a bracket)", start)
		}
		i = next
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			hi, next, ok := classChar(pattern, i+1)
			if !ok {
				return 0, fmt.Errorf("has a '[' at byte %d that is never closed (write \\[ for a bracket)", start)
			}
			if hi < lo {
				return 0, fmt.Errorf("has a reversed range %c-%c at byte %d", lo, hi, start)
			}
			i = next
		}
	}
}

// classChar reads one character of a class at pattern[i] (a '\' escapes
// the next one) and returns it with the index after it; ok is false when
// the pattern ends first.
func classChar(pattern string, i int) (c rune, next int, ok bool) {
	if pattern[i] == '\\' {
		i++
		if i >= len(pattern) {
			return 0, i, false
		}
	}
	c, n := utf8.DecodeRuneInString(pattern[i:])
	return c, i + n, true
}

// matchGlob reports whether value as a whole matches pattern, which
// checkGlob accepted.
func matchGlob(pattern, value string) bool {
	px, vx := 0, 0
	// The last star seen: resume after it (starPx+1) with one more
	// character of the value taken by it (from starVx).
	starPx, starVx := -1, 0
	for px < len(pattern) || vx < len(value) {
		if px < len(pattern) {
			if pattern[px] == '*' {
				starPx, starVx = px, vx
				px++
				continue
			}
			if vx < len(value) {
				r, n := utf8.DecodeRuneInString(value[vx:])
				if ok, next := matchOne(pattern, px, r); ok {
					px, vx = next, vx+n
					continue
				}
			}
		}
		if starPx >= 0 && starVx < len(value) {
			_, n := utf8.DecodeRuneInString(value[starVx:])
			starVx += n
			px, vx = starPx+1, starVx
			continue
		}
		return false
	}
	return true
}

// matchOne reports whether the pattern's element at px (not a star)
// matches r, and returns the index of the next element.
func matchOne(pattern string, px int, r rune) (bool, int) {
	switch pattern[px] {
	case '?':
		return true, px + 1
	case '[':
		return matchClass(pattern, px, r)
	case '\\':
		if px+1 < len(pattern) {
			px++
		}
	}
	c, n := utf8.DecodeRuneInString(pattern[px:])
	return c == r, px + n
}

// matchClass matches r against the class opening at pattern[start].
func matchClass(pattern string, start int, r rune) (bool, int) {
	i := start + 1
	negate := i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^')
	if negate {
		i++
	}
	in := false
	for i < len(pattern) && pattern[i] != ']' {
		lo, next, ok := classChar(pattern, i)
		if !ok {
			return false, len(pattern)
		}
		hi := lo
		i = next
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			if hi, next, ok = classChar(pattern, i+1); !ok {
				return false, len(pattern)
			}
			i = next
		}
		if lo <= r && r <= hi {
			in = true
		}
	}
	if i >= len(pattern) {
		return false, len(pattern) // unclosed: checkGlob rejects it
	}
	return in != negate, i + 1
}
