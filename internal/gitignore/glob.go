package gitignore

import "math/bits"

// A glob is the wildcard part of a pattern, compiled into a small
// automaton: each token consumes one byte, or a run of bytes (the stars),
// or none (a jump). Matching simulates every path through the tokens at
// once, so a hostile pattern such as "*a*a*a*a*b" costs at most
// len(tokens) × len(text) steps: no backtracking.
type glob struct {
	toks []token
	sets [][4]uint64 // the byte sets of the classes, indexed by token.set
}

type tokKind uint8

const (
	tByte    tokKind = iota // one byte equal to token.b
	tAny                    // ?: one byte but /
	tClass                  // [...]: one byte in (or, negated, not in) the set, never /
	tStar                   // *: any run of bytes without /
	tStarAll                // the ** of "a/**" and "**/a": any run of bytes
	tJump                   // no byte: go on at the next token or at token+jump
)

type token struct {
	kind tokKind
	b    byte
	neg  bool
	set  int
	jump int
}

// compileGlob compiles s, which git matches with wildmatch; pathname is
// its WM_PATHNAME flag (the pattern has a slash, and the text is a path
// rather than one name). It reports false for a pattern git can never
// match: a class left open, an unknown [:name:], a backslash at the end.
//
// Without pathname every run of stars matches any bytes, / included; the
// text is then one name, so ? and classes never meet a slash either way.
func compileGlob(s string, pathname bool) (*glob, bool) {
	g := &glob{}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return g, false
			}
			g.toks = append(g.toks, token{kind: tByte, b: s[i+1]})
			i += 2
		case '?':
			g.toks = append(g.toks, token{kind: tAny})
			i++
		case '*':
			j := i
			for j < len(s) && s[j] == '*' {
				j++
			}
			switch {
			case !pathname:
				g.toks = append(g.toks, token{kind: tStarAll})
			case j-i == 1 || !(i == 0 || s[i-1] == '/'):
				g.toks = append(g.toks, token{kind: tStar})
			case j == len(s) || (j+1 < len(s) && s[j] == '\\' && s[j+1] == '/'):
				// "a/**" (and git's "a/**\/b", whose slash is then
				// literal): anything at all.
				g.toks = append(g.toks, token{kind: tStarAll})
			case s[j] == '/':
				// "**/": no directory at all, or any bytes up to a slash.
				g.toks = append(g.toks,
					token{kind: tJump, jump: 3},
					token{kind: tStarAll},
					token{kind: tByte, b: '/'})
				j++
			default:
				// "a/**b": ** that does not end at a slash is *.
				g.toks = append(g.toks, token{kind: tStar})
			}
			i = j
		case '[':
			set, neg, next, ok := parseClass(s, i+1)
			if !ok {
				return g, false
			}
			g.toks = append(g.toks, token{kind: tClass, neg: neg, set: len(g.sets)})
			g.sets = append(g.sets, set)
			i = next
		default:
			g.toks = append(g.toks, token{kind: tByte, b: c})
			i++
		}
	}
	return g, true
}

// parseClass reads the class whose body starts at s[i] (just after its
// [) and returns its byte set, whether it is negated, and the index just
// after its closing ]. A ] first in the body is a member; a - between two
// members makes a range (a-z, or a-\] with the end escaped) and elsewhere
// is itself; [:name:] adds a POSIX class, and a [ that starts no such
// name is itself.
func parseClass(s string, i int) (set [4]uint64, neg bool, next int, ok bool) {
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		neg = true
		i++
	}
	prev := -1 // the last single member, a range's start; none after a range or a name
	for first := true; ; first = false {
		if i >= len(s) {
			return set, neg, 0, false
		}
		c := s[i]
		if c == ']' && !first {
			return set, neg, i + 1, true
		}
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return set, neg, 0, false
			}
			addByte(&set, s[i+1])
			prev = int(s[i+1])
			i += 2
		case c == '-' && prev >= 0 && i+1 < len(s) && s[i+1] != ']':
			hi := s[i+1]
			i += 2
			if hi == '\\' {
				if i >= len(s) {
					return set, neg, 0, false
				}
				hi = s[i]
				i++
			}
			for b := prev; b <= int(hi); b++ {
				addByte(&set, byte(b))
			}
			prev = -1
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := i + 2
			for end < len(s) && s[end] != ']' {
				end++
			}
			if end >= len(s) {
				return set, neg, 0, false
			}
			if end-(i+2) < 1 || s[end-1] != ':' {
				// No ":]": the [ is an ordinary member.
				addByte(&set, '[')
				prev = '['
				i++
				continue
			}
			class, known := posixClass(s[i+2 : end-1])
			if !known {
				return set, neg, 0, false
			}
			for k := range set {
				set[k] |= class[k]
			}
			prev = -1
			i = end + 1
		default:
			addByte(&set, c)
			prev = int(c)
			i++
		}
	}
}

