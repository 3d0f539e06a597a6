package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

// familySample is one line of testdata/secrets/corpus.txt: a sample of
// one family of the reference scanner's rules (gitleaks), generated and
// checked against it in the integration module.
type familySample struct {
	family string
	// secret is what the scanner reports as the secret; text is the line
	// it was found in; path, when set, is a file name the rule needs.
	secret, text, path string
}

// familyCorpus reads testdata/secrets/corpus.txt.
func familyCorpus(t *testing.T) []familySample {
	t.Helper()
	data, err := os.ReadFile("testdata/secrets/corpus.txt")
	require.NoError(t, err)
	var samples []familySample
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		require.True(t, len(f) == 3 || len(f) == 4, "corpus.txt:%d: FAMILY<TAB>SECRET<TAB>TEXT[<TAB>PATH]: %q", i+1, line)
		require.Contains(t, f[2], f[1], "corpus.txt:%d: the secret is in the text", i+1)
		s := familySample{family: f[0], secret: f[1], text: f[2]}
		if len(f) == 4 {
			s.path = f[3]
		}
		samples = append(samples, s)
	}
	require.Greater(t, len(samples), 200, "a sample of each family")
	return samples
}

// familyCanary is the ordinary line set after sample i: it must come out
// of every export as it went in, so the redactor took the sample and not
// the line after it.
func familyCanary(i int) string {
	return fmt.Sprintf("ordinary line %03d, %s", i, corpusCanaries[i%len(corpusCanaries)])
}

// secretForms are the spellings of a secret that would show it: as it is,
// and as a JSON string holds it (with and without HTML escaping).
func secretForms(secret string) []string {
	forms := []string{secret}
	for _, escapeHTML := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		_ = enc.Encode(secret)
		if f := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(b.String()), `"`), `"`); f != secret {
			forms = append(forms, f)
		}
	}
	return forms
}

// mdEscaped is a backslash before ASCII punctuation, as markdown escapes it.
var mdEscaped = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")

