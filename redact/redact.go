// Package redact removes secrets from text before helm stores it: the
// values of the process's secret-looking environment variables, tokens
// the caller names (the identities' gh logins), the token families
// providers issue in a shape of their own (families.go: GitHub, GitLab,
// AWS, GCP, Anthropic, OpenAI, npm, Slack, Stripe... a row each), JWTs,
// PEM private keys, credentials in URLs, the families known by the name
// they are assigned to (keywords.go: twitter_consumer_secret = "…"), the
// value of any NAME=VALUE, NAME: VALUE or "NAME": "VALUE" whose NAME
// looks secret, and secrets known by where they stand (http.go: HTTP
// Authorization and Cookie headers in free text, --password flags, OAuth
// codes and tokens in URL queries). Each secret becomes a marker naming
// the rule that found it, never the value: [REDACTED:github-token],
// [REDACTED:env:GH_TOKEN].
//
// The rules are helm's own; a differential test in the integration
// module measures them against a maintained scanner's. A literal
// prefilter (literals.go: the token prefixes, the secret-looking words,
// a few hundred in all) finds candidates in one pass, and the rules run
// only where one stands, so text without any costs a table lookup every
// few bytes.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
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
	literals []string // lower-case, found in any case; nil: the rule runs on every text
	// re, when set, runs on the windows around the literals' hits (from
	// before bytes before a hit to after bytes past it, defaultReach when
	// 0), or on the whole text for a rule without literals. When it has a
	// group, the first group's text is hidden; else the whole match.
	re            func() *regexp.Regexp
	before, after int
	// find, when set instead, returns what the rule finds from the hits
	// of its literals, in order of start.
	find func(s string, hits []hit) []finding
}

// hit is a literal found in the text: where it starts, and which of its
// rule's literals it is.
type hit struct{ start, lit int }

// finding is what a rule found: the text it matched, the part of it to
// hide (all of it, or an expression's first group), and the marker's
// name when it is not the rule's (a keyed family's).
type finding struct {
	match, hide [2]int
	name        string
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
	lits   *litSet // every rule's literals
	// owner says, by literal in lits, which rule's literal it is (the
	// rule's index and the literal's index in it).
	owner []hit
}

// builtin returns helm's rules, most specific first: where two findings
// overlap, the earlier rule names the marker. The family rows' literals
// and lengths come from the generated familyTable (tables.go).
func builtin() []rule { return builtinFrom(familyTable[:]) }

// builtinFrom returns the built-in rules with fams as the family rows'
// literals and lengths (familyTable, or computed by familyLitsOf).
func builtinFrom(fams []familyLits) []rule {
	rules := familyRules(fams)
	rules = append(rules,
		// The block, from BEGIN to its END line (or the end of a window
		// 64 KiB long, for a block cut short).
		rule{name: "private-key", re: onFirstUse(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:KEY(?: BLOCK)?-----|\z)`), literals: []string{"private key"}, before: 128, after: 1 << 16},
		// Three dot-separated parts, the first two base64url JSON
		// ("ey..."), the signature possibly empty (alg none).
		rule{name: "jwt", re: onFirstUse(`ey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9/\\_-]{15,}\.(?:[A-Za-z0-9/\\_-]*={0,2})?`), literals: []string{".ey"}, before: 4096, after: 16384},
		// A JWT in base64 ("eyJ" encoded again): its first line (a
		// wrapped one goes on below, where the rest of the text may too).
		rule{name: "jwt", re: onFirstUse(`\bZXlK[A-Za-z0-9+/_\\-]{6,}={0,2}`), literals: []string{"zxlk"}, before: 1, after: 1 << 12},
		// scheme://user:password@ keeps the scheme and user.
		rule{name: "url-credentials", re: onFirstUse(`[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:"'<>]*:([^/@\s"'<>]+)@`), literals: []string{"://"}},
		rule{name: "azure-client-secret", re: onFirstUse(`[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`), literals: digitLiterals("", false, "q~"), before: 4, after: 40},
		rule{name: "maxmind-license-key", re: onFirstUse(`[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk`), literals: []string{"_mmk"}, before: 40, after: 4},
		rule{name: "teams-webhook", re: onFirstUse(`\.webhook\.office\.com/webhookb2/([A-Za-z0-9@/_-]{20,})`), literals: []string{".webhook.office.com/"}, before: 1, after: 600},
		// The dots in any byte, as scanners write the host.
		rule{name: "slack-webhook", re: onFirstUse(`hooks.slack.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{20,})`), literals: []string{"slack"}, before: 6, after: 600},
		rule{name: "vault-token", find: vaultLegacyFind, literals: alnumLiterals("s.")},
		rule{name: "facebook-token", find: facebookFind, literals: append(digitLiterals("", true, "|"), digitLiterals("", true, "%")...)},
		rule{name: "authorization", find: authorizationFind, literals: []string{"authorization"}},
		rule{name: "cookie", find: cookieFind, literals: []string{"cookie"}},
		rule{name: "curl-credentials", find: curlFind, literals: []string{"curl"}},
		rule{name: "secret-flag", find: flagFind, literals: flagLiterals},
		rule{name: "url-query-secret", find: queryFind, literals: queryLiterals()},
		rule{name: "config-secret", find: nugetFind, literals: []string{"<add key="}},
		rule{name: "kubernetes-secret", find: kubernetesFind, literals: []string{"data:"}},
	)
	families, generic := keyedRules()
	rules = append(rules, families,
		// NAME=VALUE, NAME: VALUE, "NAME": "VALUE" with a secret-looking
		// NAME (what the env rule does for variables, for any text: .env
		// files, YAML, JSON, command lines), found by assignmentsAt in
		// one pass.
		rule{name: "secret-assignment", find: assignmentsAt, literals: assignWords},
		generic)
	return rules
}

// builtinRules are built once (their expressions compile on first use).
var builtinRules = sync.OnceValue(builtin)

// New returns a Redactor with the built-in rules and what opts adds. A
// pattern that does not compile is an error naming it. opts may be nil:
// the built-in rules alone.
func New(opts *Options) (*Redactor, error) {
	if opts == nil {
		opts = &Options{}
	}
	r := &Redactor{rules: append([]rule(nil), builtinRules()...)}
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
		r.rules = append(r.rules, rule{name: p.Name, re: func() *regexp.Regexp { return re }})
	}
	if len(opts.Patterns) == 0 {
		r.lits, r.owner = builtinLits()
	} else {
		r.lits, r.owner = literalsOf(r.rules)
	}
	return r, nil
}

