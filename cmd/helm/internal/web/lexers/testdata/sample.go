// Package sample holds what a Go lexer meets: TestGoDefinitionLexesAsChromasGo
// compares how ours and chroma's tokenise it.
package sample

import (
	"fmt"
	"strings"
)

//go:generate echo directive

/* a block
   comment */

type point struct {
	x, y float64
	tag  string
}

const (
	hex, oct, bin = 0xFF_FF, 0o17, 0b1010
	flt, exp, img = 1.5, 2e-3, 3i
)

var r, esc = 'x', '\n'

func (p *point) String() string {
	raw := `raw "string" with \ backslash`
	if p == nil || len(p.tag) > 0 && p.x != p.y {
		return fmt.Sprintf("%v %q", hex<<2, raw)
	}
	m := map[string][]int{"a": {1, 2}}
	ch := make(chan any, 1)
	go func() { ch <- m }()
	defer close(ch)
	for i := range 3 {
		switch {
		case i%2 == 0:
			continue
		default:
			p.x += float64(i &^ 1)
		}
	}
	return strings.TrimSpace(p.tag) + "\"done\""
}
