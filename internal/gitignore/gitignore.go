// Package gitignore decides which paths git ignores, by the rules of
// gitignore(5), without git and without a dependency: helm's library
// should not make its users compile a git implementation to skip build
// output in a directory listing.
//
// Paths are slash-separated and relative to the top of the work tree
// ("src/gen/x.pb.go"), never with a trailing slash; whether a path is a
// directory is said separately, as git learns it from the file system.
// Matching is case-sensitive (git's core.ignorecase=false) and byte-wise:
// names need not be UTF-8.
//
// The rules, as git 2.39 applies them and as the tests check against the
// real `git check-ignore`:
//   - A blank line matches nothing; a line starting with # is a comment;
//     \# and \! start a pattern with a literal # or !. Trailing spaces are
//     cut unless escaped ("a\ "); a CR before the newline is dropped; a
//     UTF-8 byte order mark at the start of a file is skipped.
//   - A leading ! negates: a path it matches is included again, unless a
//     directory above the path is excluded (git never looks inside one).
//   - A trailing / matches directories only (one is removed; "a//" keeps
//     a slash and matches nothing).
//   - A pattern with no other slash matches the last component of a path
//     at any depth below the ignore file's directory; a pattern with a
//     leading or middle slash matches the whole path relative to that
//     directory (one leading slash is dropped).
//   - * and ? match any byte but /; [...] is a class of bytes with ranges
//     (a-z), negation ([!...] or [^...]), escapes and the POSIX names
//     ([:alpha:] and the other eleven), and never matches /; an unclosed
//     class or an unknown name makes the pattern match nothing.
//   - ** between slashes (or at either end of a pattern with a slash)
//     matches any number of directories: "**/a", "a/**", "a/**/b". Elsewhere
//     ** is *. Like git, the start of the pattern is counted from the end of
//     its leading run of literal bytes, so "a**/b" matches "ab" and
//     "ax/y/b" too.
//   - Later lines win over earlier ones; a deeper ignore file wins over a
//     shallower one, which wins over .git/info/exclude. A Matcher holds
//     its patterns in that order of precedence.
package gitignore

import (
	"strings"
)

// Pattern is one pattern line of an ignore file, parsed.
type Pattern struct {
	// Source names the file the line came from (".gitignore",
	// "src/.gitignore", ".git/info/exclude"): it is only reported, never
	// opened.
	Source string
	// Line is the pattern's line number in Source, counting from 1.
	Line int
	// Text is the line as git keeps it: the CR and the unescaped trailing
	// spaces removed, the rest (a leading !, a trailing /) as written.
	Text string

	base     string // the ignore file's directory: "" at the top, else "dir/" with its slash
	negate   bool
	dirOnly  bool
	pathname bool   // has a slash: matched against the path below base, else against the last component
	literal  string // the leading bytes that hold no wildcard, matched as they are
	glob     *glob  // the rest; nil when the whole pattern is literal
	never    bool   // an unclosed class, a dangling backslash or an unknown class name
}

// MaxFileSize is the size from which git reads no pattern from an ignore
// file (dir.c's PATTERN_MAX_FILE_SIZE): it warns and skips the file.
const MaxFileSize = 100 << 20

// Parse parses the content of an ignore file in directory dir (relative
// to the top, "" for the top itself), named source in the patterns it
// returns. Lines end at LF; a UTF-8 byte order mark at the start is
// skipped. The caller skips a file of MaxFileSize bytes or more, as git
// does.
func Parse(data []byte, dir, source string) []Pattern {
	text := strings.TrimPrefix(string(data), "\uFEFF")
	var ps []Pattern
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if p, ok := ParseLine(line, dir); ok {
			p.Source, p.Line = source, n
			ps = append(ps, p)
		}
	}
	return ps
}

