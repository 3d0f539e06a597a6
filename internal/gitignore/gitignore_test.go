package gitignore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/gitignore"
)

// Each rule of gitignore(5), on a tree built for it: the matcher gives
// the answer the real `git check-ignore` gives for every path, and names
// the same deciding line.
func TestMatcherAgreesWithGitCheckIgnore(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{
			name:  "blank lines and comments match nothing",
			files: map[string]string{".gitignore": "\n# a\n#b\n   \n\t\n", "a": "", "#a": "", "# a": "", "b": ""},
		},
		{
			name:  "an escaped hash and bang are literal",
			files: map[string]string{".gitignore": "\\#a\n\\!b\n", "#a": "", "!b": "", "a": "", "b": ""},
		},
		{
			name:  "trailing spaces are cut unless escaped",
			files: map[string]string{".gitignore": "a  \nb\\ \nc\\  \nd\\\\ \n", "a": "", "a ": "", "b": "", "b ": "", "c ": "", "c  ": "", "d\\": "", "d\\ ": ""},
		},
		{
			name:  "a CR before the newline is dropped and a BOM is skipped",
			files: map[string]string{".gitignore": "\uFEFFa\r\nb\r\n", "a": "", "b": "", "\uFEFFa": ""},
		},
		{
			name:  "a last line without a newline counts",
			files: map[string]string{".gitignore": "a\nb", "a": "", "b": "", "c": ""},
		},
		{
			name:  "negation re-includes and the last line wins",
			files: map[string]string{".gitignore": "*.log\n!keep.log\nkeep2.log\n!keep2.log\nagain.log\n", "a.log": "", "keep.log": "", "keep2.log": "", "again.log": "", "d/keep.log": ""},
		},
		{
			name:  "a pattern without slash matches a name at any depth",
			files: map[string]string{".gitignore": "build\n", "build/x": "", "src/build": "", "src/builder": "", "a/b/build/": ""},
		},
		{
			name:  "a leading slash anchors to the file's directory",
			files: map[string]string{".gitignore": "/top.txt\n/dir/\n", "top.txt": "", "sub/top.txt": "", "dir/x": "", "sub/dir/x": ""},
		},
		{
			name:  "a middle slash anchors too",
			files: map[string]string{".gitignore": "doc/frotz\na/*.c\n", "doc/frotz": "", "x/doc/frotz": "", "a/b.c": "", "a/x/b.c": "", "x/a/b.c": ""},
		},
		{
			name:  "a trailing slash matches directories only",
			files: map[string]string{".gitignore": "build/\nlib/x/\n", "build/y": "", "src/build": "", "lib/x/z": "", "lib/y/x": ""},
		},
		{
			name:  "two trailing slashes match nothing",
			files: map[string]string{".gitignore": "a//\n", "a/x": "", "b/a/": ""},
		},
		{
			name:  "star and question mark stay within a name",
			files: map[string]string{".gitignore": "*.o\na?c\nx/*/y\n", "m.o": "", "d/n.o": "", ".o": "", "abc": "", "a/c/": "", "ac": "", "x/q/y": "", "x/q/r/y": "", "x/y": ""},
		},
		{
			name:  "classes with ranges, negation and escapes",
			files: map[string]string{".gitignore": "[abc]1\n[!abc]2\n[^x]3\n[a-c]4\n[]]5\n[\\]]6\n[a-]7\n[-a]8\n[z-a]9\n", "a1": "", "d1": "", "a2": "", "d2": "", "x3": "", "y3": "", "b4": "", "d4": "", "]5": "", "]6": "", "-7": "", "a7": "", "-8": "", "a9": "", "z9": ""},
		},
		{
			name:  "a class or a question mark never matches a slash",
			files: map[string]string{".gitignore": "x[!y]z\nq?r\nm[/]n\n", "x/z": "", "xaz": "", "q/r": "", "qar": "", "m/n": ""},
		},
		{
			name:  "POSIX class names",
			files: map[string]string{".gitignore": "[[:digit:]]d\n[[:upper:]]u\n[[:space:]]s\n[[:punct:]]p\n[[:xdigit:]]x\n[[:alpha:][:digit:]]m\n", "1d": "", "ad": "", "Au": "", "au": "", " s": "", "\ts": "", "\vs": "", "_p": "", "ap": "", "fx": "", "gx": "", "am": "", "1m": "", "-m": ""},
		},
		{
			name:  "an unclosed class or an unknown class name matches nothing",
			files: map[string]string{".gitignore": "a[bc\n[[:nope:]]x\n[[:alpha:]y\n", "a[bc": "", "ab": "", "ax": "", "x": "", "ay": "", "[[:alpha:]y": ""},
		},
		{
			name:  "a bracket with no class name after it is a member",
			files: map[string]string{".gitignore": "a[[:]z\n[[:a]w\n", "a[z": "", "a:z": "", "az": "", "[w": "", "aw": "", "]w": ""},
		},
		{
			name:  "leading double star matches in all directories",
			files: map[string]string{".gitignore": "**/foo\n**/bar/baz\n", "foo": "", "a/foo": "", "a/b/foo/": "", "bar/baz": "", "x/bar/baz": "", "x/bar/y/baz": ""},
		},
		{
			name:  "trailing double star matches everything inside",
			files: map[string]string{".gitignore": "abc/**\n", "abc/x": "", "abc/y/z": "", "x/abc/y": ""},
		},
		{
			name:  "a slash double star slash matches zero or more directories",
			files: map[string]string{".gitignore": "a/**/b\n", "a/b": "", "a/x/b": "", "a/x/y/b": "", "a/xb": "", "ab": ""},
		},
		{
			name:  "double stars not between slashes are single stars",
			files: map[string]string{".gitignore": "x**y\nm/n**\n", "xy": "", "xaay": "", "xa/y": "", "m/nqx": "", "m/nq/r": ""},
		},
		{
			name:  "a double star right after the literal lead counts as leading, as in git",
			files: map[string]string{".gitignore": "a**/b\n", "ab": "", "ax/b": "", "ax/y/b": "", "a/b": ""},
		},
		{
			name:  "a nested gitignore applies below its directory only",
			files: map[string]string{".gitignore": "*.tmp\n", "sub/.gitignore": "local.txt\n/anchored\nx/y\n", "a.tmp": "", "local.txt": "", "sub/local.txt": "", "sub/deeper/local.txt": "", "sub/anchored": "", "sub/d/anchored": "", "anchored": "", "sub/x/y": "", "x/y": ""},
		},
		{
			name:  "a deeper gitignore overrides a shallower one",
			files: map[string]string{".gitignore": "*.log\n", "proj/.gitignore": "!important.log\n", "proj/important.log": "", "important.log": "", "proj/other.log": ""},
		},
		{
			name:  "a file in an excluded directory cannot be re-included",
			files: map[string]string{".gitignore": "build/\n!build/keep\n", "build/keep": "", "build/drop": ""},
		},
		{
			name:  "a negated directory's contents can be excluded again",
			files: map[string]string{".gitignore": "/*\n!/foo\n/foo/*\n!/foo/bar\n", "foo/bar/x": "", "foo/baz": "", "other": ""},
		},
		{
			name:  "info exclude has the least precedence",
			files: map[string]string{".git/info/exclude": "*.bak\n!keep.txt\n", ".gitignore": "!x.bak\n*.txt\n", "a.bak": "", "x.bak": "", "keep.txt": ""},
		},
		{
			name:  "matching is case-sensitive and byte-wise",
			files: map[string]string{".gitignore": "readme\nnaïve\n?ï\n", "README": "", "readme": "", "naïve": "", "naive": "", "aï": "", "ï": ""},
		},
		{
			name:  "special characters in names are literal in paths",
			files: map[string]string{".gitignore": "\\*\n\\?x\n\\[a]\n", "*": "", "a": "", "?x": "", "ax": "", "[a]": "", "a]": ""},
		},
		{
			name:  "a backslash ending a pattern matches nothing",
			files: map[string]string{".gitignore": "a\\\n", "a\\": "", "a": ""},
		},
		{
			name:  "a lone bang or slash matches nothing",
			files: map[string]string{".gitignore": "*\n!\n/\n!/\n", "a": "", "b/c": ""},
		},
		{
			name:  "an escaped slash after a double star is literal",
			files: map[string]string{".gitignore": "**\\/foo\nd/**\\/bar\n", "foo": "", "x/foo": "", "d/bar": "", "d/x/bar": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := build(t, layout{files: tt.files})
			compare(t, top, paths(t, top))
		})
	}
}

