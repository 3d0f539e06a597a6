package redact

import (
	"regexp"
	"strings"
	"sync"
)

// Token families: the credentials that providers issue in a shape of
// their own, a literal prefix and then random characters of a known
// alphabet and length (ghp_ and 36 letters and digits, AKIA and 16 upper
// case letters and digits, glpat- and 20 or more...). One row per family
// says what it is called (the marker's name), its prefixes, and what
// follows them. The literal prefilter finds the prefixes; the row's
// expression then runs once, anchored at the prefix, on the bytes that
// follow it. The lengths are those the providers document or issue, some
// a little wider (a token one character longer than the provider's
// current format is still hidden).
//
// A token matches wherever it stands, glued to a word or an underscore
// (MY_TOKEN_ghp_…), except the families whose prefix is short or common
// (alone: not right after a letter or digit), so that "disk-…" is not
// read as an sk- key; those must also end where their body does (a letter
// or digit right after one makes it part of a longer string). A family
// whose prefixes are hex digits alone stands alone: content addresses and
// commit ids are hex.
type family struct {
	name     string
	prefixes []string // as tokens start; found in any case, then compared as written unless fold
	body     string   // what follows a prefix (a regular expression)
	fold     bool     // the prefix in any case
	alone    bool     // not right after a letter or digit
}

// Character classes the rows share.
const (
	alnum  = `[A-Za-z0-9]`
	tok    = `[A-Za-z0-9_-]`  // URL-safe base64
	b64    = `[A-Za-z0-9+/]`  // base64
	hexLow = `[a-f0-9]`       // lower-case hex
	hexAny = `[A-Fa-f0-9]`    // hex in any case
	word   = `[A-Za-z0-9_]`   // \w
	upDig  = `[A-Z0-9]`       // upper case and digits
	tokDot = `[A-Za-z0-9_.-]` // token characters and dots
	tokEq  = `[A-Za-z0-9_=-]` // token characters and padding
)

