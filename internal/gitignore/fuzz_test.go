package gitignore_test

import (
	"strings"
	"testing"

	"github.com/helmlog/helm/internal/gitignore"
)

// FuzzParseLine parses any line and matches it against any path: nothing
// panics or hangs, a ! turns each exclusion into an inclusion, and a name
// written with every byte escaped matches that name and nothing longer.
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
		r := p.Match(path, isDir)
		if p.Negated() && r == gitignore.Exclude || !p.Negated() && r == gitignore.Include {
			t.Fatalf("%q on %q: %v contradicts the pattern's sign", line, path, r)
		}
		if !p.Negated() && strings.TrimSpace(line) != "" && line[0] != '#' {
			if n, ok := gitignore.ParseLine("!"+line, ""); ok {
				want := map[gitignore.Result]gitignore.Result{gitignore.NoMatch: gitignore.NoMatch, gitignore.Exclude: gitignore.Include}[r]
				if got := n.Match(path, isDir); got != want {
					t.Fatalf("%q on %q: %v, but its negation: %v", line, path, r, got)
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
		if got := lit.Match(path, isDir); got != gitignore.Exclude {
			t.Fatalf("the escaped name %q on %q: %v", esc.String(), path, got)
		}
		if got := lit.Match(path+"x", isDir); got != gitignore.NoMatch {
			t.Fatalf("the escaped name %q on %q: %v", esc.String(), path+"x", got)
		}
	})
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
