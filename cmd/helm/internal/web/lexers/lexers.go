// Package lexers is a copy of chroma's lexers package (v2.27.0, MIT: see
// COPYING) whose registry is built on first use rather than at package
// init: chroma's parses all its 279 embedded definitions when the program
// starts, which cost every helm command (helm version included) about
// 5 ms though only helm serve highlights. README.md says what differs
// from chroma's and how to refresh the copy.
package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// pending holds the lexers registered before the registry was built:
// the functions that make them.
var pending []func() chroma.Lexer

// registry builds the registry of all lexers, once.
var registry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil {
		panic(err)
	}
	for _, path := range paths {
		reg.Register(chroma.MustNewXMLLexer(embedded, path))
	}
	for _, l := range pending {
		reg.Register(l())
	}
	pending = nil // the lexers are in the registry now
	// chroma's package init sets these embedded lexers' analysers.
	setDNSAnalyser(reg)
	setMySQLAnalyser(reg)
	setZedAnalyser(reg)
	return reg
})

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return registry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return registry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return registry().Match(filename)
}

// Register adds the lexer that lexer makes to the registry when it is
// built: only the lexers of this package call it, at init.
func Register(lexer func() chroma.Lexer) struct{} {
	pending = append(pending, lexer)
	return struct{}{}
}
