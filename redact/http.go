package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Secrets known by where they stand rather than by their shape: the
// credentials of an HTTP Authorization header and the values of a Cookie
// or Set-Cookie header, in free text (a curl -v transcript, a pasted
// request); password and token flags on a command line; OAuth codes,
// tokens and signatures in URL queries; curl's -u and key headers; the
// data of a Kubernetes Secret; passwords in a NuGet configuration.

// headerValue reads the value of the header whose name ends at i (just
// past "Authorization" or "Cookie"): an optional closing quote, blanks, a
// colon, blanks. The value runs to the quote that opened it (the value's
// own, or one before the name, as in curl -H "Authorization: …"), else to
// the end of the line or a backslash (an escaped line end).
func headerValue(s string, nameStart, i int) (start, end int, ok bool) {
	quote := byte(0)
	if nameStart > 0 && isQuote(s[nameStart-1]) {
		quote = s[nameStart-1]
	}
	if i < len(s) && s[i] == quote && quote != 0 {
		i++ // "Authorization": "…" — a quoted name; the value has quotes of its own
		quote = 0
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) || s[i] != ':' {
		return 0, 0, false
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if quote == 0 && i < len(s) && isQuote(s[i]) {
		quote = s[i]
		i++
	}
	j := i
	for j < len(s) && s[j] != '\n' && s[j] != '\r' && s[j] != '\\' && (quote == 0 || s[j] != quote) {
		j++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return i, j, j > i
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// headerName returns where the header name holding the literal at p
// starts (Proxy-Authorization, Set-Cookie).
func headerName(s string, p int) int {
	for p > 0 && (isAlnum(s[p-1]) || s[p-1] == '-' || s[p-1] == '_') {
		p--
	}
	return p
}

// authorizationFind hides an Authorization header's credentials: what
// follows the scheme (Bearer, Basic, token, Digest, AWS4-HMAC-SHA256…),
// or the whole value when it is one word of MinValue characters or more.
func authorizationFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		name := headerName(s, h.start)
		if n := strings.ToLower(s[name : h.start+len("authorization")]); n != "authorization" && n != "proxy-authorization" {
			continue
		}
		v, end, ok := headerValue(s, name, h.start+len("authorization"))
		if !ok {
			continue
		}
		w := v
		for w < end && s[w] != ' ' && s[w] != '\t' {
			w++
		}
		c := w
		for c < end && (s[c] == ' ' || s[c] == '\t') {
			c++
		}
		if c == end { // one word: a credential without a scheme
			if w-v < MinValue {
				continue
			}
			c = v
		}
		if placeholder(s[c:end]) {
			continue // Bearer ${token}, Bearer <token>
		}
		found = append(found, finding{match: [2]int{name, end}, hide: [2]int{c, end}})
	}
	return found
}

// cookieFind hides the values of a Cookie header (every NAME=VALUE) and
// of a Set-Cookie header (its first, the cookie; the attributes after it
// stay).
func cookieFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		name := headerName(s, h.start)
		n := strings.ToLower(s[name : h.start+len("cookie")])
		if n != "cookie" && n != "set-cookie" {
			continue
		}
		v, end, ok := headerValue(s, name, h.start+len("cookie"))
		if !ok {
			continue
		}
		for p := v; p < end; {
			q := p + strings.IndexByte(s[p:end]+";", ';')
			pair := s[p:q]
			val := p
			if eq := strings.IndexByte(pair, '='); eq >= 0 {
				val = p + eq + 1
			}
			for val < q && s[val] == ' ' {
				val++
			}
			e := q
			for e > val && s[e-1] == ' ' {
				e--
			}
			if e > val {
				found = append(found, finding{match: [2]int{name, end}, hide: [2]int{val, e}})
			}
			if n == "set-cookie" {
				break
			}
			p = q + 1
			for p < end && s[p] == ' ' {
				p++
			}
		}
	}
	return found
}

