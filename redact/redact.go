// Package redact removes secrets from text before helm stores it: the
// values of the process's secret-looking environment variables, tokens
// the caller names (the identities' gh logins), well-known token shapes
// (GitHub, AWS, Slack, Stripe, JWT, PEM private keys, credentials in
// URLs) and the value of any NAME=VALUE, NAME: VALUE or "NAME": "VALUE"
// whose NAME looks secret. Each secret becomes a marker naming the rule
// that found it, never the value: [REDACTED:github-token],
// [REDACTED:env:GH_TOKEN].
//
// The rules are helm's own. A literal prefilter (the token prefixes, the
// values to hide, the secret-looking words) finds candidates, and the
// regular expressions run only on text that holds one, so text without
// any costs a few substring searches.
package redact

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MinValue is the shortest value hidden because of the name it is
// assigned to (an environment variable, a NAME=VALUE line): shorter ones
// are flags and placeholders more often than secrets.
const MinValue = 8

// secretWords make a name look secret: GH_TOKEN, DB_PASSWORD, API_KEY...
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE_KEY", "CREDENTIAL", "AUTHORIZATION", "COOKIE"}

// LooksSecret reports whether an environment variable, field or header
// name looks like it holds a secret: it contains TOKEN, SECRET, PASSWORD,
// PASSWD, API_KEY, PRIVATE_KEY, CREDENTIAL, AUTHORIZATION or COOKIE, in
// any case, with - or _ between words (X-Api-Key, AWS_SECRET_ACCESS_KEY).
func LooksSecret(name string) bool {
	u := strings.ReplaceAll(strings.ToUpper(name), "-", "_")
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// Pattern is an extra rule: text matching Regexp is a secret, marked
// with Name. When the expression has a group, only the first group's
// text is hidden (the rest, such as a field name, stays).
type Pattern struct {
	Name   string `json:"name"`
	Regexp string `json:"regexp"`
}

// Options say what a Redactor hides besides the built-in shapes.
type Options struct {
	// Environ is the environment (KEY=VALUE) whose secret-looking
	// variables' values are hidden; nil means none.
	Environ []string
	// ExtraEnv names more variables of Environ whose values are hidden.
	ExtraEnv []string
	// Values are literal secrets by the name their marker carries, such as
	// "gh-login:john-agent" for a token read from that identity's hosts.yml.
	Values map[string]string
	// Patterns are extra rules.
	Patterns []Pattern
}

type rule struct {
	name     string
	re       *regexp.Regexp
	literals []string // every match holds one of these (nil: the rule runs on the whole text)
	// find, when set, stands for re and literals: it returns the spans
	// to hide, in order.
	find func(s string) []finding
	// after is how far past a literal a match may end (default
	// defaultReach); matches start at most defaultReach before one.
	after int
}

// defaultReach bounds how far from its literal a match may reach: the
// regular expressions run on windows this wide around each literal, not
// on the whole text.
const defaultReach = 1024

type value struct{ name, text string }

// Redactor hides secrets in text. It is safe for concurrent use.
type Redactor struct {
	values []value // longest first, so a value inside another is not half hidden
	rules  []rule
	lits   *anchorSet // the rules' literals, by rule index
}

// The token shapes match wherever they stand, not only between word
// boundaries: a token glued to a word or an underscore (MY_TOKEN_ghp_…,
// "aghp_…") is as secret as one standing alone, and hiding a little too
// much is cheaper than storing a token.
var builtin = []rule{
	{name: "private-key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)`), literals: []string{"PRIVATE KEY"}, after: 1 << 16},
	{name: "github-token", re: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`), literals: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{name: "aws-access-key-id", re: regexp.MustCompile(`(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}`), literals: []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA"}},
	{name: "slack-token", re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), literals: []string{"xox"}},
	{name: "stripe-key", re: regexp.MustCompile(`[rs]k_(?:live|test)_[0-9A-Za-z]{10,}`), literals: []string{"k_live_", "k_test_"}},
	{name: "jwt", re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{8,}`), literals: []string{"eyJ"}},
	// scheme://user:password@ keeps the scheme and user.
	{name: "url-credentials", re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:"'<>]*:([^/@\s"'<>]+)@`), literals: []string{"://"}},
	// NAME=VALUE, NAME: VALUE, "NAME": "VALUE" with a secret-looking NAME
	// (what the env rule does for variables, for any text: .env files,
	// YAML, JSON, command lines), found by assignments in one pass.
	{name: "secret-assignment", find: assignments},
}

// New returns a Redactor with the built-in rules and what opts adds. A
// pattern that does not compile is an error naming it.
func New(opts Options) (*Redactor, error) {
	r := &Redactor{rules: append([]rule(nil), builtin...)}
	extra := map[string]bool{}
	for _, n := range opts.ExtraEnv {
		extra[n] = true
	}
	seen := map[string]bool{}
	add := func(name, text string) {
		if len(text) < MinValue || seen[text] {
			return
		}
		seen[text] = true
		r.values = append(r.values, value{name: name, text: text})
	}
	for _, kv := range opts.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (extra[k] || LooksSecret(k)) {
			add("env:"+k, v)
		}
	}
	names := make([]string, 0, len(opts.Values))
	for n := range opts.Values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(n, opts.Values[n])
	}
	sort.SliceStable(r.values, func(i, j int) bool { return len(r.values[i].text) > len(r.values[j].text) })
	for _, p := range opts.Patterns {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w", p.Name, err)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("redaction pattern %q has no name", p.Regexp)
		}
		r.rules = append(r.rules, rule{name: p.Name, re: re})
	}
	var lits []string
	var ids []int
	for i, ru := range r.rules {
		for _, l := range ru.literals {
			lits, ids = append(lits, l), append(ids, i)
		}
	}
	r.lits = newAnchorSet(lits, ids)
	return r, nil
}

