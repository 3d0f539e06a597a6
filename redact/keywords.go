package redact

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Keyed families: credentials without a prefix of their own, known by the
// name they are assigned to and the shape of the value (a Twitter API
// secret is 50 letters and digits in twitter_api_secret = "…"; a Heroku
// key is a UUID in HEROKU_API_KEY: …). One row per family: its name, the
// words that name it (found in any case anywhere in the name), and what
// its value may be. The assignment is read as secret scanners read it:
// the name, up to keyedGap more name characters or blanks (twitter
// secret for the app = …), an operator (= : := => ?= || > or a comma),
// quotes and blanks, then the value up to a blank, quote, semicolon or
// comma; the value must be all of one of the row's shapes.
type keyed struct {
	name     string
	keywords []string // lower-case
	values   []string // regular expressions, matched whole, in any case
}

// Value shapes the rows share.
const (
	uuid   = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	alnumN = `[a-z0-9]`
)

var keyedFamilies = []keyed{
	{"adafruit-api-key", []string{"adafruit"}, []string{`[a-z0-9_-]{32}`}},
	{"adobe-client-id", []string{"adobe"}, []string{`[a-f0-9]{32}`}},
	{"airtable-api-key", []string{"airtable"}, []string{alnumN + `{17}`}},
	{"algolia-api-key", []string{"algolia"}, []string{alnumN + `{32}`}},
	{"alibaba-secret-key", []string{"alibaba"}, []string{alnumN + `{30}`}},
	{"asana-secret", []string{"asana"}, []string{`[0-9]{16}`, alnumN + `{32}`}},
	{"atlassian-token", []string{"atlassian", "confluence", "jira"}, []string{alnumN + `{20}[a-f0-9]{4}`}},
	{"beamer-token", []string{"beamer"}, []string{`b_[a-z0-9=_-]{44}`}},
	{"bitbucket-secret", []string{"bitbucket"}, []string{alnumN + `{32}`, `[a-z0-9=_-]{64}`}},
	{"bittrex-key", []string{"bittrex"}, []string{alnumN + `{32}`}},
	{"cisco-meraki-api-key", []string{"meraki"}, []string{`[0-9a-f]{40}`}},
	{"cloudflare-api-key", []string{"cloudflare"}, []string{`[a-z0-9_-]{40}`, `[a-f0-9]{37}`}},
	{"codecov-token", []string{"codecov"}, []string{alnumN + `{32}`}},
	{"cohere-api-key", []string{"cohere", "co_api_key"}, []string{alnumN + `{40}`}},
	{"coinbase-token", []string{"coinbase"}, []string{`[a-z0-9_-]{64}`}},
	{"confluent-key", []string{"confluent"}, []string{alnumN + `{16}`, alnumN + `{64}`}},
	{"contentful-token", []string{"contentful"}, []string{`[a-z0-9=_-]{43}`}},
	{"datadog-key", []string{"datadog"}, []string{alnumN + `{40}`, `[a-f0-9]{32}`}},
	{"discord-secret", []string{"discord"}, []string{`[a-f0-9]{64}`, `[0-9]{18}`, `[a-z0-9=_-]{32}`}},
	{"droneci-token", []string{"droneci"}, []string{alnumN + `{32}`}},
	{"dropbox-token", []string{"dropbox"}, []string{alnumN + `{15}`, alnumN + `{11}AAAAAAAAAA[a-z0-9_=-]{43}`, `sl\.[a-z0-9_=-]{135}`}},
	{"etsy-token", []string{"etsy"}, []string{alnumN + `{24}`}},
	{"facebook-secret", []string{"facebook"}, []string{`[a-f0-9]{32}`}},
	{"fastly-token", []string{"fastly"}, []string{`[a-z0-9=_-]{32}`}},
	{"finicity-secret", []string{"finicity"}, []string{`[a-f0-9]{32}`, alnumN + `{20}`}},
	{"finnhub-token", []string{"finnhub"}, []string{alnumN + `{20}`}},
	{"flickr-token", []string{"flickr"}, []string{alnumN + `{32}`}},
	{"freshbooks-token", []string{"freshbooks"}, []string{alnumN + `{64}`}},
	{"gitter-token", []string{"gitter"}, []string{`[a-z0-9_-]{40}`}},
	{"gocardless-token", []string{"gocardless"}, []string{`live_[a-z0-9_=-]{40}`}},
	{"heroku-api-key", []string{"heroku"}, []string{uuid}},
	{"hubspot-api-key", []string{"hubspot"}, []string{uuid}},
	{"intercom-api-key", []string{"intercom"}, []string{`[a-z0-9=_-]{60}`}},
	{"jfrog-token", []string{"jfrog", "artifactory", "bintray", "xray"}, []string{alnumN + `{73}`, alnumN + `{64}`}},
	{"kraken-token", []string{"kraken"}, []string{`[a-z0-9/=_+-]{80,90}`}},
	{"kucoin-key", []string{"kucoin"}, []string{`[a-f0-9]{24}`, uuid}},
	{"launchdarkly-token", []string{"launchdarkly"}, []string{`[a-z0-9=_-]{40}`}},
	{"linear-client-secret", []string{"linear"}, []string{`[a-f0-9]{32}`}},
	{"linkedin-secret", []string{"linkedin", "linked_in", "linked-in"}, []string{alnumN + `{14}`, alnumN + `{16}`}},
	{"lob-api-key", []string{"lob"}, []string{`(?:live|test)_[a-f0-9]{35}`, `(?:live|test)_pub_[a-f0-9]{31}`}},
	{"looker-secret", []string{"looker"}, []string{alnumN + `{20}`, alnumN + `{24}`}},
	{"mailchimp-api-key", []string{"mailchimp"}, []string{`[a-f0-9]{32}-us[0-9]{1,2}`}},
	{"mailgun-key", []string{"mailgun"}, []string{`(?:pub)?key-[a-f0-9]{32}`, `[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}`}},
	{"mapbox-token", []string{"mapbox"}, []string{`pk\.` + alnumN + `{60}\.` + alnumN + `{22}`}},
	{"mattermost-token", []string{"mattermost"}, []string{alnumN + `{26}`}},
	{"messagebird-key", []string{"messagebird", "message-bird", "message_bird"}, []string{alnumN + `{25}`, uuid}},
	{"netlify-token", []string{"netlify"}, []string{`[a-z0-9=_-]{40,46}`}},
	{"new-relic-key", []string{"new-relic", "newrelic", "new_relic"}, []string{alnumN + `{64}`, `nrjs-[a-f0-9]{19}`, `nrii-[a-z0-9-]{32}`, `nrak-` + alnumN + `{27}`}},
	{"nytimes-token", []string{"nytimes", "new-york-times", "newyorktimes"}, []string{`[a-z0-9=_-]{32}`}},
	{"okta-token", []string{"okta"}, []string{`00[a-z0-9_=-]{40}`}},
	{"plaid-secret", []string{"plaid"}, []string{`access-(?:sandbox|development|production)-` + uuid, alnumN + `{24}`, alnumN + `{30}`}},
	{"privateai-token", []string{"privateai", "private_ai", "private-ai"}, []string{alnumN + `{32}`}},
	{"rapidapi-token", []string{"rapidapi"}, []string{`[a-z0-9_-]{50}`}},
	{"sendbird-token", []string{"sendbird"}, []string{uuid, `[a-f0-9]{40}`}},
	{"sentry-token", []string{"sentry"}, []string{`[a-f0-9]{64}`}},
	{"sidekiq-secret", []string{"contribsys"}, []string{`[a-f0-9]{8}:[a-f0-9]{8}`}},
	{"snyk-token", []string{"snyk"}, []string{uuid}},
	{"sonar-token", []string{"sonar"}, []string{`(?:squ_|sqp_|sqa_)?[a-z0-9=_-]{40}`}},
	{"squarespace-token", []string{"squarespace"}, []string{uuid}},
	{"sumologic-key", []string{"sumo"}, []string{`su` + alnumN + `{12}`, alnumN + `{64}`}},
	{"telegram-bot-token", []string{"telegr"}, []string{`[0-9]{5,16}:a[a-z0-9_-]{34}`}},
	{"travisci-token", []string{"travis"}, []string{alnumN + `{22}`}},
	{"twitch-token", []string{"twitch"}, []string{alnumN + `{30}`}},
	{"twitter-secret", []string{"twitter"}, []string{alnumN + `{25}`, alnumN + `{45}`, alnumN + `{50}`, `[0-9]{15,25}-` + alnumN + `{20,40}`, `a{22}[a-z0-9%]{80,100}`}},
	{"typeform-token", []string{"typeform"}, []string{`tfp_[a-z0-9_.=-]{59}`}},
	{"yandex-key", []string{"yandex"}, []string{`t1\.[a-z0-9_-]+={0,2}\.[a-z0-9_-]{86}={0,2}`, `aqvn[a-z0-9_-]{35,38}`, `yc[a-z0-9_-]{38}`}},
	{"zendesk-secret-key", []string{"zendesk"}, []string{alnumN + `{40}`}},
}