// TestSecretCorpusFamiliesAreNeverStored: a sample of every family of
// gitleaks' default rules that helm hides (testdata/secrets/corpus.txt),
// each followed by an ordinary line, goes in through every entry path —
// file contents (and a file of the name its rule wants), a command's
// output and arguments, a web page, a context, a note, a bearing's
// reading, a judge's text, a mark's key (the command's and the context's),
// a commit message (each sample refused alone, then all allowed with
// --allow-secret), MCP tool arguments — and no byte under the home holds
// a secret, the artifacts decompressed, nor does any export (jsonl with
// its artifacts decompressed, md and html with their escapes undone);
// every ordinary line comes out of every export intact, and in the log
// the line before each is a redaction marker.
func TestSecretCorpusFamiliesAreNeverStored(t *testing.T) {
	t.Parallel()
	samples := familyCorpus(t)
	var lines, reads []string
	for i, s := range samples {
		lines = append(lines, s.text, familyCanary(i))
	}
	text := strings.Join(lines, "\n") + "\n"
	argv := lines // each line one argument, printed one a line

	h, _, g := newGitHubHarness(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(text))
	}))
	defer web.Close()
	h.writeFile("families.txt", text)
	reads = append(reads, "--read", "families.txt")
	for i, s := range samples {
		if s.path != "" { // a rule that looks only in files of this name
			h.writeFile(s.path, s.text+"\n"+familyCanary(i)+"\n")
			reads = append(reads, "--read", s.path)
		}
	}

	id := h.start("secret families")
	h.ok(append([]string{"observe", "file-contents"}, reads...)...)
	h.ok("observe", "command", "--", "cat", "families.txt")
	h.ok(append([]string{"observe", "command", "--", "printf", `%s\n`}, argv...)...)
	h.ok("observe", "context", text)
	h.ok("observe", "web", web.URL+"/families")
	h.ok("note", text)
	h.ok("bearing", "--reading", text)

	g.Git(t, "switch", "-q", "-c", "families")
	g.WriteFile(t, "widget.rs", "fixed\n")
	g.Git(t, "add", "widget.rs")
	// Each sample alone in a commit message is refused, and the refusal
	// names the rule, never the value.
	for _, s := range samples {
		r := h.fails(2, "action", "commit", "-m", "rotate "+s.text)
		assert.Contains(t, r.Stderr, "the action's parameters hold a secret", s.family)
		assert.NotContains(t, r.Stderr+r.Stdout, s.secret, "%s: the refusal shows no secret", s.family)
	}
	h.ok("action", "commit", "-m", "rotate\n\n"+text, "--allow-secret")
	h.ok("complete", "--summary", "rotated "+samples[0].text)
	h.ok("--voyage", id, "judge", "--as", "carol", "--role", "judge", "--method", "human", "--score", "8", "--dimension", "care", "--evidence", "1", text)

	// In the log, each ordinary line follows a marker where its sample was.
	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "log", "--json")), &lj))
	var note, message string
	for _, e := range lj.Entries {
		switch {
		case e.Note != nil:
			note = e.Note.Text
		case e.Action != nil && e.Action.Kind == "commit":
			var p struct{ Message string }
			require.NoError(t, json.Unmarshal(e.Action.Params, &p))
			message = p.Message
		}
	}
	for what, stored := range map[string]string{"note": note, "commit message": message} {
		got := strings.Split(stored, "\n")
		for i, s := range samples {
			at := slices.Index(got, familyCanary(i))
			if !assert.Positive(t, at, "%s: the ordinary line after %s is kept", what, s.family) {
				continue
			}
			assert.Contains(t, got[at-1], "[REDACTED:", "%s: a marker where the %s sample was", what, s.family)
		}
	}

	// MCP tool arguments, in a voyage of the agent's own.
	agentEnv(h)
	mc := h.mcp()
	_, info := ok[helm.VoyageInfo](mc, "voyage_start", map[string]any{"intent": "secret families over MCP"})
	ok[view.Observed](mc, "observe", map[string]any{"voyage": info.ID, "kind": "context", "description": text})
	ok[view.Observed](mc, "observe", map[string]any{"voyage": info.ID, "kind": "command", "command": append([]string{"printf", `%s\n`}, argv...)})
	ok[logbook.Entry](mc, "note", map[string]any{"voyage": info.ID, "text": text})
	ok[logbook.Entry](mc, "bearing_take", map[string]any{"voyage": info.ID, "reading": text})
	for _, s := range samples {
		msg, te := mc.fails("commit", map[string]any{"voyage": info.ID, "message": "rotate " + s.text})
		assert.Contains(t, te.Try, "allow_secret", s.family)
		assert.NotContains(t, msg, s.secret, "%s: the refusal shows no secret", s.family)
	}
	mc.close()

	// Every byte under the home, and every zstd frame in it decompressed.
	raw, unpacked := storedText(t, h.Home)
	haystacks := map[string]string{"the home": raw, "the home's artifacts": unpacked}
	for i := range samples {
		assert.True(t, strings.Contains(unpacked, familyCanary(i)), "the sightings were decompressed and keep ordinary line %d", i)
	}
	// Every export of both voyages, the escapes of md and html undone.
	for _, v := range []string{id, info.ID} {
		for _, format := range []string{"jsonl", "md", "html"} {
			out := h.ok("voyage", "export", v, "--format", format)
			name := format + " export of " + v
			switch format {
			case "jsonl":
				haystacks["artifacts of the "+name] = archiveArtifacts(t, out)
			case "md":
				out = mdEscaped.ReplaceAllString(out, "$1")
			case "html":
				out = html.UnescapeString(out)
			}
			haystacks[name] = out
			for i := range samples {
				assert.True(t, strings.Contains(out, familyCanary(i)), "%s keeps ordinary line %d", name, i)
			}
		}
	}
	for _, s := range samples {
		for _, form := range secretForms(s.secret) {
			for name, stored := range haystacks {
				assert.False(t, strings.Contains(stored, form), "%s: %q in %s", s.family, form, name)
			}
		}
	}
}