// candidates reports, by rule, whether the rule may match in s: it has no
// literals, or s holds one of them.
func (r *Redactor) candidates(s string) []bool {
	is := make([]bool, len(r.rules))
	for i, ru := range r.rules {
		is[i] = ru.literals == nil || ru.find != nil
	}
	r.lits.each(s, len(s), func(id, _ int) { is[id] = true })
	return is
}

// Marker is what stands in for a secret found by rule name.
func Marker(name string) string { return "[REDACTED:" + name + "]" }

// String returns s with every secret replaced by its marker, and how many
// were replaced.
func (r *Redactor) String(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	n := 0
	for _, v := range r.values {
		if strings.Contains(s, v.text) {
			c := strings.Count(s, v.text)
			s = strings.ReplaceAll(s, v.text, Marker(v.name))
			n += c
		}
	}
	candidate := r.candidates(s) // on the text before any is hidden: a marker adds no literal
	for i, ru := range r.rules {
		if !candidate[i] {
			continue
		}
		var k int
		s, k = ru.apply(s)
		n += k
	}
	return s, n
}

// apply replaces the rule's matches in s: the first group when the
// expression has one, else the whole match. A match that is a marker
// already is left alone.
func (ru rule) apply(s string) (string, int) {
	var b strings.Builder
	last, n := 0, 0
	for _, sp := range ru.matches(s) {
		start, end := sp[0], sp[1]
		if start < last || strings.HasPrefix(s[start:end], "[REDACTED:") {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Marker(ru.name))
		last = end
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// finding is what a rule found: the text it matched, and the part of it
// to hide (all of it, or an expression's first group).
type finding struct {
	match, hide [2]int
}

// matches returns the spans to hide, in order.
func (ru rule) matches(s string) [][2]int {
	found := ru.findings(s)
	spans := make([][2]int, len(found))
	for i, f := range found {
		spans[i] = f.hide
	}
	return spans
}

// findings returns what the rule finds in s, in order: the expression
// runs on the windows around the literals (merged where they overlap), or
// on the whole text for a rule without literals.
func (ru rule) findings(s string) []finding {
	if ru.find != nil {
		return ru.find(s)
	}
	var wins [][2]int
	if ru.literals == nil {
		wins = [][2]int{{0, len(s)}}
	} else {
		after := ru.after
		if after == 0 {
			after = defaultReach
		}
		for _, l := range ru.literals {
			for from := 0; ; {
				i := strings.Index(s[from:], l)
				if i < 0 {
					break
				}
				i += from
				wins = append(wins, [2]int{max(0, i-defaultReach), min(len(s), i+len(l)+after)})
				from = i + len(l)
			}
		}
		sort.Slice(wins, func(i, j int) bool { return wins[i][0] < wins[j][0] })
		merged := wins[:0]
		for _, w := range wins {
			if k := len(merged) - 1; k >= 0 && w[0] <= merged[k][1] {
				merged[k][1] = max(merged[k][1], w[1])
				continue
			}
			merged = append(merged, w)
		}
		wins = merged
	}
	var found []finding
	for _, w := range wins {
		for _, loc := range ru.re.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			start, end := loc[0], loc[1]
			if len(loc) >= 4 && loc[2] >= 0 {
				start, end = loc[2], loc[3]
			}
			found = append(found, finding{match: [2]int{w[0] + loc[0], w[0] + loc[1]}, hide: [2]int{w[0] + start, w[0] + end}})
		}
	}
	return found
}

// assignWords are the lower-case words that make a name in NAME=VALUE
// look secret to the secret-assignment rule.
var assignWords = []string{"token", "secret", "password", "passwd", "api_key", "api-key", "apikey", "private_key", "private-key", "privatekey", "credential"}

// assignSet finds assignWords (their ids are their indexes).
var assignSet = newAnchorSet(assignWords, func() []int {
	ids := make([]int, len(assignWords))
	for i := range ids {
		ids[i] = i
	}
	return ids
}())

// appendLower appends s to dst with ASCII upper-case letters lowered,
// eight bytes at a time.
func appendLower(dst []byte, s string) []byte {
	n := len(dst)
	dst = append(dst, s...)
	b := dst[n:]
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		h := w & (0x7f * ones)
		// The high bit of each byte of upper is set where the byte is
		// ASCII and in 'A'..'Z': at least 'A', not past 'Z'.
		upper := ((h + (0x80-'A')*ones) ^ (h + (0x80-'Z'-1)*ones)) &^ w & (0x80 * ones)
		binary.LittleEndian.PutUint64(b[i:], w|upper>>2)
	}
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// lowerChunk is how much text assignments lowers at a time, so that a
// huge sighting costs a bounded buffer, not a second copy of itself.
const lowerChunk = 64 << 10

// assignments returns the spans of the values in NAME=VALUE, NAME: VALUE
// and "NAME": "VALUE" whose NAME (letters, digits, _ . -) holds one of
// assignWords in any case, and whose VALUE (up to a space, quote, comma
// or semicolon) has MinValue characters or more. It finds the words with
// substring searches on a lower-cased copy, a chunk at a time, and reads
// forward from each: linear in the text, where the equivalent regular
// expression, with an unbounded name before the word, backtracked over
// every identifier of source that mentions tokens.
func assignments(s string) []finding {
	var hits [][2]int // the words found: start, end
	buf := make([]byte, 0, min(len(s), lowerChunk+16))
	for off := 0; off < len(s); off += lowerChunk {
		// Lower the chunk and a little of the next, so a word that
		// straddles the border is found (once: its start is in this chunk).
		end := min(len(s), off+lowerChunk+len("private_key"))
		buf = appendLower(buf[:0], s[off:end])
		lowered := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf does not change while it is searched
		assignSet.each(lowered, lowerChunk, func(id, start int) {
			hits = append(hits, [2]int{off + start, off + start + len(assignWords[id])})
		})
	}
	if len(hits) == 0 {
		return nil
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i][0] < hits[j][0] })
	var found []finding
	last := 0
	for _, h := range hits {
		if h[0] < last {
			continue
		}
		j := h[1]
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
		if j == len(s) || (s[j] != ':' && s[j] != '=') {
			continue
		}
		j = skipSpace(s, j+1)
		if j < len(s) && (s[j] == '"' || s[j] == '\'') {
			j++
		}
		v := j
		for j < len(s) && !valueEnd(s[j]) {
			j++
		}
		if utf8.RuneCountInString(s[v:j]) < MinValue {
			continue
		}
		name := h[0] // the match begins where the name does
		for name > 0 && nameByte(s[name-1]) {
			name--
		}
		found = append(found, finding{match: [2]int{name, j}, hide: [2]int{v, j}})
		last = j
	}
	return found
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

