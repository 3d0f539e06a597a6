package policy

import (
	"slices"
	"strconv"
)

// The TOML decoder keeps no positions for keys, so the lines that errors
// and rules name come from a scan of the text: definitions follows TOML's
// comments, strings (all four kinds) and brackets closely enough that text
// inside a value is never taken for a header or a key. It does not
// validate; Parse uses its lines only when its [[rule]] headers agree in
// number with the rules the decoder found.

// definition is one table header or key assignment of a TOML document.
type definition struct {
	// path is the full key: a header's table, or the enclosing table's
	// path followed by the assigned (dotted) key.
	path []string
	// line is 1-based.
	line int
	// header is a [table] or [[array]] header; array an [[array]] one.
	header, array bool
}

// definitions returns the headers and assignments of data in order.
func definitions(data string) []definition {
	var (
		defs  []definition
		table []string
	)
	line := 1
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\n':
			line++
			i++
		case c == '#':
			i = lineEnd(data, i)
		case c == '[':
			array := i+1 < len(data) && data[i+1] == '['
			j := i + 1
			if array {
				j++
			}
			path, _ := scanKey(data, j)
			table = path
			defs = append(defs, definition{path: path, line: line, header: true, array: array})
			i = lineEnd(data, i)
		default:
			path, j := scanKey(data, i)
			defs = append(defs, definition{path: append(slices.Clone(table), path...), line: line})
			if j < len(data) && data[j] == '=' {
				j++
			}
			i, line = skipValue(data, j, line)
		}
	}
	return defs
}

// lineEnd returns the index of the newline ending the line at i, or
// len(data).
func lineEnd(data string, i int) int {
	for i < len(data) && data[i] != '\n' {
		i++
	}
	return i
}

// scanKey reads a dotted key (bare, "basic" or 'literal' parts) at i and
// returns its parts, unquoted, and the index after it and the blanks that
// follow.
func scanKey(data string, i int) ([]string, int) {
	var parts []string
	for {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
			i++
		}
		if i >= len(data) {
			return parts, i
		}
		start := i
		switch data[i] {
		case '"':
			i++
			for i < len(data) && data[i] != '"' && data[i] != '\n' {
				if data[i] == '\\' && i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
				i++
			}
			if i < len(data) && data[i] == '"' {
				i++
			}
			part, err := strconv.Unquote(data[start:i])
			if err != nil {
				part = data[start:i] // an escape Go spells differently: the line may be missed
			}
			parts = append(parts, part)
		case '\'':
			i++
			for i < len(data) && data[i] != '\'' && data[i] != '\n' {
				i++
			}
			parts = append(parts, data[start+1:i])
			if i < len(data) && data[i] == '\'' {
				i++
			}
		default:
			for i < len(data) && isBareKeyChar(data[i]) {
				i++
			}
			if i == start {
				return parts, i
			}
			parts = append(parts, data[start:i])
		}
		for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
			i++
		}
		if i >= len(data) || data[i] != '.' {
			return parts, i
		}
		i++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// skipValue skips the value starting at i, which may span lines inside
// brackets or a multi-line string, and returns the index of the newline
// that ends it (or len(data)) with the line number there.
func skipValue(data string, i, line int) (int, int) {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '\n':
			if depth == 0 {
				return i, line
			}
			line++
			i++
		case '#':
			i = lineEnd(data, i)
		case '"', '\'':
			i, line = skipString(data, i, line)
		case '[', '{':
			depth++
			i++
		case ']', '}':
			if depth > 0 {
				depth--
			}
			i++
		default:
			i++
		}
	}
	return i, line
}

// skipString skips the string opening at data[i] (a quote) and returns the
// index after it with the line number there. A single-line string ends at
// the end of its line at the latest.
func skipString(data string, i, line int) (int, int) {
	q := data[i]
	escapes := q == '"'
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		i += 3
		for i < len(data) {
			switch {
			case escapes && data[i] == '\\':
				i++
				if i < len(data) {
					if data[i] == '\n' {
						line++
					}
					i++
				}
			case data[i] == q && i+2 < len(data) && data[i+1] == q && data[i+2] == q:
				i += 3
				// Up to two more quotes before the closing three are content.
				for n := 0; n < 2 && i < len(data) && data[i] == q; n++ {
					i++
				}
				return i, line
			case data[i] == '\n':
				line++
				i++
			default:
				i++
			}
		}
		return i, line
	}
	i++
	for i < len(data) && data[i] != '\n' {
		if data[i] == q {
			return i + 1, line
		}
		if escapes && data[i] == '\\' && i+1 < len(data) && data[i+1] != '\n' {
			i++
		}
		i++
	}
	return i, line
}