// ParseLine parses one line of an ignore file whose directory is dir
// (relative to the top, "" for the top itself). The line carries no
// newline; a trailing CR is removed here. It reports false for a blank
// line or a comment, which hold no pattern. Source and Line are left for
// the caller to fill.
func ParseLine(line, dir string) (Pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return Pattern{}, false
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return Pattern{}, false // spaces only: git keeps an empty pattern, which matches nothing
	}
	p := Pattern{Text: line}
	if dir != "" && dir != "." {
		p.base = strings.TrimSuffix(dir, "/") + "/"
	}
	s := line
	if s[0] == '!' {
		p.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" {
		p.never = true // "!", "/", "!/": git keeps an empty pattern
		return p, true
	}
	p.pathname = strings.IndexByte(s, '/') >= 0
	// The literal lead: bytes up to the first one that can start a
	// wildcard or an escape. git measures it before dropping a leading
	// slash, then drops the slash from both.
	lead := strings.IndexAny(s, `*?[\`)
	if lead < 0 {
		lead = len(s)
	}
	if p.pathname && s[0] == '/' {
		s = s[1:]
		lead--
	}
	if !p.pathname {
		// The last component is matched whole: a lead only shortcuts a
		// pattern that is all literal.
		if lead < len(s) {
			lead = 0
		}
	}
	p.literal = s[:lead]
	if lead < len(s) {
		g, ok := compileGlob(s[lead:], p.pathname)
		if !ok {
			p.never = true
		}
		p.glob = g
	}
	return p, true
}

// trimTrailingSpaces cuts the spaces that end s, unless the first of them
// is escaped by a backslash ("a\ " keeps "a\ "). A backslash ending s
// stops the trimming, as in git.
func trimTrailingSpaces(s string) string {
	cut := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if cut < 0 {
				cut = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			cut = -1
		default:
			cut = -1
		}
	}
	if cut >= 0 {
		return s[:cut]
	}
	return s
}

// Negated reports whether the pattern started with ! (it re-includes
// what it matches).
func (p *Pattern) Negated() bool { return p.negate }

// matches reports whether the pattern speaks of path, a directory when
// isDir (to exclude it, or to include it again when negated). It looks at
// path alone: that a directory above it is excluded is the Matcher's
// business.
func (p *Pattern) matches(path string, isDir bool) bool {
	if p.never || (p.dirOnly && !isDir) {
		return false
	}
	// The pattern speaks only of paths strictly below its file's
	// directory.
	if len(path) <= len(p.base) || !strings.HasPrefix(path, p.base) {
		return false
	}
	name := path[len(p.base):]
	if !p.pathname {
		name = name[strings.LastIndexByte(name, '/')+1:]
	}
	if !strings.HasPrefix(name, p.literal) {
		return false
	}
	rest := name[len(p.literal):]
	if p.glob == nil {
		return rest == ""
	}
	return p.glob.match(rest)
}

// Matcher is an ordered list of patterns, the one with the least
// precedence first: .git/info/exclude, then the .gitignore files from the
// top of the work tree down, each file's lines in order. Patterns of
// sibling directories may come in any order: they never speak of the same
// path.
type Matcher struct {
	patterns []Pattern
}

// Add appends patterns with more precedence than those already held.
func (m *Matcher) Add(ps ...Pattern) { m.patterns = append(m.patterns, ps...) }

// Len is the number of patterns held; Truncate(Len()) after a walk
// leaves a directory drops the patterns it added on the way in.
func (m *Matcher) Len() int { return len(m.patterns) }

// Truncate keeps the first n patterns.
func (m *Matcher) Truncate(n int) { m.patterns = m.patterns[:n] }

// Match returns the pattern that decides path (the last one that matches
// it), or nil when none does. It looks at path alone: the walk of a tree,
// which never enters an excluded directory, needs no more.
func (m *Matcher) Match(path string, isDir bool) *Pattern {
	for i := len(m.patterns) - 1; i >= 0; i-- {
		if m.patterns[i].matches(path, isDir) {
			return &m.patterns[i]
		}
	}
	return nil
}

// Decide is git's answer for path: the pattern that decides it, or nil,
// and whether the path is ignored. A directory above path that is
// excluded decides it (git never reads inside one, so nothing there can
// be included again); otherwise the last pattern matching path itself.
func (m *Matcher) Decide(path string, isDir bool) (*Pattern, bool) {
	for i := 0; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		if p := m.Match(path[:i], true); p != nil && !p.negate {
			return p, true
		}
	}
	p := m.Match(path, isDir)
	return p, p != nil && !p.negate
}

// Ignored reports whether git ignores path, a directory when isDir.
func (m *Matcher) Ignored(path string, isDir bool) bool {
	_, ignored := m.Decide(path, isDir)
	return ignored
}
