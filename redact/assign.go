package redact

import (
	"strings"
	"unicode/utf8"
)

// assignWords are the lower-case words that make a name in NAME=VALUE
// look secret to the secret-assignment rule.
var assignWords = []string{"token", "secret", "password", "passwd", "api_key", "api-key", "apikey", "private_key", "private-key", "privatekey", "credential"}

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
		name := nameStart(s, h.start)
		if notSecretName(s[name:last]) || codeOrPlaceholder(s[v:e]) || name > 0 && strings.IndexByte("?&#", s[name-1]) >= 0 {
			// A URL's query parameter is url-query-secret's, whose value
			// ends at the next &.
			last = e // as the expression, the match read and let go
			continue
		}
		found = append(found, finding{match: [2]int{name, j}, hide: [2]int{v, j}})
		last = j
	}
	return found
}

// notSecretName reports whether a name holding a secret word names
// something about a secret rather than the secret: it ends in a word such
// as Name, File, Path, URL, ID or Type (secretName: my-app-tls,
// TOKEN_FILE=/run/token).
func notSecretName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range notSecretSuffixes {
		if !strings.HasSuffix(lower, w) || len(name) == len(w) {
			continue
		}
		at := len(name) - len(w)
		if c := name[at-1]; c == '_' || c == '-' || c == '.' || 'A' <= name[at] && name[at] <= 'Z' && 'a' <= c && c <= 'z' {
			return true
		}
	}
	return false
}

var notSecretSuffixes = []string{"name", "names", "file", "files", "path", "dir", "url", "uri", "id", "ids", "type", "types", "length", "len", "size", "count", "ref", "endpoint", "header", "field", "prefix", "env", "var", "kind", "mode", "format", "ttl", "timeout", "expiry", "expires", "expiration", "version", "policy", "scope", "scopes"}

// codeOrPlaceholder reports whether a value is code or a reference to a
// secret kept elsewhere, not a secret: a call or index (os.Getenv(,
// env[), a dotted name without digits (cfg.Token, process.env.API_TOKEN),
// or a variable ($TOKEN, ${API_TOKEN}, %(token)s, {{ .Values.token }}).
func codeOrPlaceholder(v string) bool {
	if v == "" {
		return false
	}
	if placeholder(v) {
		return true
	}
	if c := v[len(v)-1]; c == '(' || c == '[' {
		return true
	}
	if i := strings.IndexByte(v, '('); i > 0 && strings.HasSuffix(strings.TrimRight(v, ";,"), ")") && dotted(v[:i]) {
		return true // f(x), pkg.F(x)
	}
	return strings.Contains(v, ".") && dotted(v) && !strings.ContainsAny(v, "0123456789")
}

// placeholder reports whether v stands for a value given elsewhere:
// $TOKEN, ${TOKEN}, %(token)s, {{ .Values.token }}, <token>.
func placeholder(v string) bool {
	return v != "" && strings.IndexByte("$%{<", v[0]) >= 0
}

// dotted reports whether v is identifiers joined by dots.
func dotted(v string) bool {
	for _, part := range strings.Split(v, ".") {
		if part == "" || !(part[0] == '_' || 'a' <= part[0] && part[0] <= 'z' || 'A' <= part[0] && part[0] <= 'Z') {
			return false
		}
		for i := range len(part) {
			if c := part[i]; !isAlnum(c) && c != '_' {
				return false
			}
		}
	}
	return true
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