// genericWords make a name in a keyed assignment hint at a secret of any
// provider; the value is then hidden when it looks generated (see
// looksGenerated), not made of words.
var genericWords = []string{"access", "api", "auth", "credential", "creds", "key", "passwd", "password", "secret", "token", "pwd"}

// strongWords are genericWords that name nothing but secrets: a quoted
// value of MinValue characters or more assigned to them is hidden
// whatever it looks like.
var strongWords = []string{"passwd", "password", "secret", "token", "pwd", "credential"}

// keyedGap bounds how many name characters or blanks may stand between a
// keyword and the operator (twitter_consumer_secret, password for root).
const keyedGap = 40

// keyedRules returns the rules reading keyed assignments: one finding
// the families by their keywords (named for the family), one finding the
// generic words (named generic-secret, after secret-assignment, which
// names what both find).
func keyedRules() (families, generic rule) {
	var lits []string
	var byLit [][]int                                        // the families of each literal
	res := make([]func() *regexp.Regexp, len(keyedFamilies)) // compiled on first use, as families' bodies
	for fi, f := range keyedFamilies {
		res[fi] = onFirstUse(`^(?i:` + strings.Join(f.values, "|") + `)$`)
		for _, w := range f.keywords {
			i := slices.Index(lits, w)
			if i < 0 {
				i = len(lits)
				lits = append(lits, w)
				byLit = append(byLit, nil)
			}
			byLit[i] = append(byLit[i], fi)
		}
	}
	families = rule{name: "keyed-secret", literals: lits, find: func(s string, hits []hit) []finding {
		var found []finding
		for _, h := range hits {
			keyedValue(s, h.start+len(lits[h.lit]), func(v, end int, _ bool) bool {
				for _, fi := range byLit[h.lit] {
					if res[fi]().MatchString(s[v:end]) {
						found = append(found, finding{match: [2]int{nameStart(s, h.start), end}, hide: [2]int{v, end}, name: keyedFamilies[fi].name})
						return true
					}
				}
				return false
			})
		}
		return found
	}}
	generic = rule{name: "generic-secret", literals: genericWords, find: func(s string, hits []hit) []finding {
		var found []finding
		for _, h := range hits {
			strong := slices.Contains(strongWords, genericWords[h.lit])
			keyedValue(s, h.start+len(genericWords[h.lit]), func(v, end int, quoted bool) bool {
				if looksGenerated(s[v:end]) || strong && quoted && utf8.RuneCountInString(s[v:end]) >= MinValue {
					found = append(found, finding{match: [2]int{nameStart(s, h.start), end}, hide: [2]int{v, end}})
					return true
				}
				return false
			})
		}
		return found
	}}
	return families, generic
}

