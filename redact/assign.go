package redact

import (
	"sort"
	"unicode/utf8"
)

// assignWords are the lower-case words that make a name in NAME=VALUE
// look secret to the secret-assignment rule.
var assignWords = []string{"token", "secret", "password", "passwd", "api_key", "api-key", "apikey", "private_key", "private-key", "privatekey", "credential"}

// assignSet finds assignWords, for assignments on its own (the
// Redactor finds them with every other literal, in one pass).
var assignSet = newLitSet(assignWords)

// assignments returns what the secret-assignment rule finds in s.
func assignments(s string) []finding {
	var hits []hit
	assignSet.each(s, func(lit, start int) { hits = append(hits, hit{start: start, lit: lit}) })
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	return assignmentsAt(s, hits)
}

// assignmentsAt returns the spans of the values in NAME=VALUE, NAME: VALUE,
// NAME := VALUE, NAME => VALUE, NAME ?= VALUE and "NAME": "VALUE" whose
// NAME (letters, digits, _ . -) holds one of assignWords in any case (the
// hits, in order of start), and whose VALUE (up to a space, quote, comma
// or semicolon) has MinValue characters or more. It reads forward from
// each word: linear in the text, where the equivalent regular
// expression, with an unbounded name before the word, backtracked over
// every identifier of source that mentions tokens.
func assignmentsAt(s string, hits []hit) []finding {
	var found []finding
	last := 0
	for _, h := range hits {
		if h.start < last {
			continue
		}
		j := h.start + len(assignWords[h.lit])
		for j < len(s) && nameByte(s[j]) {
			j++
		}
		// Every later word inside this name ends at the same place, with
		// the same outcome: a failed name is not read again for each of
		// its words (tokentokentoken... stays linear).
		last = j
		if j < len(s) && (s[j] == '"' || s[j] == '\'') {
			j++
		}
		j = skipSpace(s, j)
		if j == len(s) {
			continue
		}
		op := j
		switch {
		case s[j] == ':' && j+1 < len(s) && s[j+1] == '=', s[j] == '=' && j+1 < len(s) && s[j+1] == '>', s[j] == '?' && j+1 < len(s) && s[j+1] == '=':
			j += 2
		case s[j] == ':' || s[j] == '=':
			j++
		default:
			continue
		}
		v, e := assignedValue(s, j)
		if utf8.RuneCountInString(s[v:e]) < MinValue && j == op+2 && s[op] != '?' {
			// As the expression would: the operator's first byte alone,
			// and the value from its second (token:=abcdefg).
			v, e = assignedValue(s, op+1)
		}
		if utf8.RuneCountInString(s[v:e]) < MinValue {
			continue
		}
		j = e
		name := h.start // the match begins where the name does
		for name > 0 && nameByte(s[name-1]) {
			name--
		}
		found = append(found, finding{match: [2]int{name, j}, hide: [2]int{v, j}})
		last = j
	}
	return found
}

// assignedValue returns the value that starts at i, past blanks and a
// quote: up to a blank, quote, comma or semicolon.
func assignedValue(s string, i int) (start, end int) {
	i = skipSpace(s, i)
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	j := i
	for j < len(s) && !valueEnd(s[j]) {
		j++
	}
	return i, j
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func valueEnd(c byte) bool { return isSpace(c) || c == '"' || c == '\'' || c == ',' || c == ';' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}
