package searchindex

import (
	"unicode"
	"unicode/utf8"
)

// Terms calls fn with each term of s, in order: the runs of letters and
// digits, lower-cased. A run longer than MaxTermLen bytes is no term. The
// slice fn gets is reused: fn copies what it keeps.
func Terms(s string, fn func(term []byte)) {
	TermsAt(s, func(t []byte, _, _ int) { fn(t) })
}

// TermsAt is Terms that also says where in s each term is: s[from:to].
func TermsAt(s string, fn func(term []byte, from, to int)) {
	var buf [MaxTermLen + utf8.UTFMax]byte
	t := buf[:0]
	long := false
	from := 0
	flush := func(to int) {
		if len(t) > 0 && !long {
			fn(t, from, to)
		}
		t, long = buf[:0], false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if len(t) == 0 && !long {
			from = i
		}
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush(i - 1)
				continue
			}
			if len(t) < MaxTermLen {
				t = append(t, c)
			} else {
				long = true
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i - n)
			continue
		}
		r = unicode.ToLower(r)
		if len(t)+utf8.RuneLen(r) <= MaxTermLen {
			t = utf8.AppendRune(t, r)
		} else {
			long = true
		}
	}
	flush(len(s))
}

// Words returns the distinct terms of s, in order of first appearance: a
// query's words.
func Words(s string) []string {
	var out []string
	seen := map[string]bool{}
	Terms(s, func(t []byte) {
		if !seen[string(t)] {
			seen[string(t)] = true
			out = append(out, string(t))
		}
	})
	return out
}
