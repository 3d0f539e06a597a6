// Package style is chroma's "github" style (chroma v2.27.0, MIT: see
// COPYING), parsed on first use: chroma's styles package parses all its
// ~70 styles when the program starts, which cost every helm command about
// 7 ms though only helm serve highlights, with this one style.
package style

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed github.xml
var githubXML string

// GitHub returns chroma's "github" style.
var GitHub = sync.OnceValue(func() *chroma.Style {
	s, err := chroma.NewXMLStyle(strings.NewReader(githubXML))
	if err != nil {
		panic(err) // the embedded file is chroma's own: it parses
	}
	return s
})
