package redact

import (
	"bytes"
	"strings"
)

// Finding literals fast: rather than one substring search per literal
// over the whole text, each literal is found through its rarest byte
// (its anchor), and literals sharing an anchor share one search, done
// with bytes.IndexByte (vectorised). In source and prose the anchors
// (k, w, c, J, K, x...) are a few bytes in a hundred, so the text is
// scanned a handful of times at memory speed, not twenty times.

// rarity ranks bytes by how rare they are in text: English letters by
// frequency (the later, the rarer), upper-case rarer than lower-case,
// anything else (digits, punctuation, white space) as common as 'e'.
func rarity(c byte) int {
	const byFrequency = "etaoinshrdlcumwfgypbvkjxqz"
	switch {
	case 'a' <= c && c <= 'z':
		return strings.IndexByte(byFrequency, c)
	case 'A' <= c && c <= 'Z':
		return len(byFrequency) + strings.IndexByte(byFrequency, c+'a'-'A')
	}
	return 0
}

// anchored is a literal and where its anchor is in it.
type anchored struct {
	lit string
	at  int // the anchor's index in lit
	id  int // what the literal stands for (a rule's index)
}

// anchorSet finds a set of literals in text.
type anchorSet struct {
	anchors []byte       // the distinct anchors, in the order first seen
	by      [][]anchored // the literals of each anchor
}

// newAnchorSet returns the set finding lits, each standing for ids[i].
func newAnchorSet(lits []string, ids []int) *anchorSet {
	a := &anchorSet{}
	for i, lit := range lits {
		at := 0
		for j := range len(lit) {
			if rarity(lit[j]) > rarity(lit[at]) {
				at = j
			}
		}
		k := bytes.IndexByte(a.anchors, lit[at])
		if k < 0 {
			k = len(a.anchors)
			a.anchors = append(a.anchors, lit[at])
			a.by = append(a.by, nil)
		}
		a.by[k] = append(a.by[k], anchored{lit: lit, at: at, id: ids[i]})
	}
	return a
}

// each calls fn with the id and start of every literal found in s whose
// start is before limit (a chunk's end; later starts are the next
// chunk's), by anchor, in order of start within an anchor.
func (a *anchorSet) each(s string, limit int, fn func(id, start int)) {
	for k, c := range a.anchors {
		for from := 0; from < len(s); {
			i := strings.IndexByte(s[from:], c)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			for _, l := range a.by[k] {
				start := i - l.at
				if start < 0 || start >= limit || start+len(l.lit) > len(s) {
					continue
				}
				// The anchor's neighbours first: most anchors found are
				// not in a literal, and one byte says so.
				if l.at > 0 && s[i-1] != l.lit[l.at-1] || l.at+1 < len(l.lit) && s[i+1] != l.lit[l.at+1] {
					continue
				}
				if s[start:start+len(l.lit)] == l.lit {
					fn(l.id, start)
				}
			}
		}
	}
}
