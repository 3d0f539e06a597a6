package gitignore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Pieces that random patterns are made of: the syntax of gitignore(5)
// and the bytes that trip matchers up (escapes, brackets, spaces,
// bytes above 127).
var patternPieces = []string{
	"a", "b", "ab", "ba", "c", "A", ".", "-", "x y", "é",
	"*", "*", "**", "***", "?", "/", "/", "/",
	"[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[\\]]", "[a-]", "[[:alpha:]]", "[[:digit:][:space:]]", "[[:punct:]]", "[é]", "[",
	"\\*", "\\?", "\\[", "\\ ", "\\a", "\\\\", "\\/", "]", "!", "#", " ",
}

// Names that random trees are made of; none starts with ":", which git
// would read as pathspec magic.
var nameParts = []string{
	"a", "b", "ab", "ba", "abc", "c", "A", "x y", "a ", "é", "-", "!a", "#a", "a.b", ".a",
	"*", "?", "[a]", "\\", "]", "1", "_",
}

func randomPattern(r *rand.Rand) string {
	var b strings.Builder
	switch r.IntN(6) {
	case 0:
		b.WriteString("!")
	case 1:
		b.WriteString("/")
	}
	for n := 1 + r.IntN(4); n > 0; n-- {
		b.WriteString(patternPieces[r.IntN(len(patternPieces))])
	}
	if r.IntN(5) == 0 {
		b.WriteString("/")
	}
	if r.IntN(10) == 0 {
		b.WriteString(" ")
	}
	return b.String()
}

func randomName(r *rand.Rand) string {
	name := nameParts[r.IntN(len(nameParts))]
	if r.IntN(3) == 0 {
		name += nameParts[r.IntN(len(nameParts))]
	}
	return name
}

// randomCase writes, under dir, one ignore file of random patterns (and
// sometimes a second one below it) and a random tree of up to a few dozen
// files and directories, three levels deep at most.
func randomCase(t *testing.T, r *rand.Rand, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	writeIgnore := func(at string) {
		var lines []string
		for n := 1 + r.IntN(4); n > 0; n-- {
			lines = append(lines, randomPattern(r))
		}
		require.NoError(t, os.WriteFile(filepath.Join(at, ".gitignore"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	writeIgnore(dir)
	var dirs []string
	for n := 4 + r.IntN(20); n > 0; n-- {
		parent := dir
		if len(dirs) > 0 && r.IntN(3) > 0 {
			parent = dirs[r.IntN(len(dirs))]
		}
		if strings.Count(parent[len(dir):], string(filepath.Separator)) >= 3 {
			parent = dir
		}
		p := filepath.Join(parent, randomName(r))
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if r.IntN(3) == 0 {
			require.NoError(t, os.Mkdir(p, 0o755))
			dirs = append(dirs, p)
			if r.IntN(4) == 0 {
				writeIgnore(p)
			}
			continue
		}
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
}

// Hundreds of random patterns over random trees: the matcher gives git's
// answer for every path. Each case lives in its own directory of one work
// tree (so its patterns are anchored there, as in a nested .gitignore);
// the seed is fixed so that a failure reproduces, and -short samples
// fewer cases.
func TestMatcherAgreesWithGitOnRandomPatterns(t *testing.T) {
	t.Parallel()
	cases := 600
	if testing.Short() {
		cases = 150
	}
	r := rand.New(rand.NewPCG(30, 2026))
	top := build(t, layout{})
	for i := range cases {
		dir := filepath.Join(top, fmt.Sprintf("c%03d", i))
		if i%3 == 0 {
			dir = filepath.Join(top, "deep", fmt.Sprintf("c%03d", i))
		}
		randomCase(t, r, dir)
	}
	compare(t, top, paths(t, top))
}

// A random ignore file at the top of a work tree, where patterns have no
// directory in front of them, and one in .git/info/exclude.
func TestMatcherAgreesWithGitOnRandomTopLevelPatterns(t *testing.T) {
	t.Parallel()
	cases := 40
	if testing.Short() {
		cases = 10
	}
	r := rand.New(rand.NewPCG(30, 7))
	for i := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			top := build(t, layout{})
			randomCase(t, r, top)
			if i%4 == 0 {
				require.NoError(t, os.WriteFile(filepath.Join(top, ".git", "info", "exclude"), []byte(randomPattern(r)+"\n"+randomPattern(r)+"\n"), 0o644))
			}
			compare(t, top, paths(t, top))
		})
	}
}