func TestParseLineSkipsBlankAndComment(t *testing.T) {
	for _, line := range []string{"", "#", "# x", "   ", "\r"} {
		_, ok := gitignore.ParseLine(line, "")
		assert.False(t, ok, "%q", line)
	}
	p, ok := gitignore.ParseLine("!a/ \r", "sub")
	require.True(t, ok)
	assert.Equal(t, "!a/", p.Text)
	assert.True(t, p.Negated())
	var m gitignore.Matcher
	m.Add(p)
	got, ignored := m.Decide("sub/x/a", true)
	require.NotNil(t, got)
	assert.Equal(t, "!a/", got.Text)
	assert.False(t, ignored, "a negated pattern re-includes")
	assert.Nil(t, m.Match("sub/x/a", false), "directories only")
	assert.Nil(t, m.Match("a", true), "outside the file's directory")
}

func TestParseNumbersLinesAndNamesTheSource(t *testing.T) {
	ps := gitignore.Parse([]byte("\uFEFF# c\n\na\r\n!b"), "d", "d/.gitignore")
	require.Len(t, ps, 2)
	assert.Equal(t, "d/.gitignore", ps[0].Source)
	assert.Equal(t, 3, ps[0].Line)
	assert.Equal(t, 4, ps[1].Line)
	assert.Equal(t, "!b", ps[1].Text)
}