// queryNames are the URL query parameters whose values are secrets: by
// their whole name, or (querySuffixes) by how the name ends
// (access_token, client_secret, X-Amz-Signature).
var (
	queryNames    = []string{"code", "sig", "key", "auth", "jwt", "ticket", "session", "sid"}
	querySuffixes = []string{"token", "secret", "signature", "password", "passwd", "pwd", "apikey", "api_key", "api-key", "credential", "assertion", "verifier", "sessionid", "session_id"}
)

// queryLiterals returns the literals finding the parameters: the names,
// the suffixes and assignWords.
func queryLiterals() []string {
	var lits []string
	for _, n := range slices.Concat(queryNames, querySuffixes, assignWords) {
		if !slices.Contains(lits, n) {
			lits = append(lits, n)
		}
	}
	return lits
}

// queryFind hides the value of a secret parameter in a URL query or
// fragment (?code=…, &access_token=…, #id_token=…): one named in
// queryNames, or whose name ends in querySuffixes or holds a word of
// assignWords.
func queryFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		p := h.start
		for p > 0 && (isAlnum(s[p-1]) || s[p-1] == '_' || s[p-1] == '-' || s[p-1] == '.') {
			p--
		}
		if p == 0 || strings.IndexByte("?&;#", s[p-1]) < 0 {
			continue
		}
		eq := h.start
		for eq < len(s) && (isAlnum(s[eq]) || s[eq] == '_' || s[eq] == '-' || s[eq] == '.') {
			eq++
		}
		if eq == len(s) || s[eq] != '=' {
			continue
		}
		name := strings.ToLower(s[p:eq])
		ok := slices.Contains(queryNames, name)
		for _, n := range querySuffixes {
			ok = ok || strings.HasSuffix(name, n)
		}
		for _, w := range assignWords {
			ok = ok || strings.Contains(name, w) && !notSecretName(s[p:eq])
		}
		if !ok {
			continue
		}
		v := eq + 1
		e := v
		for e < len(s) && strings.IndexByte("&#\"'<>`\\ \t\r\n", s[e]) < 0 {
			e++
		}
		if e > v {
			found = append(found, finding{match: [2]int{p - 1, e}, hide: [2]int{v, e}})
		}
	}
	return found
}

// flagEndings are how the name of a command-line flag holding a secret
// ends: --password, --db-password, -storepass, --api-token, --client-secret.
var flagEndings = []string{"password", "passwd", "passphrase", "pass", "pwd", "token", "secret", "apikey", "api-key", "api_key"}

// flagLiterals are the literals finding secret flags (each ending's
// first word).
var flagLiterals = []string{"pass", "pwd", "token", "secret", "apikey", "api-key", "api_key"}

// secretFlag reports whether arg is a command-line flag holding a secret
// in the next argument: - or --, then a name ending in flagEndings.
func secretFlag(arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if len(name) == len(arg) || len(arg)-len(name) > 2 || name == "" {
		return false
	}
	for i := range len(name) {
		if c := name[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	lower := strings.ToLower(name)
	for _, e := range flagEndings {
		if strings.HasSuffix(lower, e) {
			return true
		}
	}
	return false
}

// flagFind hides the value of a secret flag on a command line:
// --password X, --password=X, -storepass X, and in a JSON list of
// arguments ("--password", "X"). A value starting with - is taken for the
// next flag and kept (as is the -p of mysql and others: too ambiguous).
func flagFind(s string, hits []hit) []finding {
	var found []finding
	last := -1
	for _, h := range hits {
		p := h.start
		for p > 0 && (isAlnum(s[p-1]) || s[p-1] == '-' || s[p-1] == '_') {
			p--
		}
		e := h.start
		for e < len(s) && (isAlnum(s[e]) || s[e] == '-' || s[e] == '_') {
			e++
		}
		if p < last || !secretFlag(s[p:e]) || p > 0 && !strings.ContainsRune(" \t\n\r\"'([,=", rune(s[p-1])) {
			continue
		}
		// Then = and the value, or blanks (a comma too, in a list) and
		// the next argument: --password X, "--password" "X",
		// ["--password", "X"].
		v := e
		if v < len(s) && s[v] == '=' {
			v++
		} else {
			if v < len(s) && p > 0 && s[p-1] == s[v] && isQuote(s[v]) {
				v++ // the flag's closing quote
			}
			b := v
			if v < len(s) && s[v] == ',' {
				v++
			}
			for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
				v++
			}
			if v == b {
				continue
			}
		}
		start, end := shellWord(s, v)
		if end <= start || s[start] == '-' {
			continue
		}
		found = append(found, finding{match: [2]int{p, end}, hide: [2]int{start, end}})
		last = end
	}
	return found
}

// shellWord returns the argument starting at i: to the matching quote
// when it starts with one (the quotes not included), else to a blank,
// quote, comma or closing bracket.
func shellWord(s string, i int) (start, end int) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := strings.IndexByte(s[i+1:], s[i])
		if q < 0 {
			q = len(s) - i - 1
		}
		return i + 1, i + 1 + q
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n\"',])", rune(s[j])) {
		j++
	}
	return i, j
}