// nameStart returns where the name holding the byte at p starts.
func nameStart(s string, p int) int {
	for p > 0 && nameByte(s[p-1]) {
		p--
	}
	return p
}

// keyedValue calls try with each reading of an assignment from i, just
// past a keyword: the rest of the name, the operator, and the value,
// s[start:end] (quoted says a quote stands right before it), until try
// returns true. An operator may be read as part of the name, as a regular
// expression would backtrack (new-york-times,ZO || value: the comma is
// the name's, the operator ||): up to three readings.
func keyedValue(s string, i int, try func(start, end int, quoted bool) bool) {
	j := i
	for range 3 {
		for j < len(s) && j-i < keyedGap && (nameByte(s[j]) || s[j] == ' ' || s[j] == '\t') {
			j++
		}
		for k := 0; k < 3 && j < len(s) && (isSpace(s[j]) || s[j] == '"' || s[j] == '\'' || escapedQuote(s, j)); k++ {
			if escapedQuote(s, j) {
				j++
			}
			j++
		}
		op := operatorLen(s[j:])
		if op == 0 || op == 1 && s[j] == ':' && j >= 3 && s[j-3:j] == " h1" {
			return // not a go.sum line's hash: module/auth v1.2.3 h1:…=
		}
		opStart := j
		j += op
		v, quoted := j, false
		for k := 0; k < 8 && v < len(s) && (s[v] == '`' || s[v] == '\'' || s[v] == '"' || s[v] == '=' || isSpace(s[v]) || escapedQuote(s, v)); k++ {
			if escapedQuote(s, v) {
				v++
			}
			quoted = s[v] == '`' || s[v] == '\'' || s[v] == '"'
			v++
		}
		e := v
		for e < len(s) && !keyedEnd(s[e]) {
			e++
		}
		if e > v && !strings.HasPrefix(s[v:e], "[REDACTED:") && try(v, e, quoted) {
			return
		}
		// The value may begin with an = the reading above took for the
		// operator's or the padding's (:=k=… is : and =k=…).
		for p := opStart + 1; p < v; p++ {
			if s[p] == '=' && try(p, e, s[p-1] == '`' || s[p-1] == '\'' || s[p-1] == '"') {
				return
			}
		}
	}
}

