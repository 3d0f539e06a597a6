package redact

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// The computation familyTable (tables.go) is generated from: only the
// generator (TestGeneratedTablesAreCurrent -update-tables) and the tests
// run it.

// familyLitsOf computes the rows' familyLits.
func familyLitsOf(rows []family) []familyLits {
	out := make([]familyLits, len(rows))
	for i, f := range rows {
		lits, prefix := prefixLiterals(f.prefixes, f.body)
		out[i] = familyLits{lits: lits, prefix: prefix, minBody: minLen(f.body)}
	}
	return out
}

// prefixLiterals returns the literals that find a family's prefixes,
// and the prefix each stands for: the prefixes, lower-cased, and a
// prefix shorter than three bytes followed by each byte that may begin
// the body (SK: sk0...skf).
func prefixLiterals(prefixes []string, body string) (lits, prefix []string) {
	for _, p := range prefixes {
		if len(p) >= 3 {
			lits, prefix = append(lits, strings.ToLower(p)), append(prefix, p)
			continue
		}
		for _, c := range firstBytes(body) {
			if l := strings.ToLower(p) + string(lowerASCII[c]); !slices.Contains(lits, l) {
				lits, prefix = append(lits, l), append(prefix, p)
			}
		}
	}
	return lits, prefix
}

// firstBytes returns the ASCII bytes a match of expr may begin with.
func firstBytes(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	var out []byte
	for c := 0; c < 128; c++ {
		if mayStart(re.Simplify(), rune(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

func mayStart(re *syntax.Regexp, c rune) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return false
		}
		r := re.Rune[0]
		return r == c || re.Flags&syntax.FoldCase != 0 && lowerASCII[byte(r)] == lowerASCII[byte(c)]
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= c && c <= re.Rune[i+1] {
				return true
			}
		}
		return false
	case syntax.OpCapture, syntax.OpPlus, syntax.OpRepeat:
		return mayStart(re.Sub[0], c)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if mayStart(sub, c) {
				return true
			}
			if minLenOf(sub) > 0 {
				return false
			}
		}
		return false
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if mayStart(sub, c) {
				return true
			}
		}
	}
	return false
}

// minLen returns the fewest bytes a match of the ASCII expression expr
// holds.
func minLen(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	return minLenOf(re)
}

func minLenOf(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLenOf(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLenOf(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLenOf(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLenOf(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0
}