// curlKeyHeader matches the names of headers that carry a key or token
// (Key, Token, Api-Key, X-Api-Key, X-Auth-Token...).
var curlKeyHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:X-(?:[a-z]+-)?)?(?:Api-?)?(?:Key|Token)$`) })

// curlFind hides, in a curl command (its line and the five that follow),
// the value of a -H/--header whose name carries a key or token and the
// credentials of -u/--user. Authorization headers are authorizationFind's.
func curlFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		p := h.start
		if p > 0 && (isAlnum(s[p-1]) || s[p-1] == '_') || p+4 < len(s) && (isAlnum(s[p+4]) || s[p+4] == '_') {
			continue
		}
		// Its line and five more, each line end one or two bytes (\r\n,
		// or a blank line: scanners count either as one).
		end := p + 4
		for lines := 0; end < len(s) && end-p < 8192; end++ {
			if s[end] == '\n' {
				if lines++; lines > 10 {
					break
				}
			}
		}
		for i := p + 4; i < end; i++ {
			if s[i] != '-' || !isSpace(s[i-1]) {
				continue
			}
			// The option, its value glued to it or not (-uuser:pass).
			var name string
			for _, o := range []string{"--header", "--user", "-H", "-u"} {
				if strings.HasPrefix(s[i:end], o) {
					name = o
					break
				}
			}
			if name == "" {
				continue
			}
			opt := i + len(name)
			v := opt
			if v < end && s[v] == '=' {
				v++
			} else {
				for v < end && v-opt < 5 && (s[v] == ' ' || s[v] == '\t') {
					v++
				}
			}
			if name == "-u" || name == "--user" {
				ws, we := curlWord(s, v, end)
				if we > ws && strings.Contains(s[ws:we], ":") {
					found = append(found, finding{match: [2]int{p, we}, hide: [2]int{ws, we}})
				}
				continue
			}
			// The header is quoted; its quotes are escaped (\") when the
			// command is itself in a quoted string: a JSON value, or an
			// argument as helm quotes it in a command mark's key.
			var quote string
			switch {
			case v < end && (s[v] == '"' || s[v] == '\''):
				quote = s[v : v+1]
			case v+1 < end && s[v] == '\\' && (s[v+1] == '"' || s[v+1] == '\''):
				quote = s[v : v+2]
			default:
				continue
			}
			body := v + len(quote)
			q := strings.Index(s[body:end], quote)
			if q < 0 {
				continue
			}
			header := s[body : body+q]
			colon := strings.IndexByte(header, ':')
			if colon < 0 || !curlKeyHeader().MatchString(header[:colon]) {
				continue
			}
			hs := body + colon + 1
			for hs < body+q && (s[hs] == ' ' || s[hs] == '\t') {
				hs++
			}
			if hs < body+q {
				found = append(found, finding{match: [2]int{p, body + q + len(quote)}, hide: [2]int{hs, body + q}})
			}
		}
	}
	return found
}

// curlWord returns the shell word at i (quoted parts and bare
// characters, up to an unquoted blank), quotes included.
func curlWord(s string, i, end int) (int, int) {
	j := i
	for j < end && !isSpace(s[j]) {
		if s[j] == '"' || s[j] == '\'' {
			q := strings.IndexByte(s[j+1:end], s[j])
			if q < 0 {
				return i, end
			}
			j += q + 2
			continue
		}
		j++
	}
	return i, j
}

// nugetFind hides the value of an <add key="…Password" value="…"/> entry
// (NuGet and .NET configuration files) whose key looks secret.
func nugetFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		i := h.start + len("<add key=")
		if i >= len(s) || s[i] != '"' && s[i] != '\'' {
			continue
		}
		q := strings.IndexByte(s[i+1:], s[i])
		if q < 0 || !LooksSecret(s[i+1:i+1+q]) {
			continue
		}
		j := skipSpace(s, i+q+2)
		if !hasPrefixFold(s[j:], "value=") {
			continue
		}
		j += len("value=")
		if j >= len(s) || s[j] != '"' && s[j] != '\'' {
			continue
		}
		e := strings.IndexByte(s[j+1:], s[j])
		if e < 0 {
			continue
		}
		if e > 0 {
			found = append(found, finding{match: [2]int{h.start, j + 2 + e}, hide: [2]int{j + 1, j + 1 + e}})
		}
	}
	return found
}

// secretKind finds the kind of a Kubernetes Secret.
var secretKind = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bkind:[ \t]*["']?secret\b`) })

