package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// node is a JSON value of a settings document and where its bytes are:
// doc[start:end]. Objects keep their members in the document's order,
// arrays their elements, so an edit can splice bytes and leave the rest
// of the document exactly as it was.
type node struct {
	kind       byte // '{', '[', '"', or 'v' for a number or literal
	start, end int
	members    []member // of an object
	elems      []*node  // of an array
	str        string   // a string's value
}

type member struct {
	key      string
	keyStart int
	val      *node
}

func (n *node) member(key string) (int, *node) {
	for i, m := range n.members {
		if m.key == key {
			return i, m.val
		}
	}
	return -1, nil
}

// SyntaxError is a settings document that is not a JSON object: where
// (line and column, from 1) and what.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func syntaxErr(doc []byte, off int, format string, args ...any) error {
	off = min(max(off, 0), len(doc))
	line, col := 1, 1
	for _, c := range doc[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// parse reads doc, which must be one JSON object (whitespace around it
// allowed). Comments, which some editors allow in settings files, are
// not JSON and are refused by name.
func parse(doc []byte) (*node, error) {
	if off := commentAt(doc); off >= 0 {
		return nil, syntaxErr(doc, off, "a comment: settings must be plain JSON (remove the comment)")
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, syntaxErr(doc, int(se.Offset)-1, "not JSON: %v", se)
		}
		return nil, syntaxErr(doc, 0, "not JSON: %v", err)
	}
	p := &parser{doc: doc}
	p.space()
	if p.pos >= len(doc) || doc[p.pos] != '{' {
		return nil, syntaxErr(doc, p.pos, "the settings are not a JSON object")
	}
	return p.value(), nil
}

// commentAt returns the offset of the first // or /* outside a string,
// or -1.
func commentAt(doc []byte) int {
	in := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && c == '/' && i+1 < len(doc) && (doc[i+1] == '/' || doc[i+1] == '*'):
			return i
		}
	}
	return -1
}

// parser walks a document that json.Unmarshal has accepted: it need not
// check the grammar again, only find where each value is.
type parser struct {
	doc []byte
	pos int
}

func (p *parser) space() {
	for p.pos < len(p.doc) {
		switch p.doc[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() *node {
	n := &node{start: p.pos}
	switch c := p.doc[p.pos]; c {
	case '{':
		n.kind = '{'
		p.pos++
		p.space()
		for p.doc[p.pos] != '}' {
			keyStart := p.pos
			key := p.string()
			p.space()
			p.pos++ // ':'
			p.space()
			n.members = append(n.members, member{key: key, keyStart: keyStart, val: p.value()})
			p.space()
			if p.doc[p.pos] == ',' {
				p.pos++
				p.space()
			}
		}
		p.pos++
	case '[':
		n.kind = '['
		p.pos++
		p.space()
		for p.doc[p.pos] != ']' {
			n.elems = append(n.elems, p.value())
			p.space()
			if p.doc[p.pos] == ',' {
				p.pos++
				p.space()
			}
		}
		p.pos++
	case '"':
		n.kind = '"'
		n.str = p.string()
	default:
		n.kind = 'v'
		for p.pos < len(p.doc) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(p.doc[p.pos])) {
			p.pos++
		}
	}
	n.end = p.pos
	return n
}

func (p *parser) string() string {
	start := p.pos
	p.pos++
	for p.doc[p.pos] != '"' {
		if p.doc[p.pos] == '\\' {
			p.pos++
		}
		p.pos++
	}
	p.pos++
	var s string
	_ = json.Unmarshal(p.doc[start:p.pos], &s) // valid: the document is
	return s
}
