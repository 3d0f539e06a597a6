package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/redact"
)

const (
	ghToken  = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	awsKey   = "AKIAIOSFODNN7EXAMPLE"
	jwt      = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemBlock = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL\n-----END RSA PRIVATE KEY-----"
)

func newRedactor(t *testing.T, opts *redact.Options) *redact.Redactor {
	t.Helper()
	r, err := redact.New(opts)
	require.NoError(t, err)
	return r
}

func TestRules(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, &redact.Options{
		Environ:  []string{"GH_TOKEN=s3cr3t-env-value", "MY_DB_PASSWORD=hunter2hunter2", "SHORT_TOKEN=abc", "PATH=/usr/bin:/bin", "CUSTOM=custom-secret-value"},
		ExtraEnv: []string{"CUSTOM"},
		Values:   map[string]string{"gh-login:alice": "gho_fromhostsyml0123456789abcdefABCDEF"},
		Patterns: []redact.Pattern{{Name: "ticket", Regexp: `TICKET-(\d{6,})`}},
	})
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"env value", "token is s3cr3t-env-value.", "token is [REDACTED:env:GH_TOKEN].", 1},
		{"env value twice", "s3cr3t-env-value s3cr3t-env-value", "[REDACTED:env:GH_TOKEN] [REDACTED:env:GH_TOKEN]", 2},
		{"extra env name", "x custom-secret-value", "x [REDACTED:env:CUSTOM]", 1},
		{"hosts.yml token", "oauth gho_fromhostsyml0123456789abcdefABCDEF", "oauth [REDACTED:gh-login:alice]", 1},
		{"github token", "use " + ghToken + " now", "use [REDACTED:github-token] now", 1},
		{"github token glued to words", "a" + ghToken + "_b _" + ghToken, "a[REDACTED:github-token]_b _[REDACTED:github-token]", 2},
		{"aws key id glued", "ID_" + awsKey + "x", "ID_[REDACTED:aws-access-key-id]x", 1},
		{"fine-grained pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github-token]", 1},
		{"aws key id", "key=" + awsKey, "key=[REDACTED:aws-access-key-id]", 1},
		{"slack", "xoxb-1234567890-abcdefghij", "[REDACTED:slack-token]", 1},
		{"stripe", "sk_live_abcdefghijklmnop", "[REDACTED:stripe-key]", 1},
		{"jwt", "Bearer " + jwt, "Bearer [REDACTED:jwt]", 1},
		{"pem", "key:\n" + pemBlock + "\nend", "key:\n[REDACTED:private-key]\nend", 1},
		{"url credentials", "git clone https://alice:pa55w0rd@example.com/x.git", "git clone https://alice:[REDACTED:url-credentials]@example.com/x.git", 1},
		{"dotenv", "DB_PASSWORD=correct-horse-battery\nDEBUG=true", "DB_PASSWORD=[REDACTED:secret-assignment]\nDEBUG=true", 1},
		{"yaml", "api_key: 0123456789abcdef", "api_key: [REDACTED:secret-assignment]", 1},
		{"json-ish text", `{"client_secret": "abcdefgh12345678"}`, `{"client_secret": "[REDACTED:secret-assignment]"}`, 1},
		{"extra pattern group", "see TICKET-1234567", "see TICKET-[REDACTED:ticket]", 1},
		{"short assignment kept", "PASSWORD=short", "PASSWORD=short", 0},
		{"ordinary text", "init() lacks a null check on reload; see commit 3f2a9c1b0d4e5f60718293a4b5c6d7e8f9a0b1c2", "init() lacks a null check on reload; see commit 3f2a9c1b0d4e5f60718293a4b5c6d7e8f9a0b1c2", 0},
		{"uuid and base64", "a3b0fc12-5d1e-4c4e-9a51-0d2b8f6c2e11 iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", "a3b0fc12-5d1e-4c4e-9a51-0d2b8f6c2e11 iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", 0},
		{"the word token alone", "the token bucket refills", "the token bucket refills", 0},
		{"a marker stays", "[REDACTED:github-token]", "[REDACTED:github-token]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := r.String(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.n, n)
			again, m := r.String(got)
			assert.Equal(t, got, again, "redacting twice is redacting once")
			assert.Zero(t, m)
		})
	}
}

