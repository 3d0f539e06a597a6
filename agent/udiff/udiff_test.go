package udiff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnifiedDiffsLines(t *testing.T) {
	tests := []struct {
		name, path, old, new, want string
	}{
		{name: "equal", path: "f", old: "a\n", new: "a\n", want: ""},
		{name: "one line changed", path: "f.go", old: "a", new: "b",
			want: "--- a/f.go\n+++ b/f.go\n@@ -1 +1 @@\n-a\n+b\n"},
		{name: "absolute path", path: "/w/f.go", old: "a", new: "b",
			want: "--- /w/f.go\n+++ /w/f.go\n@@ -1 +1 @@\n-a\n+b\n"},
		{name: "insertion keeps context", path: "f", old: "1\n2\n3\n4\n5\n6\n7\n8", new: "1\n2\n3\n4\nnew\n5\n6\n7\n8",
			want: "--- a/f\n+++ b/f\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n"},
		{name: "from nothing", path: "f", old: "", new: "x\ny",
			want: "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{name: "to nothing", path: "f", old: "x", new: "",
			want: "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n"},
		{name: "far changes are two hunks", path: "f",
			old:  "a\n1\n2\n3\n4\n5\n6\n7\n8\nb",
			new:  "A\n1\n2\n3\n4\n5\n6\n7\n8\nB",
			want: "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n"},
		{name: "near changes are one hunk", path: "f",
			old:  "a\n1\n2\nb",
			new:  "A\n1\n2\nB",
			want: "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n-b\n+B\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Unified(tt.path, tt.old, tt.new))
		})
	}
}

// apply applies a diff of Unified to old's lines: the diff must turn
// old into new.
func apply(old, diff string) string {
	a := lines(old)
	var out []string
	pos := 0
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n")[2:] {
		switch {
		case strings.HasPrefix(l, "@@"):
			var s, n int
			h := strings.Fields(l)[1][1:]
			if i := strings.IndexByte(h, ','); i >= 0 {
				s = atoi(h[:i])
				n = atoi(h[i+1:])
			} else {
				s, n = atoi(h), 1
			}
			if n == 0 {
				s++
			}
			out = append(out, a[pos:s-1]...)
			pos = s - 1
		case l[0] == ' ':
			out = append(out, a[pos])
			pos++
		case l[0] == '-':
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, "\n")
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestUnifiedLargeTextsFallBackToWholeReplacement(t *testing.T) {
	var a, b []string
	for i := range 3000 {
		a = append(a, "a"+string(rune('0'+i%10)))
		b = append(b, "b"+string(rune('0'+i%10)))
	}
	old, new := strings.Join(a, "\n"), strings.Join(b, "\n")
	d := Unified("f", old, new)
	assert.Equal(t, new, apply(old, d))
}

func FuzzUnifiedAppliesBack(f *testing.F) {
	f.Add("a\nb\nc", "a\nx\nc")
	f.Add("", "x")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9", "0\n2\n3\n4\n5\n6\n7\n8\n0")
	f.Fuzz(func(t *testing.T, old, new string) {
		if strings.Contains(old+new, "\r") || strings.HasSuffix(old, "\n") || strings.HasSuffix(new, "\n") || strings.Contains(old+new, "\n\n") {
			return // snippets compared as lines; trailing newlines are not told apart
		}
		d := Unified("f", old, new)
		if old == new {
			assert.Empty(t, d)
			return
		}
		assert.Equal(t, new, apply(old, d))
	})
}
