package integration

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/helmlog/helm/redact"
)

// The secret corpus of cmd/helm (issue 29): one sample of every family of
// gitleaks' default rules that helm must hide, which cmd/helm's
// TestSecretCorpusFamiliesAreNeverStored sends through every entry path.
// cmd/helm cannot run gitleaks (the scanner stays out of the library's
// module), so the samples are generated here, as the differential test
// generates them, and committed as a file.
//
// The file is lines of FAMILY<TAB>SECRET<TAB>TEXT, and a fourth field,
// PATH, for the rules that look only in files whose name matches: TEXT is
// one line gitleaks finds the family in (the rule's keyword in it when the
// rule needs one), SECRET what gitleaks reports as the secret. Lines that
// start with # are comments.

// secretCorpusFile is the committed corpus, from this module's directory.
const secretCorpusFile = "../cmd/helm/testdata/secrets/corpus.txt"

// secretCorpusEnv names the file TestWriteSecretCorpus writes.
const secretCorpusEnv = "HELM_WRITE_SECRET_CORPUS"

// secretCorpusSeed is the seed of every family's samples, each family's
// generator also seeded with its rule id: a rule gitleaks adds or changes
// changes its own line only.
const secretCorpusSeed = 29

// corpusSample is one line of the corpus.
type corpusSample struct {
	family, secret, text, path string
}

func (s corpusSample) line() string {
	l := s.family + "\t" + s.secret + "\t" + s.text
	if s.path != "" {
		l += "\t" + s.path
	}
	return l + "\n"
}

// TestWriteSecretCorpus writes the corpus to the file HELM_WRITE_SECRET_CORPUS
// names; without it, the test is skipped. To regenerate the committed
// corpus (after a gitleaks upgrade):
//
//	HELM_WRITE_SECRET_CORPUS=../cmd/helm/testdata/secrets/corpus.txt go test -run TestWriteSecretCorpus ./
func TestWriteSecretCorpus(t *testing.T) {
	path := os.Getenv(secretCorpusEnv)
	if path == "" {
		t.Skip(secretCorpusEnv + " names no file to write the corpus to")
	}
	corpus := generateSecretCorpus(t)
	require.NoError(t, os.WriteFile(path, corpus, 0o644))
	t.Logf("wrote %d lines to %s", bytes.Count(corpus, []byte("\n")), path)
}

// TestSecretCorpusIsWhatGitleaksFinds: every line of the committed corpus
// names a rule of gitleaks' default configuration, gitleaks still finds
// its SECRET in its TEXT, and helm's redactor hides it; every rule with an
// expression has a line; and the file is byte for byte what the generator
// writes now, so that a gitleaks upgrade cannot leave it stale unnoticed.
func TestSecretCorpusIsWhatGitleaksFinds(t *testing.T) {
	logging.Logger = logging.Logger.Output(io.Discard)
	d, err := detect.NewDetectorDefaultConfig()
	require.NoError(t, err)
	red, err := redact.New(nil)
	require.NoError(t, err)
	committed, err := os.ReadFile(secretCorpusFile)
	require.NoError(t, err)
	regenerate := "regenerate it: cd integration && " + secretCorpusEnv + "=" + secretCorpusFile + " go test -run TestWriteSecretCorpus ./"

	samples, err := parseSecretCorpus(committed)
	require.NoError(t, err, "%s", secretCorpusFile)
	seen := map[string]bool{}
	for _, s := range samples {
		assert.False(t, seen[s.family], "%s: one line a family", s.family)
		seen[s.family] = true
		if _, ok := d.Config.Rules[s.family]; !ok {
			t.Errorf("%s: no longer a rule of gitleaks' default configuration; %s", s.family, regenerate)
			continue
		}
		//lint:ignore SA1019 gitleaks v8's Detect takes only detect.Fragment (sources.Fragment replaces it in v9)
		findings := d.Detect(detect.Fragment{Raw: s.text, FilePath: s.path})
		assert.True(t, slices.ContainsFunc(findings, func(f report.Finding) bool { return f.RuleID == s.family && f.Secret == s.secret }),
			"%s: gitleaks no longer finds %q in %q; %s", s.family, s.secret, s.text, regenerate)
		out, _ := red.String(s.text)
		assert.NotContains(t, out, s.secret, "%s: helm's redactor hides the secret", s.family)
	}
	for _, r := range d.Config.GetOrderedRules() {
		if r.Regex != nil {
			assert.True(t, seen[r.RuleID], "%s: a rule of gitleaks with no line in the corpus; %s", r.RuleID, regenerate)
		}
	}
	if !t.Failed() {
		assert.Equal(t, string(generateSecretCorpus(t)), string(committed), "the committed corpus is what the generator writes; %s", regenerate)
	}
}

