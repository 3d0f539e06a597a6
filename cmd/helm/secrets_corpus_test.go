package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

// corpusSecret is one sample of the secret corpus: a line as it would
// appear (in a file, on a command line, in a message) and the secret in
// it, which must never be stored.
type corpusSecret struct {
	name, line, secret string
	// args, when set, is how the sample is passed as separate arguments
	// of a command (["--password", "X"]); else the line is one argument.
	args []string
}

// fake returns n characters of alphabet, deterministic and varied.
func fake(alphabet string, n int, seed int) string {
	var b strings.Builder
	x := uint32(seed)*2654435761 + 12345
	for range n {
		x = x*1103515245 + 12345
		b.WriteByte(alphabet[(x>>16)%uint32(len(alphabet))])
	}
	return b.String()
}

const (
	alnumChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexChars   = "0123456789abcdef"
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// secretCorpus is one sample of each shape issue 29 names and of about
// thirty token families, keyed families and free-text rules of package
// redact, with fake values of the providers' formats.
func secretCorpus() []corpusSecret {
	s := func(name, line, secret string) corpusSecret {
		return corpusSecret{name: name, line: line, secret: secret}
	}
	tok := func(name, prefix, alphabet string, n, seed int) corpusSecret {
		v := prefix + fake(alphabet, n, seed)
		return s(name, "token: "+v, v)
	}
	bearer, basic := fake(alnumChars, 40, 1), "YWRtaW46"+fake(alnumChars, 16, 2)+"=="
	cookie, setCookie := fake(alnumChars, 32, 3), fake(alnumChars, 28, 4)
	pw1, pw2 := "Pw-"+fake(alnumChars, 12, 5), "Pw="+fake(alnumChars, 12, 6)
	code, access := "4/0A"+fake(alnumChars, 30, 7), "ya29."+fake(alnumChars, 40, 8)
	twitter, heroku := fake(alnumChars, 50, 9), fake(hexChars, 8, 10)+"-"+fake(hexChars, 4, 11)+"-"+fake(hexChars, 4, 12)+"-"+fake(hexChars, 4, 13)+"-"+fake(hexChars, 12, 14)
	datadog, generic := fake(alnumChars, 40, 15), "Zx81"+fake(alnumChars, 18, 16)
	k8s, curlPw, urlPw, dotenv := fake(alnumChars, 24, 17)+"==", "cUrl-"+fake(alnumChars, 12, 18), "uRl-"+fake(alnumChars, 14, 19), "dotenv-"+fake(alnumChars, 16, 20)
	pem := fake(alnumChars, 64, 21)
	return []corpusSecret{
		tok("github-pat", "ghp_", alnumChars, 36, 30),
		tok("github-fine-grained", "github_pat_", alnumChars+"_", 82, 31),
		tok("aws", "AKIA", upperChars, 16, 32),
		s("slack", "slack xoxb-1234567890123-1234567890123-"+fake(alnumChars, 24, 33), "xoxb-1234567890123-1234567890123-"+fake(alnumChars, 24, 33)),
		tok("stripe", "sk_live_", alnumChars, 24, 34),
		tok("anthropic", "sk-ant-api03-", alnumChars+"_-", 93, 35),
		tok("openai", "sk-proj-", alnumChars+"_-", 80, 36),
		tok("npm", "npm_", alnumChars, 36, 37),
		tok("gitlab", "glpat-", alnumChars+"_-", 20, 38),
		tok("gcp", "AIza", alnumChars+"_-", 35, 39),
		tok("sendgrid", "SG."+fake(alnumChars, 22, 40)+".", alnumChars, 43, 41),
		tok("huggingface", "hf_", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", 34, 42),
		tok("digitalocean", "dop_v1_", hexChars, 64, 43),
		tok("pypi", "pypi-AgEIcHlwaS5vcmc", alnumChars, 60, 44),
		tok("shopify", "shpat_", hexChars, 32, 45),
		tok("twilio", "SK", hexChars, 32, 46),
		tok("vault", "hvs.", alnumChars, 95, 47),
		tok("dynatrace", "dt0c01."+fake(upperChars, 24, 48)+".", upperChars, 64, 49),
		tok("doppler", "dp.pt.", alnumChars, 43, 50),
		tok("linear", "lin_api_", alnumChars, 40, 51),
		tok("databricks", "dapi", hexChars, 32, 52),
		tok("pulumi", "pul-", hexChars, 40, 53),
		tok("age", "AGE-SECRET-KEY-1", upperChars, 58, 54),
		tok("grafana", "glsa_"+fake(alnumChars, 32, 55)+"_", hexChars, 8, 56),
		tok("new-relic", "NRAK-", upperChars, 27, 57),
		s("jwt", "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JwdXMifQ."+fake(alnumChars, 43, 58), "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JwdXMifQ."+fake(alnumChars, 43, 58)),
		s("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+pem+"\n-----END OPENSSH PRIVATE KEY-----", pem),
		s("authorization bearer", "Authorization: Bearer "+bearer, bearer),
		s("authorization basic", "authorization: Basic "+basic, basic),
		s("cookie", "Cookie: session="+cookie+"; theme=dark", cookie),
		s("set-cookie", "Set-Cookie: sid="+setCookie+"; Path=/; HttpOnly", setCookie),
		{name: "password flag", line: "mysql --password " + pw1 + " -h db", secret: pw1, args: []string{"--password", pw1}},
		{name: "password flag with =", line: "psql --password=" + pw2, secret: pw2, args: []string{"--password=" + pw2}},
		s("oauth code", "https://app.example/callback?code="+code+"&state=xyz", code),
		s("access token in a url", "https://app.example/cb#access_token="+access+"&token_type=Bearer", access),
		s("keyed twitter", `TWITTER_CONSUMER_SECRET = "`+twitter+`"`, twitter),
		s("keyed heroku", "heroku_api_key: "+heroku, heroku),
		s("keyed datadog", `datadog_app = "`+datadog+`"`, datadog),
		s("generic key", "stripeClientKey: "+generic, generic),
		s("kubernetes secret", "kind: Secret\ndata:\n  password: "+k8s, k8s),
		s("curl user", "curl -u admin:"+curlPw+" https://example.com", curlPw),
		s("url credentials", "git clone https://bob:"+urlPw+"@git.example.com/x.git", urlPw),
		s("dotenv", "DB_PASSWORD="+dotenv, dotenv),
	}
}

// corpusCanaries are ordinary lines set among the secrets: each must come
// out of every export as it went in (no quote, <, >, & or *, which an
// export may escape).
var corpusCanaries = []string{
	"func Open(ctx context.Context, name string) (File, error) { return open(ctx, name) }",
	"commit 3f2a9c1b0d4e5f60718293a4b5c6d7e8f9a0b1c2 fixed the reload path",
	"golang.org/x/oauth2 v0.35.0 h1:Hdx9Ivg9jEpV8SxM6U5nt9CD9w1dGxeyW9SHvFz4W5I=",
	"request a3b0fc12-5d1e-4c4e-9a51-0d2b8f6c2e11 took 12ms",
	"see https://pkg.go.dev/net/http#Client for the token bucket",
}

// TestSecretCorpusIsNeverStored: the corpus of secrets goes in through
// every entry path — file contents, a command's output and arguments, a
// context, a note, a bearing's reading, a judge's text, a mark's key (a
// URL), a commit message (refused, then allowed with --allow-secret), MCP
// tool arguments — and no byte under the home holds one of them, the
// artifacts decompressed, nor does any export (jsonl with its artifacts
// decompressed, md, html); the ordinary lines among them come out of
// every export intact.
func TestSecretCorpusIsNeverStored(t *testing.T) {
	t.Parallel()
	corpus := secretCorpus()
	var lines []string
	for i, c := range corpus {
		lines = append(lines, c.line, corpusCanaries[i%len(corpusCanaries)])
	}
	text := strings.Join(lines, "\n") + "\n"
	var argv []string
	for _, c := range corpus {
		if c.args != nil {
			argv = append(argv, c.args...)
		} else {
			argv = append(argv, c.line)
		}
	}
	// What the canaries are checked in: texts the story tells.
	canaryText := strings.Join(corpusCanaries, "\n")

	h, _, g := newGitHubHarness(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "sid="+corpus[0].secret)
		_, _ = w.Write([]byte("ok\n"))
	}))
	defer web.Close()
	var webSecret corpusSecret
	for _, c := range corpus {
		if c.name == "oauth code" {
			webSecret = c
		}
	}
	h.writeFile("corpus.txt", text)

	id := h.start("secret corpus")
	h.ok("observe", "file-contents", "--read", "corpus.txt")
	h.ok("observe", "command", "--", "cat", "corpus.txt")
	h.ok(append([]string{"observe", "command", "--", "echo"}, argv...)...)
	h.ok("observe", "context", text)
	h.ok("observe", "web", web.URL+"/callback?code="+webSecret.secret+"&state=xyz") // the mark's key: a URL with a code
	h.ok("note", text+canaryText)
	h.ok("bearing", "--reading", text+canaryText)

	g.Git(t, "switch", "-q", "-c", "corpus")
	g.WriteFile(t, "widget.rs", "fixed\n")
	g.Git(t, "add", "widget.rs")
	// An action whose parameters hold a secret is refused, and nothing of
	// it is recorded; allowed, it is recorded with the markers.
	for _, c := range corpus {
		r := h.fails(2, "action", "commit", "-m", "rotate "+c.line)
		assert.Contains(t, r.Stderr, "the action's parameters hold a secret", c.name)
		assert.NotContains(t, r.Stderr+r.Stdout, c.secret, "%s: the refusal names the rule, never the value", c.name)
	}
	h.ok("action", "commit", "-m", "rotate\n\n"+text, "--allow-secret")
	h.ok("complete", "--summary", "rotated "+corpus[1].line)
	h.ok("--voyage", id, "judge", "--as", "carol", "--role", "judge", "--method", "human", "--score", "8", "--dimension", "care", "--evidence", "1", text+canaryText)

	// MCP tool arguments, in a voyage of the agent's own.
	agentEnv(h)
	mc := h.mcp()
	_, info := ok[helm.VoyageInfo](mc, "voyage_start", map[string]any{"intent": "secret corpus over MCP"})
	ok[view.Observed](mc, "observe", map[string]any{"voyage": info.ID, "kind": "context", "description": text})
	ok[view.Observed](mc, "observe", map[string]any{"voyage": info.ID, "kind": "command", "command": append([]string{"echo"}, argv...)})
	ok[logbook.Entry](mc, "note", map[string]any{"voyage": info.ID, "text": text + canaryText})
	ok[logbook.Entry](mc, "bearing_take", map[string]any{"voyage": info.ID, "reading": text + canaryText})
	_, te := mc.fails("commit", map[string]any{"voyage": info.ID, "message": "rotate " + corpus[2].line})
	assert.Contains(t, te.Try, "allow_secret")
	mc.close()

	// Every byte under the home, and every zstd frame in it decompressed.
	raw, unpacked := storedText(t, h.Home)
	assert.Contains(t, unpacked, "[REDACTED:anthropic-api-key]", "the sightings were decompressed")
	assert.Contains(t, unpacked, corpusCanaries[1], "the sightings were decompressed")
	stored := raw + unpacked
	// Every export of both voyages.
	var exports []string
	for _, v := range []string{id, info.ID} {
		for _, format := range []string{"jsonl", "md", "html"} {
			out := h.ok("voyage", "export", v, "--format", format)
			exports = append(exports, out)
			if format == "jsonl" {
				exports = append(exports, archiveArtifacts(t, out))
			}
			assert.Greater(t, len(out), 1000, "%s export of %s", format, v)
		}
	}
	for _, c := range corpus {
		assert.NotContains(t, stored, c.secret, "%s: stored under the home", c.name)
		for i, e := range exports {
			assert.NotContains(t, e, c.secret, "%s: in export %d", c.name, i)
		}
	}
	for i, e := range exports {
		if i%4 == 1 { // the artifacts of a jsonl export: sightings, not the story
			continue
		}
		for _, line := range corpusCanaries {
			assert.Contains(t, e, line, "export %d keeps the ordinary line", i)
		}
	}
	for _, marker := range []string{"[REDACTED:github-token]", "[REDACTED:authorization]", "[REDACTED:cookie]", "[REDACTED:secret-flag]", "[REDACTED:url-query-secret]", "[REDACTED:anthropic-api-key]", "[REDACTED:twitter-secret]", "[REDACTED:kubernetes-secret]"} {
		assert.Contains(t, stored, marker)
	}
}