func TestJSONKeepsTheDocumentAndHidesSecretFields(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, &redact.Options{Environ: []string{"GH_TOKEN=s3cr3t-env-value"}})
	in := map[string]any{"kind": "command", "stdout": "GH_TOKEN=s3cr3t-env-value\n", "env": map[string]any{"DEPLOY_TOKEN": "plainvalue123", "HOME": "/root"}, "n": 3, "key": pemBlock}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	got, n := r.JSON(raw)
	assert.Equal(t, 3, n)
	assert.True(t, json.Valid(got), "%s", got)
	var out map[string]any
	require.NoError(t, json.Unmarshal(got, &out))
	assert.Equal(t, "GH_TOKEN=[REDACTED:env:GH_TOKEN]\n", out["stdout"])
	assert.Equal(t, map[string]any{"DEPLOY_TOKEN": "[REDACTED:secret-field:DEPLOY_TOKEN]", "HOME": "/root"}, out["env"])
	assert.Equal(t, "[REDACTED:private-key]", out["key"])
	assert.Equal(t, float64(3), out["n"])
	assert.True(t, strings.HasPrefix(string(got), `{"env":`), "the layout is kept: %s", got)

	same, n := r.JSON([]byte(`{"a":"nothing here","b":[1,2]}`))
	assert.Equal(t, `{"a":"nothing here","b":[1,2]}`, string(same))
	assert.Zero(t, n)
}

func TestNewRefusesABadPattern(t *testing.T) {
	t.Parallel()
	_, err := redact.New(&redact.Options{Patterns: []redact.Pattern{{Name: "broken", Regexp: "("}}})
	assert.ErrorContains(t, err, `redaction pattern "broken"`)
	_, err = redact.New(&redact.Options{Patterns: []redact.Pattern{{Regexp: "x"}}})
	assert.ErrorContains(t, err, "has no name")
}

func FuzzRedact(f *testing.F) {
	f.Add("use " + ghToken + " now")
	f.Add("x" + ghToken + "_")
	f.Add("DB_PASSWORD=correct-horse-battery")
	f.Add(pemBlock)
	f.Add("https://alice:pa55w0rd@example.com/")
	f.Add(`{"api_key": "0123456789abcdef"}`)
	f.Add("Authorization: Bearer " + bearer + "\r\nCookie: a=" + cookieValue + "; b=2")
	f.Add("Set-Cookie: sid=" + cookieValue + "; Path=/\nmysql --password hunter2 --token=x")
	f.Add("GET /cb?code=4/0AX&access_token=ya29#id_token=x HTTP/1.1")
	f.Add(`TWITTER_CONSUMER_SECRET: "` + strings.Repeat("aB3dE", 10) + `" heroku_key = 01234567-89ab-cdef-0123-456789abcdef`)
	f.Add("curl -u a:b -H 'X-Key: 9f86d081' https://x\nkind: Secret\ndata:\n  pw: |\n    cGFzcw==\n")
	f.Add(anthropicKey + " " + openaiKey + " " + npmToken + " " + gitlabToken + " " + gcpKey + " " + slackToken)
	f.Add(`<add key="Password" value="x" /> s.Ab3dEf6hIj9kLm2nOp5qRs8t 123456789012345|abcdefghijklmnopqrstuvwxyz0`)
	r, err := redact.New(&redact.Options{Environ: []string{"GH_TOKEN=s3cr3t-env-value"}})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		got, n := r.String(s)
		if n == 0 && got != s {
			t.Fatalf("changed without a redaction")
		}
		if strings.Contains(got, "s3cr3t-env-value") {
			t.Fatalf("an env secret survived: %q", got)
		}
		if strings.Contains(got, ghToken) {
			t.Fatalf("a token survived")
		}
		again, _ := r.String(got)
		if again != got {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
		if doc, k := r.JSON([]byte(s)); json.Valid([]byte(s)) && (!json.Valid(doc) || (k == 0 && string(doc) != s)) {
			t.Fatalf("JSON broke the document: %q -> %q", s, doc)
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	r, err := redact.New(&redact.Options{Environ: []string{"GH_TOKEN=s3cr3t-env-value", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}})
	require.NoError(b, err)
	clean := strings.Repeat("func init() { widget.Reload(nil) } // a line of ordinary source\n", 1<<14) // ~1 MiB
	dirty := clean[:len(clean)/2] + "export GH_TOKEN=" + ghToken + "\n" + clean[len(clean)/2:]
	// Source that talks about tokens and secrets on every line: the
	// secret-assignment rule's words are everywhere, its values nowhere.
	code := strings.Repeat("\ttoken, err := s.tokens.Next(ctx) // the SecretStore's token\n\tif password == nil { return errNoPassword }\n", 1<<13)
	// Secrets of the families on every line: headers, flags, query
	// parameters, provider tokens and keyed assignments.
	families := strings.Repeat("Authorization: Bearer "+bearer+"\nCookie: session="+cookieValue+"\n"+
		"mysql --password hunter2 -h db\nGET /cb?code=4/0AX4XfWh5q&state=x\n"+
		anthropicKey+"\n"+npmToken+"\n"+gitlabToken+"\n"+gcpKey+"\n"+slackToken+"\n"+
		`TWITTER_CONSUMER_SECRET: "`+strings.Repeat("aB3dE", 10)+"\"\n"+
		"stripeClientKey: Zx81kQ0pLm3vB7nR2tY9\n", 1<<11) // ~1 MiB
	for _, bc := range []struct{ name, text string }{{"clean", clean}, {"with-secret", dirty}, {"secret-words", code}, {"families", families}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				r.String(bc.text)
			}
		})
	}
}