// kubernetesReach is how far from a data: block its kind: Secret may be.
const kubernetesReach = 400

// kubernetesFind hides the values of the data: (and stringData:) block of
// a Kubernetes Secret: every KEY: VALUE line indented under it, block
// scalars (| and >) included.
func kubernetesFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		p := h.start
		if p > 0 && (isAlnum(s[p-1]) || s[p-1] == '_') && !hasSuffixFold(s[:p], "string") {
			continue
		}
		from := max(0, p-kubernetesReach)
		kind := secretKind().FindStringIndex(s[from:min(len(s), p+kubernetesReach)])
		if kind == nil {
			continue
		}
		// What made it a Secret is in the match: a stream cut between the
		// kind and the data would lose it.
		kind[0], kind[1] = kind[0]+from, kind[1]+from
		indent := p - lineStart(s, p)
		hide := func(v, ve int) {
			if v < ve && strings.Trim(s[v:ve], `"'`) != "" {
				found = append(found, finding{match: [2]int{min(p, kind[0]), max(ve, kind[1])}, hide: [2]int{v, ve}})
			}
		}
		// An entry on the data: line itself, after a blank (as scanners
		// read it), stands alone; else the entries are the lines below.
		first := true
		le := lineEnd(s, p)
		for k := p + len("data:"); k < le; k++ {
			if !isSpace(s[k]) || !nameByte(s[min(k+1, le-1)]) {
				continue
			}
			n := k + 1
			for n < le && nameByte(s[n]) {
				n++
			}
			if n < le && s[n] == ':' {
				v, ve, _ := yamlValue(s, n+1, le, indent)
				hide(v, ve)
				first = false
				break
			}
		}
		for ls := le + 1; ls < len(s); {
			le := lineEnd(s, ls)
			line := s[ls:le]
			in := len(line) - len(strings.TrimLeft(line, " \t"))
			if strings.TrimSpace(line) == "" {
				ls = le + 1
				continue
			}
			if in <= indent && !first {
				break
			}
			if in <= indent {
				// An entry not indented under data: (flat, or data:
				// indented oddly): that entry alone.
				indent = len(s)
			}
			first = false
			k := ls + in
			for k < le && nameByte(s[k]) {
				k++
			}
			if k == ls+in || k == le || s[k] != ':' {
				break
			}
			v, ve, next := yamlValue(s, k+1, le, in)
			hide(v, ve)
			ls = next
		}
	}
	return found
}