// parseSecretCorpus reads the corpus file's lines.
func parseSecretCorpus(data []byte) ([]corpusSample, error) {
	var samples []corpusSample
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 || len(f) > 4 || f[0] == "" || f[1] == "" || !strings.Contains(f[2], f[1]) {
			return nil, fmt.Errorf("line %d: want FAMILY<TAB>SECRET<TAB>TEXT[<TAB>PATH], the SECRET in the TEXT: %q", i+1, line)
		}
		s := corpusSample{family: f[0], secret: f[1], text: f[2]}
		if len(f) == 4 {
			s.path = f[3]
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// generateSecretCorpus returns the corpus: for each rule of gitleaks'
// default configuration that has an expression, in gitleaks' order, the
// first sample its generator makes that is one line of printable ASCII
// without a tab, nor a blank at either end (an editor may trim it), in
// which gitleaks finds the rule (with its keyword before the sample when
// the sample holds none), and whose secret is not one helm leaves to
// gitleaks on purpose (exclusions). Every secret
// gitleaks finds in it must be gone from what helm's redactor makes of
// it: a sample that exposes a miss fails the test, it is not skipped.
func generateSecretCorpus(t *testing.T) []byte {
	t.Helper()
	logging.Logger = logging.Logger.Output(io.Discard)
	d, err := detect.NewDetectorDefaultConfig()
	require.NoError(t, err)
	red, err := redact.New(nil)
	require.NoError(t, err)

	var b bytes.Buffer
	b.WriteString("# One sample of each family of gitleaks' default rules that helm must hide:\n")
	b.WriteString("# FAMILY<TAB>SECRET<TAB>TEXT[<TAB>PATH]. Generated; random strings shaped like tokens, not secrets.\n")
	b.WriteString("# Regenerate: cd integration && " + secretCorpusEnv + "=" + secretCorpusFile + " go test -run TestWriteSecretCorpus ./\n")
	const attempts = 4000
	var none []string
	for _, r := range d.Config.GetOrderedRules() {
		if r.Regex == nil {
			continue // a file name rule: no text to hide
		}
		g, err := newGenerator(r.Regex.String())
		require.NoError(t, err, r.RuleID)
		var pathGen *generator
		if r.Path != nil {
			pathGen, err = newGenerator(r.Path.String())
			require.NoError(t, err, r.RuleID)
		}
		id := fnv.New64a()
		_, _ = io.WriteString(id, r.RuleID)
		rnd := rand.New(rand.NewPCG(secretCorpusSeed, id.Sum64()))
		var found *corpusSample
		for try := 0; try < attempts && found == nil; try++ {
			text := g.generate(rnd, try%4 == 3)
			if !hasKeyword(text, r.Keywords) {
				text = r.Keywords[rnd.IntN(len(r.Keywords))] + " " + text
			}
			path := ""
			if pathGen != nil {
				path = "corpus/sample" + pathGen.generate(rnd, false)
			}
			if !oneLine(text) || !oneLine(path) || strings.TrimSpace(text) != text {
				continue
			}
			//lint:ignore SA1019 gitleaks v8's Detect takes only detect.Fragment (sources.Fragment replaces it in v9)
			findings := d.Detect(detect.Fragment{Raw: text, FilePath: path})
			i := slices.IndexFunc(findings, func(f report.Finding) bool { return f.RuleID == r.RuleID && f.Secret != "" })
			if i < 0 {
				continue
			}
			secret := findings[i].Secret
			if x, ok := exclusions[r.RuleID]; ok && x.skips(secret) {
				continue
			}
			if !oneLine(secret) || !strings.Contains(text, secret) {
				continue
			}
			out, _ := red.String(text)
			for _, f := range findings {
				if x, ok := exclusions[f.RuleID]; ok && x.skips(f.Secret) {
					continue
				}
				assert.NotContains(t, out, f.Secret, "%s: helm hides what gitleaks finds (%s) in %q", r.RuleID, f.RuleID, text)
			}
			found = &corpusSample{family: r.RuleID, secret: secret, text: text, path: path}
		}
		if found == nil {
			none = append(none, r.RuleID)
			continue
		}
		b.WriteString(found.line())
	}
	assert.Empty(t, none, "every rule with an expression yields a one-line sample")
	return b.Bytes()
}

// oneLine reports whether s is printable ASCII: no line end, no tab (the
// corpus's separator), nothing an entry path could change.
func oneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