// operatorLen returns the length of the assignment operator s starts
// with (=> :::= ::= := ?= || = > : or a comma), or 0.
func operatorLen(s string) int {
	if s == "" {
		return 0
	}
	next := func(c byte) bool { return len(s) > 1 && s[1] == c }
	switch s[0] {
	case '=':
		if next('>') {
			return 2
		}
		return 1
	case ':':
		n := 1
		for n < 3 && n < len(s) && s[n] == ':' {
			n++
		}
		if n < len(s) && s[n] == '=' {
			return n + 1
		}
		return 1
	case '?':
		if next('=') {
			return 2
		}
	case '|':
		if next('|') {
			return 2
		}
	case '>', ',':
		return 1
	}
	return 0
}

// escapedQuote reports whether s holds a quote escaped with a backslash
// at i (\" in a string quoted again: Go's %q, JSON inside JSON).
func escapedQuote(s string, i int) bool {
	return s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'')
}

func keyedEnd(c byte) bool {
	return isSpace(c) || c == '"' || c == '\'' || c == '`' || c == ';' || c == ',' || c == '\\'
}

// looksGenerated reports whether v looks like a generated secret rather
// than a word, a path or a number: 10 to 150 letters, digits and _ . = -,
// or base64, not letters and _ . - alone, and with 3.5 bits of entropy or
// more a character (random letters and digits have about 5; words and
// identifiers 3 or less).
func looksGenerated(v string) bool {
	if len(v) < 10 {
		return false
	}
	plain, b64ish := len(v) <= 150, true
	symbolOrDigit := false
	for i := range len(v) {
		c := v[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit := '0' <= c && c <= '9'
		if !letter && !digit && c != '_' && c != '.' && c != '=' && c != '-' {
			plain = false
		}
		if !letter && !digit && c != '+' && c != '/' && c != '=' || i == 0 && !letter && !digit {
			b64ish = false
		}
		if c == '=' && strings.Trim(v[i:], "=") != "" && !plain {
			b64ish = false // padding only at the end
		}
		if !letter && c != '_' && c != '.' && c != '-' {
			symbolOrDigit = true
		}
	}
	return (plain || b64ish && len(v) >= 12) && symbolOrDigit && entropy(v) >= 3.5
}

// entropy returns the Shannon entropy of s's bytes, in bits a byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := range len(s) {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