// builtinLits is the literal set of the built-in rules (the caller's
// patterns have no literals: they run on every text), generated into
// tables.go: building it is most of what building the rules costs, and
// every helm process that records something redacts.
func builtinLits() (*litSet, []hit) { return &builtinLitSet, builtinOwner[:] }

func literalsOf(rules []rule) (*litSet, []hit) {
	var lits []string
	var owner []hit
	for i, ru := range rules {
		for j, l := range ru.literals {
			lits = append(lits, l)
			owner = append(owner, hit{start: i, lit: j})
		}
	}
	return newLitSet(lits), owner
}

// Marker is what stands in for a secret found by rule name.
func Marker(name string) string { return "[REDACTED:" + name + "]" }

// String returns s with every secret replaced by its marker, and how many
// were replaced.
func (r *Redactor) String(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	found := r.spans(s)
	if len(found) == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.start])
		b.WriteString(Marker(f.name))
		last = f.end
	}
	b.WriteString(s[last:])
	return b.String(), len(found)
}

// findings returns what the rule finds in s from the hits of its
// literals: its find's, or its expression's on the windows around the
// hits (merged where they overlap), or on the whole text for a rule
// without literals.
func (ru *rule) findings(s string, hits []hit) []finding {
	if ru.find != nil {
		return ru.find(s, hits)
	}
	var wins [][2]int
	if ru.literals == nil {
		wins = [][2]int{{0, len(s)}}
	} else {
		before, after := ru.before, ru.after
		if before == 0 {
			before = defaultReach
		}
		if after == 0 {
			after = defaultReach
		}
		for _, h := range hits {
			w := [2]int{max(0, h.start-before), min(len(s), h.start+len(ru.literals[h.lit])+after)}
			if k := len(wins) - 1; k >= 0 && w[0] <= wins[k][1] {
				wins[k][1] = max(wins[k][1], w[1])
				continue
			}
			wins = append(wins, w)
		}
	}
	var found []finding
	for _, w := range wins {
		for _, loc := range ru.re().FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			start, end := loc[0], loc[1]
			if len(loc) >= 4 && loc[2] >= 0 {
				start, end = loc[2], loc[3]
			}
			found = append(found, finding{match: [2]int{w[0] + loc[0], w[0] + loc[1]}, hide: [2]int{w[0] + start, w[0] + end}})
		}
	}
	return found
}

// JSON returns the JSON document doc with secrets hidden inside its
// strings, and how many: each string value is redacted as text, and the
// string value of a member whose name looks secret is hidden whole
// (marked secret-field:NAME) when it has MinValue characters or more, as
// is an array's string that follows a secret flag (["--password", "X"]: a
// command's arguments, marked secret-flag). Object keys, numbers and the
// layout are kept, so the document decodes
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
	flag := -1     // where the last string ended, when it was a secret flag (["--password", "X"])
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
		if k == 0 && flag >= 0 && nextInList(doc[flag:i]) && text != "" && text[0] != '-' && !strings.HasPrefix(text, "[REDACTED:") {
			// An argument list's secret flag, then its value.
			red, k = Marker("secret-flag"), 1
		}
		flag = -1
		if secretFlag(text) && inList(doc[:i]) {
			flag = end
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

// inList reports whether the JSON value that follows before is an array
// element: the last byte before it is [ or a comma.
func inList(before []byte) bool {
	t := bytes.TrimRight(before, " \t\r\n")
	return len(t) > 0 && (t[len(t)-1] == '[' || t[len(t)-1] == ',')
}

// nextInList reports whether between holds only a comma between blanks:
// two strings that follow each other in a JSON array.
func nextInList(between []byte) bool {
	t := bytes.TrimSpace(between)
	return len(t) == 1 && t[0] == ','
}

// unquote decodes the JSON string token tok (quotes included), as
// json.Unmarshal would for the escapes a sighting's JSON holds (\n, \t,
// \", \\ ...), without its reflection; a \u escape, or bytes that are
// not UTF-8 after an escape, go to json.Unmarshal itself. ok is false when
// tok is not a string. The text may share tok's bytes: it is valid while
// tok is unchanged.
func unquote(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	body := tok[1 : len(tok)-1]
	bs := bytes.IndexByte(body, '\\')
	if bs < 0 && utf8.Valid(body) {
		// Without escapes the text is tok's own bytes: no copy (JSON, the
		// only caller, keeps no text past the token it reads, and never
		// writes to the document).
		return unsafe.String(unsafe.SliceData(body), len(body)), true
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
