package redact

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// assignRegexp is the regular expression assignments stands for: the
// oracle it is checked against.
var assignRegexp = regexp.MustCompile(asciiFold(`[A-Za-z0-9_.-]*(?:token|secret|password|passwd|api[_-]?key|private[_-]?key|credential)[A-Za-z0-9_.-]*["']?\s*(?::=|=>|\?=|[:=])\s*["']?([^\s"',;]{8,})`))

// asciiFold makes the keywords of re match in any ASCII case. Not (?i):
// Go's case folding is Unicode's, so (?i) would match "tokenſ" (U+017F,
// the long s) and a Kelvin sign for k, which names no secret the scanner
// (ASCII, as the names of variables are) should find (a fuzz finding).
func asciiFold(re string) string {
	var b strings.Builder
	class, escaped := false, false
	for _, c := range re {
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '[':
			class = true
		case c == ']':
			class = false
		case !class && 'a' <= c && c <= 'z':
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func regexpAssignments(s string) [][2]int {
	var spans [][2]int
	for _, loc := range assignRegexp.FindAllStringSubmatchIndex(s, -1) {
		// The name is what precedes the quote, blanks and operator.
		name, end := loc[0], loc[0]
		for end < loc[1] && nameByte(s[end]) {
			end++
		}
		if notSecretName(s[name:end]) || codeOrPlaceholder(s[loc[2]:loc[3]]) || name > 0 && strings.IndexByte("?&#", s[name-1]) >= 0 {
			continue
		}
		spans = append(spans, [2]int{loc[2], loc[3]})
	}
	return spans
}

func TestAssignmentsAgreeWithTheRegexp(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"DB_PASSWORD=correct-horse-battery\nDEBUG=true",
		`{"client_secret": "abcdefgh12345678", "api-key":'0123456789'}`,
		"token=short token=longvalue123",
		"Secret_Token=abcdefgh_secret=zzzzzzzzz, x",
		"a=xtoken=12345678;",
		"PRIVATEKEY : é-é-é-é-é",
		"the token bucket refills",
		"TOKEN\t=\t\"12345678\"",
		"token=1234567",
		"TokenSecretTokenPasswordToken=short tokentokentoken: longenough1",
		`fooToken := "abcdefgh"`,
		"token:=abcdefg token:= abcdefghi",
		`'secret_key' => 'sk_abcdefghijkl'`,
		"API_TOKEN ?= abcdefgh12",
		"token == abcdefgh token==abcdefgh",
		"https://x/cb?access_token=abcdefgh&token_type=bearer#id_token=12345678",
		"secretName: my-app-tls\nTOKEN_FILE=/run/secrets/token\nsecret_key: abcdefgh123",
		"token := r.Header.Get(\"X-Token\")\npassword = os.environ.get(\"PW\")\ntoken = cfg.Token\nAPI_TOKEN=${API_TOKEN}",
	} {
		var hides [][2]int
		for _, f := range assignments(s) {
			hides = append(hides, f.hide)
		}
		assert.Equal(t, regexpAssignments(s), hides, "%q", s)
	}
}

func FuzzAssignments(f *testing.F) {
	f.Add("DB_PASSWORD=correct-horse-battery")
	f.Add(`"api_key": "0123456789abcdef"`)
	f.Add("xtoken tokentoken= 'abcdefghij',token:12345678")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<10 {
			// The oracle's regexp is quadratic on long runs of word
			// characters (it stalled a CI fuzz run for minutes); chunk
			// boundaries are TestAssignmentsFindWordsAcrossChunks's.
			return
		}
		want, got := regexpAssignments(s), assignments(s)
		if len(want) != len(got) {
			t.Fatalf("%q: regexp %v, assignments %v", s, want, got)
		}
		for i := range want {
			if want[i] != got[i].hide {
				t.Fatalf("%q: regexp %v, assignments %v", s, want, got)
			}
		}
	})
}

// FuzzUnquote checks the JSON string decoder of JSON against
// json.Unmarshal on every valid string token.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"c\"\\d\/e\b\f\r"`, `"\u00e9t\u00e9 \ud83d\ude00"`, `"\ud800"`, "\"caf\xc3\xa9\\n\"", "\"bad \xff\\n\"", `"\\"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		var want string
		if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
			return // JSON hands it tokens from '"' to '"'
		}
		if !json.Valid(tok) || json.Unmarshal(tok, &want) != nil {
			return // not a string token
		}
		got, ok := unquote(tok)
		if !ok || got != want {
			t.Fatalf("unquote(%q) = %q, %v; json.Unmarshal gives %q", tok, got, ok, want)
		}
	})
}

func TestLitSetFindsEveryLiteralAtEveryOffset(t *testing.T) {
	t.Parallel()
	lits := []string{"ghp_", "eyj", "akia", "://", "k_live_", "xox", "token", "credential", "s.a", "00|"}
	set := newLitSet(lits)
	for _, l := range lits {
		// Every offset around the eight-byte words the set reads, the
		// literal in upper and in lower case, at the text's end too.
		for at := range 20 {
			for _, tail := range []string{"", " tail of text"} {
				for _, lit := range []string{l, strings.ToUpper(l)} {
					text := strings.Repeat("-", at) + lit + tail
					var got [][2]int
					set.each(text, func(id, start int) { got = append(got, [2]int{id, start}) })
					assert.Contains(t, got, [2]int{slices.Index(lits, l), at}, "%q", text)
				}
			}
		}
	}
}

func TestLitSetFindsWhatIndexFinds(t *testing.T) {
	t.Parallel()
	lits := []string{"ghp_", "eyj", "akia", "://", "k_live_", "xox", "token", "credential", "aaa"}
	set := newLitSet(lits)
	text := "a ghp_x eyJhb AKIAAKIA http://x k_live_ xoxox tokentoken credential aaaaa"
	var got [][2]int
	set.each(text, func(id, start int) { got = append(got, [2]int{id, start}) })
	var want [][2]int
	lower := strings.ToLower(text)
	for id, l := range lits {
		for from := 0; ; {
			i := strings.Index(lower[from:], l)
			if i < 0 {
				break
			}
			want = append(want, [2]int{id, from + i})
			from += i + 1
		}
	}
	assert.ElementsMatch(t, want, got)
}

// assignSet finds assignWords, for assignments on its own (the
// Redactor finds them with every other literal, in one pass).
var assignSet = newLitSet(assignWords)

// assignments returns what the secret-assignment rule finds in s, on
// its own: the tests' way to it (the Redactor runs it in its one pass).
func assignments(s string) []finding {
	var hits []hit
	assignSet.each(s, func(lit, start int) { hits = append(hits, hit{start: start, lit: lit}) })
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	return assignmentsAt(s, hits)
}
