package lexers

import (
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// HTML lexer.
var HTML = sync.OnceValue(func() *chroma.RegexLexer { return chroma.MustNewXMLLexer(embedded, "embedded/html.xml") })
