package gitignore_test

import (
	"strings"
	"testing"

	"github.com/helmlog/helm/internal/gitignore"
)

// FuzzParseLine parses any line and matches it against any path: nothing
// panics or hangs, a ! in front changes the sign and not what matches,
// and a name written with every byte escaped matches that name and
// nothing longer.
func FuzzParseLine(f *testing.F) {
	for _, seed := range []struct{ line, path string }{
		{"*.log", "a/b.log"}, {"!keep", "keep"}, {"/top", "top"}, {"a/**/b", "a/x/y/b"},
		{"**/foo/", "x/foo"}, {"[a-c]?[!x][[:alpha:]]", "bzq"}, {"\\#a\\ ", "#a "},
		{"a[", "a["}, {"[[:nope:]]", "x"}, {"a**/b", "ab"}, {"a\\", "a"}, {"[]-a]", "^"},
		{"***/***", "a/b/c"}, {"*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 64)},
	} {
		f.Add(seed.line, seed.path, true)
	}
	f.Fuzz(func(t *testing.T, line, path string, isDir bool) {
		if strings.ContainsAny(line, "\n") || !validPath(path) {
			t.Skip()
		}
		p, ok := gitignore.ParseLine(line, "")
		if !ok {
			return
		}
		matched := match(p, path, isDir)
		if !p.Negated() && strings.TrimSpace(line) != "" && line[0] != '#' {
			if n, ok := gitignore.ParseLine("!"+line, ""); ok {
				if !n.Negated() {
					t.Fatalf("%q parsed as not negated", "!"+line)
				}
				if got := match(n, path, isDir); got != matched {
					t.Fatalf("%q on %q: matched %v, but its negation: %v", line, path, matched, got)
				}
			}
		}

		// The last name of path, every byte escaped, is a literal pattern
		// (but for a CR at its end, which git takes for a CRLF's).
		name := path[strings.LastIndexByte(path, '/')+1:]
		if strings.HasSuffix(name, "\r") {
			return
		}
		var esc strings.Builder
		for i := 0; i < len(name); i++ {
			esc.WriteByte('\\')
			esc.WriteByte(name[i])
		}
		lit, ok := gitignore.ParseLine(esc.String(), "")
		if !ok {
			t.Fatalf("the escaped name %q parsed as no pattern", esc.String())
		}
		if !match(lit, path, isDir) {
			t.Fatalf("the escaped name %q does not match %q", esc.String(), path)
		}
		if match(lit, path+"x", isDir) {
			t.Fatalf("the escaped name %q matches %q", esc.String(), path+"x")
		}
	})
}

// match reports whether p alone speaks of path.
func match(p gitignore.Pattern, path string, isDir bool) bool {
	var m gitignore.Matcher
	m.Add(p)
	return m.Match(path, isDir) != nil
}

// validPath: what the matcher is given, a path relative to the top of a
// work tree: non-empty names separated by single slashes, no NUL.
func validPath(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, name := range strings.Split(p, "/") {
		if name == "" {
			return false
		}
	}
	return true
}
