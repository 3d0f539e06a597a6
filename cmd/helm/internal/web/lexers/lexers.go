// Package lexers chooses a lexer by file name among a curated set of
// chroma's XML lexer definitions (chroma v2.27.0, MIT: see COPYING and
// README.md), for the languages a coding agent's repository mostly
// holds. The definitions are embedded and read on the first Match, not
// at package init: chroma's own lexers package parses all its 279 when
// any program that links it starts, which cost every helm command
// milliseconds though only helm serve highlights.
package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded/*.xml
var embedded embed.FS

var (
	once     sync.Once
	registry *chroma.LexerRegistry // nil until the first Match
)

// build makes the registry of the embedded definitions. chroma reads a
// definition's config now and its rules when the lexer first tokenises.
func build() {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil {
		panic(err) // the pattern is well formed
	}
	for _, path := range paths {
		// The definitions are chroma's own (and go.xml ours), and
		// TestEveryDefinitionParses parses each: none fails here.
		reg.Register(chroma.MustNewXMLLexer(embedded, path))
	}
	registry = reg
}

// Match returns the lexer whose file name patterns match filename's base
// name (chroma's rules: the highest priority wins, and a backup suffix
// such as .orig or .bak is ignored), or nil when none does: the file is
// then plain text.
func Match(filename string) chroma.Lexer {
	once.Do(build)
	return registry.Match(filename)
}