func addByte(set *[4]uint64, b byte) { set[b>>6] |= 1 << (b & 63) }

func hasByte(set *[4]uint64, b byte) bool { return set[b>>6]&(1<<(b&63)) != 0 }

// posixClass is the set of a [:name:], in the ASCII-only sense git gives
// them (its own ctype table): no byte above 127 belongs to any.
func posixClass(name string) (set [4]uint64, ok bool) {
	var in func(c byte) bool
	switch name {
	case "alnum":
		in = func(c byte) bool { return isAlpha(c) || isDigit(c) }
	case "alpha":
		in = isAlpha
	case "blank":
		in = func(c byte) bool { return c == ' ' || c == '\t' }
	case "cntrl":
		in = func(c byte) bool { return c < 0x20 || c == 0x7f }
	case "digit":
		in = isDigit
	case "graph":
		in = func(c byte) bool { return c > 0x20 && c < 0x7f }
	case "lower":
		in = func(c byte) bool { return c >= 'a' && c <= 'z' }
	case "print":
		in = func(c byte) bool { return c >= 0x20 && c < 0x7f }
	case "punct":
		in = func(c byte) bool { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) }
	case "space":
		in = func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	case "upper":
		in = func(c byte) bool { return c >= 'A' && c <= 'Z' }
	case "xdigit":
		in = func(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
	default:
		return set, false
	}
	for c := 0; c < 128; c++ {
		if in(byte(c)) {
			addByte(&set, byte(c))
		}
	}
	return set, true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// match reports whether the glob matches all of text.
func (g *glob) match(text string) bool {
	n := len(g.toks)
	words := (n + 1 + 63) / 64
	var small [2 * 4]uint64
	var buf []uint64
	if 2*words <= len(small) {
		buf = small[:2*words]
	} else {
		buf = make([]uint64, 2*words)
	}
	cur, next := buf[:words], buf[words:]
	var stack []int
	g.enter(cur, 0, &stack)
	for k := 0; k < len(text); k++ {
		c := text[k]
		clear(next)
		alive := false
		for w, word := range cur {
			for word != 0 {
				i := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if i == n {
					continue // the end consumes nothing
				}
				switch t := &g.toks[i]; t.kind {
				case tByte:
					if c == t.b {
						g.enter(next, i+1, &stack)
						alive = true
					}
				case tAny:
					if c != '/' {
						g.enter(next, i+1, &stack)
						alive = true
					}
				case tClass:
					if c != '/' && hasByte(&g.sets[t.set], c) != t.neg {
						g.enter(next, i+1, &stack)
						alive = true
					}
				case tStar:
					if c != '/' {
						g.enter(next, i, &stack)
						alive = true
					}
				case tStarAll:
					g.enter(next, i, &stack)
					alive = true
				}
			}
		}
		if !alive {
			return false
		}
		cur, next = next, cur
	}
	return cur[n/64]&(1<<(n%64)) != 0
}

// enter adds state i to set with every state reachable from it without
// consuming a byte: past a star (which may match nothing) and both ways
// of a jump.
func (g *glob) enter(set []uint64, i int, stack *[]int) {
	*stack = append((*stack)[:0], i)
	for len(*stack) > 0 {
		i := (*stack)[len(*stack)-1]
		*stack = (*stack)[:len(*stack)-1]
		if set[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		set[i/64] |= 1 << (i % 64)
		if i == len(g.toks) {
			continue
		}
		switch t := &g.toks[i]; t.kind {
		case tStar, tStarAll:
			*stack = append(*stack, i+1)
		case tJump:
			*stack = append(*stack, i+1, i+t.jump)
		}
	}
}
