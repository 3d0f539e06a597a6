package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Samples of the shapes issue 29 names and of the families added with
// them (fake values, of the providers' lengths).
var (
	anthropicKey = "sk-ant-api03-" + strings.Repeat("Ab3dEf6hIj", 9) + "xyzAA"
	openaiKey    = "sk-proj-" + strings.Repeat("Zq8Rt2Lm4N", 7) + "T3BlbkFJ" + strings.Repeat("Wx9Yv1Ku5P", 7)
	npmToken     = "npm_" + strings.Repeat("a1B2c3D4e5F6", 3)
	gitlabToken  = "glpat-" + "xY9zAb8Cd7Ef6Gh5Ij4K"
	gcpKey       = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q"
	slackToken   = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	bearer       = "8f14e45fceea167a5a36dedd4bea2543"
	basicCreds   = "dXNlcjpwYXNzd29yZDEyMw=="
	cookieValue  = "s%3Aj9Rk2LmQ7vXz.Qp4Wn8Ty"
)

func TestTheIssuesShapesAreHidden(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, nil)
	for _, tc := range []struct {
		name, in, want string
		leaks          []string // must not be in the output (want "" checks only these)
	}{
		{name: "bearer header", in: "> Authorization: Bearer " + bearer + "\r\n> Accept: */*", want: "> Authorization: Bearer [REDACTED:authorization]\r\n> Accept: */*"},
		{name: "basic header", in: "authorization: Basic " + basicCreds, want: "authorization: Basic [REDACTED:authorization]"},
		{name: "token scheme", in: "Authorization: token " + bearer, want: "Authorization: token [REDACTED:authorization]"},
		{name: "any scheme in curl", in: `curl -H "Authorization: Custom-Scheme k1.` + bearer + `" https://api.example.com/v1`, want: `curl -H "Authorization: Custom-Scheme [REDACTED:authorization]" https://api.example.com/v1`},
		{name: "header in JSON text", in: `{"Authorization": "Bearer ` + bearer + `", "Accept": "json"}`, want: `{"Authorization": "Bearer [REDACTED:authorization]", "Accept": "json"}`},
		{name: "proxy header", in: "Proxy-Authorization: Basic " + basicCreds, want: "Proxy-Authorization: Basic [REDACTED:authorization]"},
		{name: "digest parameters", in: `Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"` + "\nnext", want: "Authorization: Digest [REDACTED:authorization]\nnext"},
		{name: "cookie", in: "Cookie: session=" + cookieValue + "; theme=dark", want: "Cookie: session=[REDACTED:cookie]; theme=[REDACTED:cookie]"},
		{name: "set-cookie keeps attributes", in: "< Set-Cookie: sid=" + cookieValue + "; Path=/; HttpOnly; Secure", want: "< Set-Cookie: sid=[REDACTED:cookie]; Path=/; HttpOnly; Secure"},
		{name: "anthropic", in: "ANTHROPIC=" + anthropicKey, want: "ANTHROPIC=[REDACTED:anthropic-api-key]"},
		{name: "openai project key", in: "key " + openaiKey + " end", want: "key [REDACTED:openai-api-key] end"},
		{name: "npm", in: "//registry.npmjs.org/:_authToken=" + npmToken, leaks: []string{npmToken}},
		{name: "gitlab", in: "git push https://oauth2:" + gitlabToken + "@gitlab.com/x.git", leaks: []string{gitlabToken}},
		{name: "gitlab alone", in: "PAT " + gitlabToken, want: "PAT [REDACTED:gitlab-token]"},
		{name: "gcp", in: "maps?key=" + gcpKey + "&v=3", leaks: []string{gcpKey}},
		{name: "gcp alone", in: "use " + gcpKey, want: "use [REDACTED:gcp-api-key]"},
		{name: "slack bot", in: slackToken, want: "[REDACTED:slack-token]"},
		{name: "password flag", in: "mysql --password hunter2 -h db.internal", want: "mysql --password [REDACTED:secret-flag] -h db.internal"},
		{name: "password flag with =", in: "psql --password=hunter2 -U app", want: "psql --password=[REDACTED:secret-flag] -U app"},
		{name: "keytool flags", in: "keytool -list -storepass changeit -keypass s3cret", want: "keytool -list -storepass [REDACTED:secret-flag] -keypass [REDACTED:secret-flag]"},
		{name: "token flag", in: "gh auth login --with-token --token ghx_notashape123", want: "gh auth login --with-token --token [REDACTED:secret-flag]"},
		{name: "oauth code", in: "GET /callback?code=4/0AX4XfWh5q&state=af0ifjsldkj HTTP/1.1", want: "GET /callback?code=[REDACTED:url-query-secret]&state=af0ifjsldkj HTTP/1.1"},
		{name: "access token in a fragment", in: "https://app.example/cb#access_token=ya29.a0AfB_byC&token_type=Bearer", want: "https://app.example/cb#access_token=[REDACTED:url-query-secret]&token_type=Bearer"},
		{name: "client secret and signature", in: "https://x.blob.core.windows.net/c?sv=2021-08-06&sig=abcdEFGH%2Bxyz%3D&client_secret=sh", want: "https://x.blob.core.windows.net/c?sv=2021-08-06&sig=[REDACTED:url-query-secret]&client_secret=[REDACTED:url-query-secret]"},
		{name: "secret-looking parameter", in: "/api?secretKey=Ab3&x=1", want: "/api?secretKey=[REDACTED:url-query-secret]&x=1"},
		{name: "aws presigned", in: "?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027", leaks: []string{"fe5f80f77d5fa3beca038a248ff027", "AKIAIOSFODNN7EXAMPLE"}},
		{name: "go short assignment", in: `fooToken := "s3cr3tvalue"`, want: `fooToken := "[REDACTED:secret-assignment]"`},
		{name: "provider api key", in: `datadog_api_key = "0123456789abcdef0123456789abcdef"`, leaks: []string{"0123456789abcdef0123456789abcdef"}},
		{name: "keyed family", in: `TWITTER_CONSUMER_SECRET: "` + strings.Repeat("aB3dE", 10) + `"`, want: `TWITTER_CONSUMER_SECRET: "[REDACTED:twitter-secret]"`},
		{name: "keyed family without a secret word", in: "heroku_key_for_prod = 01234567-89ab-cdef-0123-456789abcdef", want: "heroku_key_for_prod = [REDACTED:heroku-api-key]"},
		{name: "generic key", in: "stripeClientKey: Zx81kQ0pLm3vB7nR2tY9", want: "stripeClientKey: [REDACTED:generic-secret]"},
		{name: "php array", in: `'secret_key' => 'sk_0123456789abcdefABCDEFghijk'`, want: `'secret_key' => '[REDACTED:secret-assignment]'`},
		{name: "curl user", in: "curl -u admin:Pa55w0rd https://example.com", want: "curl -u [REDACTED:curl-credentials] https://example.com"},
		{name: "curl key header", in: `curl -s -H 'X-Key: 9f86d081884c7d65' https://example.com`, want: `curl -s -H 'X-Key: [REDACTED:curl-credentials]' https://example.com`},
		{name: "curl key header glued with =", in: `curl --header="KEY:6qLbr1a.3yt"`, want: `curl --header="KEY:[REDACTED:curl-credentials]"`},
		// The command in a quoted string: a JSON value, or an argument as a
		// command mark's key quotes it.
		{name: "curl key header in a JSON string", in: `{"run": "curl -H \"X-Key: 9f86d081884c7d65\" https://example.com"}`, want: `{"run": "curl -H \"X-Key: [REDACTED:curl-credentials]\" https://example.com"}`},
		{name: "curl key header in a quoted argument", in: `command:"/w" "sh" "-c" "curl --header=\"KEY:6qLbr1a.3yt\""`, want: `command:"/w" "sh" "-c" "curl --header=\"KEY:[REDACTED:curl-credentials]\""`},
		{name: "kubernetes secret", in: "apiVersion: v1\nkind: Secret\ndata:\n  password: cGFzc3dvcmQ=\n  user: YWRtaW4=\nmetadata:\n  name: db", want: "apiVersion: v1\nkind: Secret\ndata:\n  password: [REDACTED:kubernetes-secret]\n  user: [REDACTED:kubernetes-secret]\nmetadata:\n  name: db"},
		{name: "nuget password", in: `<add key="ClearTextPassword" value="hunter2" />`, want: `<add key="ClearTextPassword" value="[REDACTED:config-secret]" />`},
		{name: "vault legacy", in: "VAULT=s.Ab3dEf6hIj9kLm2nOp5qRs8t", leaks: []string{"s.Ab3dEf6hIj9kLm2nOp5qRs8t"}},
		{name: "jwt without signature", in: "t=eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", want: "t=[REDACTED:jwt]"},
		{name: "private key in lower case", in: "-----begin ec private key-----\nMHcCAQEEIBkg\n-----end ec private key-----\nafter", want: "[REDACTED:private-key]\nafter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := r.String(tc.in)
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
			}
			assert.Positive(t, n)
			for _, l := range tc.leaks {
				assert.NotContains(t, got, l)
			}
			again, m := r.String(got)
			assert.Equal(t, got, again, "redacting twice is redacting once")
			assert.Zero(t, m)
		})
	}
}

