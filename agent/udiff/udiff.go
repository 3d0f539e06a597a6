// Package udiff writes a unified diff of two texts, line by line: what a
// person reads of an agent's edit (old_string → new_string) in a step.
//
// It is small on purpose: the lines both texts share at the start and
// the end are set aside, and what is left is compared with a longest
// common subsequence while the table stays under maxCells; beyond that
// the middle is shown as removed and added whole, which is still a
// correct diff, only a longer one.
package udiff

import (
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around a change, as
// diff -u does.
const context = 3

// maxCells bounds the LCS table (4 bytes a cell: 16 MiB at most), so an
// edit of two large texts costs memory in proportion to neither's square.
const maxCells = 1 << 22

type op struct {
	kind byte // ' ', '-' or '+'
	line string
}

// Unified returns the unified diff that turns old into new, with path in
// its header ("--- a/PATH", "+++ b/PATH"; an absolute path as it is) and hunks numbered from the
// texts' first lines. Equal texts give "". A text that does not end in a
// newline is compared as if it did: these are snippets, not files.
func Unified(path, old, new string) string {
	if old == new {
		return ""
	}
	ops := diff(lines(old), lines(new))
	var b strings.Builder
	if strings.HasPrefix(path, "/") {
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", path, path)
	} else {
		fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", path, path)
	}
	oldLine, newLine := 1, 1 // the line numbers ops[i] starts at
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			oldLine++
			newLine++
			i++
			continue
		}
		// A hunk: from context lines before this change to context
		// lines after the last change closer than 2*context to the next.
		start := max(0, i-context)
		for j := i; j > start; j-- { // the context lines before are ' '
			if ops[j-1].kind != ' ' {
				start = j
				break
			}
		}
		end := i
		for k := i; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k + 1
				continue
			}
			if k-end >= 2*context {
				break
			}
		}
		end = min(len(ops), end+context)
		hunkOld, hunkNew := oldLine-(i-start), newLine-(i-start)
		var no, nn int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				no++
			}
			if o.kind != '-' {
				nn++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(hunkOld, no), hunkRange(hunkNew, nn))
		for _, o := range ops[start:end] {
			b.WriteByte(o.kind)
			b.WriteString(o.line)
			b.WriteByte('\n')
		}
		for _, o := range ops[i:end] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		i = end
	}
	return b.String()
}

// hunkRange is diff -u's "START,COUNT", with an empty side numbered by
// the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diff returns the edit script from a to b: shared lines ' ', removed
// '-', added '+', removals before additions within a change.
func diff(a, b []string) []op {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var out []op
	for _, l := range a[:p] {
		out = append(out, op{' ', l})
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	if len(am)*len(bm) <= maxCells {
		out = append(out, lcs(am, bm)...)
	} else {
		for _, l := range am {
			out = append(out, op{'-', l})
		}
		for _, l := range bm {
			out = append(out, op{'+', l})
		}
	}
	for _, l := range a[len(a)-s:] {
		out = append(out, op{' ', l})
	}
	return out
}

// lcs is the edit script of a longest common subsequence of a and b.
func lcs(a, b []string) []op {
	n, m := len(a), len(b)
	// t[i*(m+1)+j] is the LCS length of a[i:] and b[j:].
	t := make([]int32, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i*(m+1)+j] = t[(i+1)*(m+1)+j+1] + 1
			} else {
				t[i*(m+1)+j] = max(t[(i+1)*(m+1)+j], t[i*(m+1)+j+1])
			}
		}
	}
	var out, adds []op
	flush := func() { out = append(out, adds...); adds = adds[:0] }
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			out = append(out, op{' ', a[i]})
			i++
			j++
		case j < m && (i == n || t[i*(m+1)+j+1] > t[(i+1)*(m+1)+j]):
			adds = append(adds, op{'+', b[j]})
			j++
		default:
			out = append(out, op{'-', a[i]})
			i++
		}
	}
	flush()
	return out
}