// TestTokensEndWhereTheirShapeDoes: a content address or a commit id
// that happens to begin like a token (4b1d is ClickHouse's prefix) is not
// one; the token alone, or followed by a quote or a space, is.
func TestTokensEndWhereTheirShapeDoes(t *testing.T) {
	t.Parallel()
	r, err := redact.New(nil)
	require.NoError(t, err)
	for _, s := range []string{
		"4b1d846e75fe8c3bb710e159f031db3818cc2c3ae2bf25fe160dae50f2752f17",
		"artifact 4b1dc549628200a86af701f4d33d58807b97c252d5ef66d7ea37429c04a23bba stored",
	} {
		out, n := r.String(s)
		assert.Zero(t, n, "%s -> %s", s, out)
	}
	out, n := r.String(`key = "4b1dAbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"`)
	assert.Equal(t, 1, n, out)
}

// TestAMarkersBoundaryCountsOnTheFirstRedaction: a marker ends the text
// next to it (a token glued to a secret's letters stands alone once the
// secret is hidden), so the first redaction judges every finding as if
// the others were replaced already: a second one finds nothing more.
func TestAMarkersBoundaryCountsOnTheFirstRedaction(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, nil)
	hex32 := strings.Repeat("0123456789abcdef", 2)
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"fuzz: an sk- key glued to a slack token", "sk-00000000000000000000000000000000XoXA-00000000", "[REDACTED:openai-api-key][REDACTED:slack-token]", 2},
		{"fuzz: a secret's value that is a marker", "kind:SeCret.dAtA: 00:0", "kind:SeCret.dAtA: 00:[REDACTED:kubernetes-secret]", 1},
		{"a token that must end where its shape does, before a secret", "x sk-" + hex32 + "xoxb-1234567890-abcdefghij y", "x [REDACTED:openai-api-key][REDACTED:slack-token] y", 2},
		{"a token that must stand alone, after a secret", "AKIAIOSFODNN7EXAMPLEpul-" + hex32 + "01234567", "[REDACTED:aws-access-key-id][REDACTED:pulumi-token]", 2},
		{"both sides", "AKIAIOSFODNN7EXAMPLEsk-" + hex32 + "xoxb-1234567890-abcdefghij", "[REDACTED:aws-access-key-id][REDACTED:openai-api-key][REDACTED:slack-token]", 3},
		{"glued to plain letters it stays", "xsk-" + hex32 + "y", "xsk-" + hex32 + "y", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := r.String(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.n, n)
			again, m := r.String(got)
			assert.Equal(t, got, again, "redacting twice is redacting once")
			assert.Zero(t, m)
		})
	}
}