var families = []family{
	// Source hosting and package registries.
	{name: "github-token", prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnum + `{30,}`},
	{name: "github-token", prefixes: []string{"github_pat_"}, body: word + `{22,}`},
	{name: "gitlab-token", prefixes: []string{"glpat-", "glcbt-", "gldt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-", "glptt-", "glrt-", "glsoat-", "glcf-", "glwt-"}, body: tokDot + `{20,}`},
	{name: "gitlab-token", prefixes: []string{"GR1348941"}, body: tok + `{20,}`},
	{name: "gitlab-session-cookie", prefixes: []string{"_gitlab_session="}, body: alnum + `{32,}`},
	{name: "airtable-token", prefixes: []string{"pat"}, body: alnum + `{14}\.` + hexLow + `{64}`, alone: true},
	{name: "bitbucket-app-password", prefixes: []string{"ATBB"}, body: `[A-Za-z0-9_=.-]{28,}`},
	{name: "npm-token", prefixes: []string{"npm_"}, fold: true, body: alnum + `{30,}`},
	{name: "pypi-token", prefixes: []string{"pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"}, body: tok + `{50,}`},
	{name: "rubygems-token", prefixes: []string{"rubygems_"}, body: hexLow + `{48}`},
	{name: "clojars-token", prefixes: []string{"CLOJARS_"}, fold: true, body: alnum + `{60}`},
	{name: "sourcegraph-token", prefixes: []string{"sgp_"}, fold: true, body: `(?:` + hexAny + `{16}_|(?i:local)_)?` + hexAny + `{40}`},
	{name: "atlassian-token", prefixes: []string{"ATATT3", "ATCTT3"}, fold: true, body: tokEq + `{150,}`},
	{name: "jfrog-token", prefixes: []string{"AKCp"}, body: alnum + `{60,}`},
	{name: "jfrog-token", prefixes: []string{"cmVmd"}, body: alnum + `{50,}`, alone: true},
	{name: "readme-token", prefixes: []string{"rdme_"}, body: `[a-z0-9]{70}`},
	{name: "postman-token", prefixes: []string{"PMAK-"}, fold: true, body: hexAny + `{24}-` + hexAny + `{34}`},

	// Clouds.
	{name: "aws-access-key-id", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "AROA", "ANPA", "ANVA", "APKA"}, body: upDig + `{16}`},
	{name: "aws-access-key-id", prefixes: []string{"A3T"}, body: upDig + `{17}`, alone: true},
	{name: "aws-bedrock-key", prefixes: []string{"ABSK"}, body: b64 + `{100,}={0,2}`},
	{name: "aws-bedrock-key", prefixes: []string{"bedrock-api-key-"}, body: `[A-Za-z0-9+/=%_-]{20,}`},
	{name: "gcp-api-key", prefixes: []string{"AIza"}, body: tok + `{30,}`},
	{name: "alibaba-access-key-id", prefixes: []string{"LTAI"}, body: alnum + `{20}`},
	{name: "digitalocean-token", prefixes: []string{"doo_v1_", "dop_v1_", "dor_v1_"}, fold: true, body: hexAny + `{64}`},
	{name: "cloudflare-origin-ca-key", prefixes: []string{"v1.0-"}, body: hexLow + `{24}-` + hexLow + `{146}`},
	{name: "flyio-token", prefixes: []string{"fo1_"}, body: tok + `{43}`},
	{name: "flyio-token", prefixes: []string{"fm1a_", "fm1r_", "fm2_"}, body: b64 + `{100,}={0,3}`},
	{name: "heroku-token", prefixes: []string{"HRKU-AA"}, body: tok + `{58}`},
	{name: "vault-token", prefixes: []string{"hvs.", "hvb.", "hvr."}, body: tok + `{90,}`},
	{name: "terraform-token", prefixes: []string{"atlasv1."}, body: tokEq + `{60,70}`},
	{name: "openshift-token", prefixes: []string{"sha256~"}, body: tok + `{43}`},
	{name: "scalingo-token", prefixes: []string{"tk-us-"}, body: tok + `{48}`},
	{name: "planetscale-token", prefixes: []string{"pscale_tkn_", "pscale_oauth_", "pscale_pw_"}, fold: true, body: `[A-Za-z0-9_=.-]{32,64}`},
	{name: "pulumi-token", prefixes: []string{"pul-"}, body: hexLow + `{40}`, alone: true},
	{name: "databricks-token", prefixes: []string{"dapi"}, body: hexLow + `{32}(?:-[0-9])?`},
	{name: "doppler-token", prefixes: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."}, body: alnum + `{40,44}`},
	{name: "dynatrace-token", prefixes: []string{"dt0c01."}, body: alnum + `{24}\.` + alnum + `{64}`},
	{name: "infracost-token", prefixes: []string{"ico-"}, body: alnum + `{32}`, alone: true},
	{name: "prefect-token", prefixes: []string{"pnu_"}, body: alnum + `{36}`},
	{name: "defined-networking-token", prefixes: []string{"dnkey-"}, fold: true, body: tokEq + `{26}-` + tokEq + `{52}`},
	{name: "harness-token", prefixes: []string{"pat.", "sat."}, body: tok + `{22}\.` + alnum + `{24}\.` + alnum + `{20}`},
	{name: "octopus-deploy-key", prefixes: []string{"API-"}, body: upDig + `{26}`, alone: true},
	{name: "clickhouse-secret", prefixes: []string{"4b1d"}, body: alnum + `{38}`, alone: true},
	{name: "settlemint-token", prefixes: []string{"sm_aat_", "sm_pat_", "sm_sat_"}, body: alnum + `{16}`},
	{name: "yandex-api-key", prefixes: []string{"AQVN"}, body: tok + `{35,38}`},
	{name: "authress-key", prefixes: []string{"sc_", "ext_", "scauth_", "authress_"}, body: alnum + `{5,30}\.` + alnum + `{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	{name: "1password-secret-key", prefixes: []string{"A3-"}, body: upDig + `{6}-(?:` + upDig + `{11}|` + upDig + `{6}-` + upDig + `{5})(?:-` + upDig + `{5}){3}`, alone: true},
	{name: "1password-token", prefixes: []string{"ops_eyJ"}, body: `[A-Za-z0-9+/_-]{100,}={0,3}`},
	{name: "age-secret-key", prefixes: []string{"AGE-SECRET-KEY-1"}, body: upDig + `{58}`},

	// AI providers.
	{name: "anthropic-api-key", prefixes: []string{"sk-ant-"}, body: tok + `{16,}`},
	{name: "openai-api-key", prefixes: []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"}, body: tok + `{20,}`},
	{name: "openai-api-key", prefixes: []string{"sk-"}, body: `(?:` + tok + `{20,}T3BlbkFJ` + tok + `{20,}|` + alnum + `{48}|` + hexLow + `{32})`, alone: true},
	{name: "perplexity-api-key", prefixes: []string{"pplx-"}, body: alnum + `{48}`},
	{name: "huggingface-token", prefixes: []string{"hf_"}, body: `[A-Za-z]{34}`, alone: true},
	{name: "huggingface-token", prefixes: []string{"api_org_"}, body: `[A-Za-z]{34}`},

	// Chat, mail and monitoring.
	{name: "slack-token", prefixes: []string{"xox"}, fold: true, body: `[A-Za-z](?:[.A-Za-z0-9](?i:xox)[A-Za-z])?-[A-Za-z0-9-]{8,}`},
	{name: "slack-token", prefixes: []string{"xapp-"}, fold: true, body: `[0-9]-` + alnum + `+-[0-9]+-` + alnum + `+`},
	{name: "sendgrid-token", prefixes: []string{"SG."}, body: `[A-Za-z0-9=_.-]{66,}`, alone: true},
	{name: "sendinblue-token", prefixes: []string{"xkeysib-"}, body: hexLow + `{64}-` + alnum + `{16}`},
	{name: "sentry-token", prefixes: []string{"sntrys_eyJ"}, body: `[A-Za-z0-9+/=_]{60,}`},
	{name: "sentry-token", prefixes: []string{"sntryu_"}, body: hexLow + `{64}`},
	{name: "new-relic-key", prefixes: []string{"NRJS-"}, fold: true, body: hexAny + `{19}`},
	{name: "new-relic-key", prefixes: []string{"NRII-"}, fold: true, body: `[A-Za-z0-9-]{32}`},
	{name: "new-relic-key", prefixes: []string{"NRAK-"}, fold: true, body: alnum + `{27}`},
	{name: "grafana-token", prefixes: []string{"glc_"}, fold: true, body: b64 + `{32,}={0,3}`},
	{name: "grafana-token", prefixes: []string{"glsa_"}, fold: true, body: alnum + `{32}_` + hexAny + `{8}`},
	{name: "grafana-token", prefixes: []string{"eyJrIjoi"}, fold: true, body: alnum + `{70,}={0,3}`},
	{name: "linear-api-key", prefixes: []string{"lin_api_"}, body: alnum + `{40}`},
	{name: "notion-token", prefixes: []string{"ntn_"}, body: `[0-9]{11}` + alnum + `{35}`},
	{name: "typeform-token", prefixes: []string{"tfp_"}, body: `[A-Za-z0-9_.=-]{50,}`},
	{name: "frameio-token", prefixes: []string{"fio-u-"}, body: tokEq + `{64}`},
	{name: "intra42-secret", prefixes: []string{"s-s4t2ud-", "s-s4t2af-"}, body: hexAny + `{64}`},

	// Payments and commerce.
	{name: "stripe-key", prefixes: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"}, body: alnum + `{10,}`},
	{name: "stripe-key", prefixes: []string{"whsec_"}, body: b64 + `{24,}`},
	{name: "square-token", prefixes: []string{"sq0atp-", "sq0csp-"}, body: tok + `{22,}`},
	{name: "square-token", prefixes: []string{"EAAA"}, body: tok + `{22,}`},
	{name: "facebook-token", prefixes: []string{"EAA"}, body: alnum + `{90,}`},
	{name: "shopify-token", prefixes: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, body: hexAny + `{32}`},
	{name: "shippo-token", prefixes: []string{"shippo_live_", "shippo_test_"}, body: hexAny + `{40}`},
	{name: "duffel-token", prefixes: []string{"duffel_test_", "duffel_live_"}, body: tokEq + `{43}`},
	{name: "easypost-token", prefixes: []string{"EZAK", "EZTK"}, body: alnum + `{54}`},
	{name: "flutterwave-key", prefixes: []string{"FLWSECK_TEST-", "FLWPUBK_TEST-", "FLWSECK-", "FLWPUBK-"}, body: alnum + `{12,32}(?:-X)?`},
	{name: "adobe-client-secret", prefixes: []string{"p8e-"}, body: alnum + `{32}`, alone: true},
	{name: "twilio-api-key", prefixes: []string{"SK"}, body: hexAny + `{32}`},
}

// familyLits is what a family row's rule needs besides the row: the
// literals finding its prefixes, the prefix each stands for, and the
// fewest bytes of its body. familyTable (tables.go) holds them, generated
// by familyLitsOf: computing them parses every row's expression.
type familyLits struct {
	lits, prefix []string
	minBody      int
}

// familyRules makes the family table into rules: one per row, with
// fams[i] the literals and lengths of row i.
func familyRules(fams []familyLits) []rule {
	rules := make([]rule, 0, len(families))
	for i, f := range families {
		// The prefix is compared as written (or in any case), then the
		// body's expression runs from its end: one expression per row,
		// without an alternation of prefixes, is one-pass (no
		// backtracking) more often.
		// Compiled on the first hit of a prefix: most texts have none,
		// and a one-shot process (a helm command) would compile them all.
		body := onFirstUse(`^(?:` + f.body + `)`)
		minBody, lits, prefix := fams[i].minBody, fams[i].lits, fams[i].prefix
		fold, alone := f.fold, f.alone || hexOnly(f.prefixes)
		rules = append(rules, rule{name: f.name, literals: lits, find: func(s string, hits []hit) []finding {
			var found []finding
			last := -1
			for _, h := range hits {
				p, pre := h.start, prefix[h.lit]
				if p < last || alone && p > 0 && isAlnum(s[p-1]) || !fold && !strings.HasPrefix(s[p:], pre) {
					continue
				}
				// Then at least as many token characters as the shortest
				// body: most hits of a short prefix end there.
				q := p + len(pre)
				if !tokenRun(s, q, minBody) {
					continue
				}
				// The expression reads the token's bytes only: its
				// state grows with the text it is given.
				end := q
				for end < len(s) && end-p < familyReach && tokenByte[s[end]] {
					end++
				}
				loc := body().FindStringIndex(s[q:end])
				// A token of a family that stands alone ends where its
				// shape does: one that runs on into more letters or
				// digits is another string (a BLAKE3 address that starts
				// 4b1d is no ClickHouse key).
				if loc == nil || alone && q+loc[1] < len(s) && isAlnum(s[q+loc[1]]) {
					continue
				}
				found = append(found, finding{match: [2]int{p, q + loc[1]}, hide: [2]int{p, q + loc[1]}})
				last = q + loc[1]
			}
			return found
		}})
	}
	return rules
}

// onFirstUse compiles expr when first called.
func onFirstUse(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// hexOnly reports whether every prefix is made of hex digits alone.
func hexOnly(prefixes []string) bool {
	for _, p := range prefixes {
		if strings.Trim(strings.ToLower(p), "0123456789abcdef") != "" {
			return false
		}
	}
	return true
}

// familyReach bounds a family token's length: the expression runs on
// this many bytes from the prefix.
const familyReach = 1024

// tokenRun reports whether s holds at least n bytes that may be in a
// token from i on: no white space, quote or bracket among them.
func tokenRun(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for _, c := range []byte(s[i : i+n]) {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

// tokenByte says which bytes may be in a token: ASCII letters, digits
// and punctuation other than quotes, brackets, commas and semicolons.
var tokenByte = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = !strings.ContainsRune("\"'`,;()[]{}<>\\", c)
	}
	return t
}()

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