// storedText returns every byte of every file under dir, and the
// decompressed contents of every zstd frame found in them (a sighting is
// stored compressed, in a blob record of the log or a frame of the pack):
// searching the raw bytes alone would prove nothing about them.
func storedText(t *testing.T, dir string) (raw, unpacked string) {
	t.Helper()
	var all, frames bytes.Buffer
	files := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		files++
		all.Write(data)
		all.WriteByte('\n')
		frames.Write(zstdFrames(t, data))
		return nil
	}))
	require.Positive(t, files)
	return all.String(), frames.String()
}

// zstdMagic begins every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// zstdFrames decompresses every zstd frame in data, wherever it starts:
// a frame runs to its end, and what follows it (another record) ends the
// decoding without losing what was decoded.
func zstdFrames(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for i := 0; ; {
		j := bytes.Index(data[i:], zstdMagic)
		if j < 0 {
			break
		}
		i += j
		dec, err := zstd.NewReader(bytes.NewReader(data[i:]), zstd.WithDecoderConcurrency(1))
		require.NoError(t, err)
		if n, _ := io.Copy(&out, dec); n > 0 { // up to the first byte that is not a frame
			out.WriteByte('\n')
		}
		dec.Close()
		i += len(zstdMagic)
	}
	return out.Bytes()
}

// archiveArtifacts returns the artifacts of a jsonl export, decompressed.
func archiveArtifacts(t *testing.T, export string) string {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			Artifact *struct {
				Encoding string `json:"encoding"`
				Data     []byte `json:"data"`
			} `json:"artifact"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Artifact == nil || line.Artifact.Data == nil {
			continue // an event (some name an artifact), not an artifact's line
		}
		require.Equal(t, "zstd", line.Artifact.Encoding)
		out.Write(zstdFrames(t, line.Artifact.Data))
		n++
	}
	require.NoError(t, sc.Err())
	require.Positive(t, n, "the export carries artifacts")
	return out.String()
}