// yamlValue returns the value of a YAML entry whose colon ends at i, on a
// line ending at le, the entry indented by in: the rest of the line, or
// for a block scalar (| or >) the lines below indented deeper; next is
// where the next entry's line starts.
func yamlValue(s string, i, le, in int) (v, ve, next int) {
	v = skipSpaceLine(s, i, le)
	ve = trimEnd(s, v, le)
	next = le + 1
	block := false
	if v < ve && (s[v] == '|' || s[v] == '>') {
		v++
		if v < ve && (s[v] == '-' || s[v] == '+') {
			v++
		}
		v = skipSpaceLine(s, v, ve)
		block = v == ve
	}
	if !block {
		return v, ve, next
	}
	v, ve = next, next
	for taken := false; next < len(s); {
		ne := lineEnd(s, next)
		body := s[next:ne]
		if strings.TrimSpace(body) != "" {
			// The first line holds the value even when not indented
			// deeper (as scanners read it).
			if taken && len(body)-len(strings.TrimLeft(body, " \t")) <= in {
				break
			}
			ve, taken = trimEnd(s, next, ne), true
		}
		next = ne + 1
	}
	return min(v, len(s)), min(ve, len(s)), next
}

// lineEnd returns the index of the line end at or after i, or len(s).
func lineEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if e := strings.IndexByte(s[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(s)
}

// trimEnd returns end moved back over blanks and carriage returns, not
// before start.
func trimEnd(s string, start, end int) int {
	for end > start && (s[end-1] == ' ' || s[end-1] == '\t' || s[end-1] == '\r') {
		end--
	}
	return end
}

func lineStart(s string, p int) int {
	for p > 0 && s[p-1] != '\n' {
		p--
	}
	return p
}

func skipSpaceLine(s string, i, end int) int {
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// vaultLegacyFind hides a HashiCorp Vault service token of the old shape:
// s. and 24 letters and digits, standing alone, with a digit among them
// (s.configurationManagerXY is a method, not a token).
func vaultLegacyFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		p := h.start
		if s[p] != 's' || p > 0 && (isAlnum(s[p-1]) || s[p-1] == '_' || s[p-1] == '.') {
			continue
		}
		e := p + 2
		digit := false
		for e < len(s) && e-p-2 < 25 && isAlnum(s[e]) {
			digit = digit || '0' <= s[e] && s[e] <= '9'
			e++
		}
		if e-p-2 != 24 || !digit || e < len(s) && (s[e] == '_' || s[e] == '-' || s[e] == '.') {
			continue
		}
		found = append(found, finding{match: [2]int{p, e}, hide: [2]int{p, e}})
	}
	return found
}

// facebookFind hides a Facebook app access token: the app's id (15 or 16
// digits), | (or %, as some encode it), and the secret.
func facebookFind(s string, hits []hit) []finding {
	var found []finding
	for _, h := range hits {
		sep := h.start + 2
		d := sep
		for d > 0 && '0' <= s[d-1] && s[d-1] <= '9' {
			d--
		}
		if n := sep - d; n < 15 || n > 16 || d > 0 && (isAlnum(s[d-1]) || s[d-1] == '_') {
			continue
		}
		e := sep + 1
		for e < len(s) && (isAlnum(s[e]) || s[e] == '_' || s[e] == '-') {
			e++
		}
		if e-sep-1 < 27 {
			continue
		}
		found = append(found, finding{match: [2]int{d, e}, hide: [2]int{d, e}})
	}
	return found
}

// digitLiterals returns prefix followed by each digit (or, with two,
// each pair of digits) followed by suffix.
func digitLiterals(prefix string, pairs bool, suffix string) []string {
	var lits []string
	for d := '0'; d <= '9'; d++ {
		if !pairs {
			lits = append(lits, prefix+string(d)+suffix)
			continue
		}
		for e := '0'; e <= '9'; e++ {
			lits = append(lits, prefix+string(d)+string(e)+suffix)
		}
	}
	return lits
}

// alnumLiterals returns prefix followed by each lower-case letter and
// digit.
func alnumLiterals(prefix string) []string {
	var lits []string
	for c := '0'; c <= 'z'; c++ {
		if '0' <= c && c <= '9' || 'a' <= c {
			lits = append(lits, prefix+string(c))
		}
	}
	return lits
}
