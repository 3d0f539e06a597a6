package web

import "unicode"

// A challenged reading's history is shown as a diff of words: what the
// challenge took out of the reading, and what it put in.

// diffOp is a run of text kept, deleted or inserted.
type diffOp struct {
	Op   string // "same", "del" or "ins"
	Text string
}

// diffCells bounds the table the diff fills (words of the old text times
// words of the new); longer texts are shown as one deletion and one
// insertion.
const diffCells = 4 << 20

// diffWords returns the edit from old to new, word by word (spaces are
// words too, so the runs put back together give both texts), from the
// longest common subsequence.
func diffWords(old, new string) []diffOp {
	a, b := words(old), words(new)
	if len(a)*len(b) > diffCells {
		return compact([]diffOp{{"del", old}, {"ins", new}})
	}
	// lcs[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	add := func(op, text string) {
		if n := len(ops); n > 0 && ops[n-1].Op == op {
			ops[n-1].Text += text
			return
		}
		ops = append(ops, diffOp{op, text})
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			add("same", a[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			add("del", a[i])
			i++
		default:
			add("ins", b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		add("del", a[i])
	}
	for ; j < len(b); j++ {
		add("ins", b[j])
	}
	return ops
}

func compact(ops []diffOp) []diffOp {
	out := ops[:0]
	for _, o := range ops {
		if o.Text != "" {
			out = append(out, o)
		}
	}
	return out
}

// words splits s into runs of letters and digits, runs of spaces, and
// single other characters (punctuation).
func words(s string) []string {
	var out []string
	start := 0
	class := func(r rune) int {
		switch {
		case unicode.IsSpace(r):
			return 1
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			return 2
		}
		return 3
	}
	prev := 0
	for i, r := range s {
		c := class(r)
		if i > start && (c != prev || c == 3) {
			out = append(out, s[start:i])
			start = i
		}
		prev = c
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
