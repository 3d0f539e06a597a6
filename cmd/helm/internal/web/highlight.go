package web

import (
	"bytes"
	"html/template"

	"github.com/alecthomas/chroma/v2"
	chtml "github.com/alecthomas/chroma/v2/formatters/html"

	"github.com/helmlog/helm/cmd/helm/internal/web/lexers"
	"github.com/helmlog/helm/cmd/helm/internal/web/style"
)

// Syntax highlighting of file contents, by chroma: the lexer is chosen by
// the file's name, and the markup uses CSS classes only (chroma.css, made
// from the style below), never inline styles, which the CSP refuses.

// highlightMax is the longest text highlighted; a longer one is shown
// plain, as lexing costs far more than escaping.
const highlightMax = 256 << 10

var formatter = chtml.New(chtml.WithClasses(true), chtml.WithLineNumbers(true), chtml.ClassPrefix("hl-"))

// highlight returns text as highlighted HTML, chroma escaping every token;
// ok is false when the text is not highlighted (too long, or no lexer
// knows the file's name), and the caller shows it plain.
func highlight(name, text string) (template.HTML, bool) {
	if len(text) > highlightMax {
		return "", false
	}
	lexer := lexers.Match(name)
	if lexer == nil {
		return "", false
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, text)
	if err != nil {
		return "", false
	}
	var b bytes.Buffer
	if err := formatter.Format(&b, style.GitHub(), it); err != nil {
		return "", false
	}
	// chroma escapes each token's text (html.EscapeString) and writes
	// only its own tags and class names.
	return template.HTML(b.String()), true
}

// highlightCSS is the style sheet of the highlighting's classes.
func highlightCSS() ([]byte, error) {
	var b bytes.Buffer
	if err := formatter.WriteCSS(&b, style.GitHub()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
