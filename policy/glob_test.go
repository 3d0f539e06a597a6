package policy

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlobMatchesWholeValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, value string
		want           bool
	}{
		{"main", "main", true},
		{"main", "mainline", false},
		{"main", "Main", false},
		{"", "", true},
		{"", "x", false},
		{"*", "", true},
		{"*", "any/thing with spaces", true},
		{"release/*", "release/1.2", true},
		{"release/*", "release", false},
		{"*rm -rf*", "sudo rm -rf /", true},
		{"*rm -rf*", "rm -r -f /", false},
		{"feat-?", "feat-1", true},
		{"feat-?", "feat-12", false},
		{"feat-?", "feat-é", true},
		{"?", "", false},
		{"[abc]x", "bx", true},
		{"[abc]x", "dx", false},
		{"v[0-9]", "v7", true},
		{"v[0-9]", "va", false},
		{"[!0-9]*", "x1", true},
		{"[!0-9]*", "1x", false},
		{"[^0-9]*", "1x", false},
		{"[a-]", "-", true},
		{"[-a]", "-", true},
		{`[\]]`, "]", true},
		{`[\!a]`, "!", true},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{`a\?`, "a?", true},
		{`\[x]`, "[x]", true},
		{`\\`, `\`, true},
		{"[é-ü]", "ö", true},
		{"**a**", "xxa", true},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"*a*a*a*a*b", strings.Repeat("a", 200) + "b", true},
		{"a*b*c", "abxbxc", true},
		{"a*b*c", "abxbxcx", false},
		{"*.go", "x.go.bak", false},
	} {
		t.Run(fmt.Sprintf("%s~%s", tc.pattern, tc.value), func(t *testing.T) {
			require.NoError(t, checkGlob(tc.pattern))
			assert.Equal(t, tc.want, matchGlob(tc.pattern, tc.value))
		})
	}
}

func TestCheckGlobNamesTheFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pattern, want string }{
		{"feat[", "has a '[' at byte 4 that is never closed"},
		{"[a-", "never closed"},
		{`[a\`, "never closed"},
		{"x[]", "has an empty class at byte 1"},
		{"[!]", "empty class"},
		{"[z-a]", "has a reversed range z-a at byte 0"},
		{`main\`, `ends with a lone '\'`},
		{"\xff", "is not valid UTF-8"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			err := checkGlob(tc.pattern)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotPanics(t, func() { matchGlob(tc.pattern, "feat[x]a-z") })
		})
	}
}

// TestGlobIsNotExponential would not finish with a naive backtracking
// matcher (each star retried at every position).
func TestGlobIsNotExponential(t *testing.T) {
	t.Parallel()
	pattern := strings.Repeat("*a", 30) + "*b"
	assert.False(t, matchGlob(pattern, strings.Repeat("a", 10000)))
}

// globRegexp is the reference the matcher is fuzzed against: the same
// glob spelled as a regular expression. pattern must be valid.
func globRegexp(pattern string) string {
	lit := func(i int) (rune, int) {
		if pattern[i] == '\\' {
			i++
		}
		r, n := utf8.DecodeRuneInString(pattern[i:])
		return r, i + n
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(pattern); {
		switch pattern[i] {
		case '*':
			b.WriteString(`.*`)
			i++
		case '?':
			b.WriteString(`.`)
			i++
		case '[':
			b.WriteString(`[`)
			i++
			if pattern[i] == '!' || pattern[i] == '^' {
				b.WriteString(`^`)
				i++
			}
			for pattern[i] != ']' {
				var lo, hi rune
				lo, i = lit(i)
				fmt.Fprintf(&b, `\x{%x}`, lo)
				if pattern[i] == '-' && pattern[i+1] != ']' {
					hi, i = lit(i + 1)
					fmt.Fprintf(&b, `-\x{%x}`, hi)
				}
			}
			b.WriteString(`]`)
			i++
		default:
			var r rune
			r, i = lit(i)
			fmt.Fprintf(&b, `\x{%x}`, r)
		}
	}
	b.WriteString(`$`)
	return b.String()
}

// FuzzGlob checks the matcher against its regular-expression spelling on
// every valid pattern, and that no pattern at all makes it panic.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"*rm -rf*", "sudo rm -rf /"},
		{"release/*", "release/1.2"},
		{"[!a-c]?[x-z]*", "dqzq"},
		{`a\*b[\]-]`, "a*b]"},
		{"*a*a*b", "aaaaaaab"},
		{"[é-ü]*", "ö\xff"},
		{"?", "\xff"},
		{"\ufffd", "\xff"},
		{"feat[", "feat["},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		got := matchGlob(pattern, value)
		if checkGlob(pattern) != nil {
			return
		}
		expr := globRegexp(pattern)
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("valid pattern %q has no reference %q: %v", pattern, expr, err)
		}
		if want := re.MatchString(value); got != want {
			t.Fatalf("matchGlob(%q, %q) = %v, reference %q says %v", pattern, value, got, expr, want)
		}
	})
}

func BenchmarkGlob(b *testing.B) {
	for _, bc := range []struct{ name, pattern, value string }{
		{"literal", "merge-pull-request", "merge-pull-request"},
		{"args", "*rm -rf*", strings.Repeat("echo hello && ", 20) + "rm -rf build"},
		{"stars", strings.Repeat("*a", 8) + "*b", strings.Repeat("a", 1000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				matchGlob(bc.pattern, bc.value)
			}
		})
	}
}