// JSON returns the JSON document doc with secrets hidden inside its
// strings, and how many: each string value is redacted as text, and the
// string value of a member whose name looks secret is hidden whole
// (marked secret-field:NAME) when it has MinValue characters or more.
// Object keys, numbers and the layout are kept, so the document decodes
// into the same types. Bytes that are not a JSON document are redacted
// as text.
func (r *Redactor) JSON(doc []byte) ([]byte, int) {
	if r == nil || len(doc) == 0 {
		return doc, 0
	}
	if !json.Valid(doc) {
		s, n := r.String(string(doc))
		return []byte(s), n
	}
	var out bytes.Buffer
	n, last := 0, 0
	var key string // the member name before a ':' (object values)
	for i := 0; i < len(doc); {
		c := doc[i]
		if c != '"' {
			i++
			continue
		}
		end := stringEnd(doc, i)
		tok := doc[i:end]
		// Is it a key (followed by ':')?
		j := end
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\n' || doc[j] == '\r') {
			j++
		}
		text, ok := unquote(tok)
		if !ok {
			i = end
			continue
		}
		if j < len(doc) && doc[j] == ':' {
			key, i = text, end
			continue
		}
		red, k := r.String(text)
		if k == 0 && key != "" && LooksSecret(key) && utf8.RuneCountInString(text) >= MinValue && !strings.HasPrefix(text, "[REDACTED:") {
			red, k = Marker("secret-field:"+key), 1
		}
		key = ""
		if k > 0 {
			enc, _ := marshalString(red)
			out.Write(doc[last:i])
			out.Write(enc)
			last = end
			n += k
		}
		i = end
	}
	if n == 0 {
		return doc, 0
	}
	out.Write(doc[last:])
	return out.Bytes(), n
}

// unquote decodes the JSON string token tok (quotes included), as
// json.Unmarshal would for the escapes a sighting's JSON holds (\n, \t,
// \", \\ ...), without its reflection; a \u escape, or bytes that are
// not UTF-8 after an escape, go to json.Unmarshal itself. ok is false when
// tok is not a string.
func unquote(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	body := tok[1 : len(tok)-1]
	bs := bytes.IndexByte(body, '\\')
	if bs < 0 && utf8.Valid(body) {
		return string(body), true
	}
	if bs < 0 {
		return unmarshalString(tok)
	}
	out := make([]byte, bs, len(body))
	copy(out, body)
	for i := bs; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u, or not JSON
			return unmarshalString(tok)
		}
	}
	if !utf8.Valid(out) {
		return unmarshalString(tok)
	}
	return string(out), true
}

func unmarshalString(tok []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}

// stringEnd returns the index just after the JSON string starting at
// doc[i] (a '"').
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

func marshalString(s string) ([]byte, error) {
	// As json.Marshal writes it (HTML characters escaped too), so that a
	// redacted document is encoded as the rest of it was, and as a
	// sighting streamed through Writer is.
	return json.Marshal(s)
}