// What must come out as it went in: source in several languages, go.sum
// and go.mod lines, commit ids, UUIDs, ordinary base64, URLs without
// credentials, prose about tokens and passwords.
func TestOrdinaryTextIsKept(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, nil)
	for _, tc := range []struct{ name, text string }{
		{"go handler", `func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) { token := r.Header.Get("X-Token"); if token == "" { return } }`},
		{"go store", "if err := s.store.Put(ctx, key, value); err != nil {\n\tkeyID := fmt.Sprintf(\"%s-%d\", name, n)\n\ttoken = cfg.Token\n}"},
		{"go assignment from env", `password := os.Getenv("DB_PASSWORD")`},
		{"js fetch", "const token = await getToken(user.id);\nfetch(url, { headers: { Authorization: `Bearer ${token}` } });\nlocalStorage.setItem(\"authToken\", token);"},
		{"js config", `const apiKey = process.env.API_KEY; const secret = config.secrets.primary;`},
		{"python", "def check_password(self, password: str) -> bool:\n    password = os.environ.get(\"PW\")\n    return hmac.compare_digest(self.hash(password), self.password_hash)"},
		{"python f-string header", `headers = {"Authorization": f"Bearer {token}"}`},
		{"yaml names", "secretName: my-app-tls\ntokenFile: /var/run/secrets/token\nserviceAccountName: builder"},
		{"go.sum", "golang.org/x/oauth2 v0.35.0 h1:Hdx9Ivg9jEpV8SxM6U5nt9CD9w1dGxeyW9SHvFz4W5I=\ngithub.com/aws/aws-sdk-go-v2/credentials v1.17.0/go.mod h1:4kKe6G5lZCbXjKZh9f2LqkSPbYxVwBXy5U7j6YkKqf8=\ngithub.com/golang-jwt/jwt/v5 v5.2.1 h1:OuVbFODueb089Lh128TAcimifWaLhJwVflnrgM17wHk="},
		{"go.mod", "require (\n\tgithub.com/spf13/cobra v1.10.2\n\tgolang.org/x/oauth2 v0.35.0 // indirect\n)"},
		{"commit ids", "commit 3f2a9c1b0d4e5f60718293a4b5c6d7e8f9a0b1c2\nMerge: 1a2b3c4 5d6e7f8\n    Fix token refresh (see 9fceb02d0ae598e95dc970b74767f19372d61af8)"},
		{"uuids", `{"id": "a3b0fc12-5d1e-4c4e-9a51-0d2b8f6c2e11", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}`},
		{"ordinary base64", "data = base64.b64decode(\"SGVsbG8sIHdvcmxkIQ==\")\nexpected := \"aGVsbG8gd29ybGQ=\"\nicon: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"},
		{"urls", "https://github.com/helmlog/helm/blob/main/README.md#secrets-are-never-stored\nhttps://example.com/search?q=token+bucket&page=2\nhttps://api.github.com/repos/o/r/pulls?state=open&per_page=100\nhttps://accounts.google.com/o/oauth2/auth?response_type=code&client_id=1234.apps.googleusercontent.com&scope=email"},
		{"prose", "The token bucket refills every second; pass the access key id, never the secret. Authentication failed: wrong password."},
		{"markdown table", "| id | count |\n|----|-------|\n| 1234567890123456 | 42 |"},
		{"shell", "export PATH=$PATH:/usr/local/go/bin\ngit log --oneline -n 5 | grep -i token\nssh-keygen -t ed25519 -f ~/.ssh/id_ed25519"},
		{"dotted method", "s.configurationManagerXY(); this.accessibilityServiceV2 = null;"},
		{"mysql -p is too ambiguous", "mysql -u app -p hunter2 db"},
		{"a flag's next flag is not its value", "docker login --password-stdin --username ci\npg_dump --no-password --verbose"},
		{"disk names", "disk-usage task-runner ask-me desk-0123456789abcdef0123456789abcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := r.String(tc.text)
			assert.Equal(t, tc.text, got)
			assert.Zero(t, n)
		})
	}
}

func TestJSONHidesTheArgumentAfterASecretFlag(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, nil)
	doc := `{"program":"mysql","args":["--password","hunter2","-h","db","--token", "t0k3n", "--verbose", "-p", "notaflagvalue"],"note":"--password"}`
	got, n := r.JSON([]byte(doc))
	require.True(t, json.Valid(got), "%s", got)
	var out struct {
		Args []string `json:"args"`
		Note string   `json:"note"`
	}
	require.NoError(t, json.Unmarshal(got, &out))
	assert.Equal(t, []string{"--password", "[REDACTED:secret-flag]", "-h", "db", "--token", "[REDACTED:secret-flag]", "--verbose", "-p", "notaflagvalue"}, out.Args)
	assert.Equal(t, "--password", out.Note)
	assert.Equal(t, 2, n)
}
