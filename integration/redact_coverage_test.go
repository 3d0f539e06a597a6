package integration

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/helmlog/helm/redact"
)

// The differential test of package redact: gitleaks, a maintained secret
// scanner, is the reference. For every rule of its default configuration
// (a family of secrets: a provider's token shape, or a keyword-and-value
// shape), samples are generated from the rule's own regular expression
// (a random string it matches, its keywords in the text, a path its path
// expression matches), and gitleaks is asked which of them it finds:
// a sample gitleaks does not find (its entropy, allowlist or keyword
// checks refuse it) is discarded. Every secret gitleaks finds in a kept
// sample must be gone from what helm's redactor makes of it (redact.New
// with default options), and the ordinary lines around the sample must be
// intact. It prints how many families produced a sample, and how many of
// those helm covers.

// canaries are ordinary lines set around each sample: none holds a
// secret, so each must come out of the redactor as it went in.
var canaries = []string{
	`func (s *Store) Open(ctx context.Context, name string) (*File, error) { return s.open(ctx, name) }`,
	`commit 3f2a9c1b0d4e5f60718293a4b5c6d7e8f9a0b1c2 (HEAD -> main, origin/main)`,
	`github.com/stretchr/testify v1.12.1 h1:Qmj0l/0sBxVCLqQe2ZJ3wN9CQyI4xbLy2cXNtfsjDtw=`,
	`request_id: a3b0fc12-5d1e-4c4e-9a51-0d2b8f6c2e11`,
	`See https://pkg.go.dev/net/http#Client and https://github.com/helmlog/helm/pull/12?tab=files`,
	`const handler = (req, res) => res.json({ ok: true, items: items.map((x) => x.id) });`,
	`    def tokenize(self, text: str) -> list[str]: return text.split()`,
	`icon: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ`,
}

// exclusions are the findings of gitleaks that helm leaves alone on
// purpose, by rule, each with its reason and the test telling them apart.
var exclusions = map[string]struct {
	why   string
	skips func(secret string) bool
}{
	// The rule's expression has a branch that is any 40 hex digits: every
	// git commit id, in a text that says "sourcegraph" anywhere.
	"sourcegraph-access-token": {"a bare 40-hex string is a git commit id as often as a token", regexp.MustCompile(`^[a-fA-F0-9]{40}$`).MatchString},
}

func TestRedactHidesWhatGitleaksFinds(t *testing.T) {
	logging.Logger = logging.Logger.Output(io.Discard)
	d, err := detect.NewDetectorDefaultConfig()
	require.NoError(t, err)
	red, err := redact.New(nil)
	require.NoError(t, err)
	for _, c := range canaries {
		require.Empty(t, d.DetectString(c), "gitleaks finds nothing in the canary %q", c)
	}

	// HELM_REDACT_SAMPLES and HELM_REDACT_SEED widen the search (more
	// samples a rule, another seed); the defaults keep it to a second.
	samplesPerRule, seed := 20, uint64(29)
	if n, err := strconv.Atoi(os.Getenv("HELM_REDACT_SAMPLES")); err == nil && n > 0 {
		samplesPerRule = n
	}
	if n, err := strconv.ParseUint(os.Getenv("HELM_REDACT_SEED"), 10, 64); err == nil {
		seed = n
	}
	attempts := 40 * samplesPerRule
	rnd := rand.New(rand.NewPCG(seed, 1))
	rules := d.Config.GetOrderedRules()
	var withSample, covered int
	var pathOnly, noSample []string
	var leaks []string
	excused := map[string]int{}
	for _, r := range rules {
		if r.Regex == nil {
			pathOnly = append(pathOnly, r.RuleID) // a file name rule: no text to hide
			continue
		}
		g, err := newGenerator(r.Regex.String())
		require.NoError(t, err, r.RuleID)
		var pathGen *generator
		if r.Path != nil {
			pathGen, err = newGenerator(r.Path.String())
			require.NoError(t, err, r.RuleID)
		}
		found, leaked := 0, false
		for try := 0; try < attempts && found < samplesPerRule; try++ {
			sample := g.generate(rnd, try%4 == 3)
			if strings.ContainsAny(sample, "\x00") {
				continue
			}
			before, after := canaries[try%len(canaries)], canaries[(try+3)%len(canaries)]
			text := before + "\n" + sample
			if !hasKeyword(text, r.Keywords) {
				text = r.Keywords[rnd.IntN(len(r.Keywords))] + "\n" + text
			}
			if try%2 == 0 { // else the sample ends the text, for the rules that want $
				text += "\n" + after
			}
			path := ""
			if pathGen != nil {
				path = "src/" + strings.TrimLeft(pathGen.generate(rnd, false), "/")
			}
			//lint:ignore SA1019 gitleaks v8's Detect takes only detect.Fragment (sources.Fragment replaces it in v9)
			findings := d.Detect(detect.Fragment{Raw: text, FilePath: path})
			if !slices.ContainsFunc(findings, func(f report.Finding) bool { return f.RuleID == r.RuleID }) {
				continue
			}
			found++
			out, _ := red.String(text)
			for _, f := range findings {
				if f.Secret == "" || !strings.Contains(out, f.Secret) {
					continue
				}
				if x, ok := exclusions[f.RuleID]; ok && x.skips(f.Secret) {
					excused[f.RuleID]++
					continue
				}
				leaked = true
				leaks = append(leaks, fmt.Sprintf("%s: %q stays in %q", f.RuleID, f.Secret, out))
			}
			assert.Contains(t, out, before, "%s: the line before the sample is kept", r.RuleID)
			if try%2 == 0 {
				assert.Contains(t, out, after, "%s: the line after the sample is kept", r.RuleID)
			}
		}
		if found == 0 {
			noSample = append(noSample, r.RuleID)
			continue
		}
		withSample++
		if !leaked {
			covered++
		}
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Error(l)
	}
	t.Logf("gitleaks: %d rules; %d produced a sample gitleaks finds; helm hides every secret found in %d of them (%d/%d)", len(rules), withSample, covered, covered, withSample)
	t.Logf("file-name rules, no text: %v", pathOnly)
	t.Logf("no sample found: %v", noSample)
	for id, x := range exclusions {
		t.Logf("left to gitleaks in %s (%d findings): %s", id, excused[id], x.why)
	}
	assert.Empty(t, noSample, "every rule with an expression yields a sample")
	assert.Equal(t, withSample, covered)
}

func hasKeyword(text string, keywords []string) bool {
	if len(keywords) == 0 {
		return true
	}
	lower := strings.ToLower(text)
	for _, k := range keywords {
		if strings.Contains(lower, strings.ToLower(k)) {
			return true
		}
	}
	return false
}

// generator makes random strings that a regular expression matches, as a
// secret would look: classes of every printable character (.  \S [^"])
// give letters and digits, white space is a blank, a tab or a line end,
// and unbounded repetitions repeat a few times more than their minimum.
type generator struct{ re *syntax.Regexp }

func newGenerator(expr string) (*generator, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return &generator{re: re.Simplify()}, nil
}

// generate returns a string matching the expression; with anyCase, the
// literals under (?i) come in random case.
func (g *generator) generate(rnd *rand.Rand, anyCase bool) string {
	var b strings.Builder
	gen(&b, g.re, rnd, anyCase)
	return b.String()
}

func gen(b *strings.Builder, re *syntax.Regexp, rnd *rand.Rand, anyCase bool) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if anyCase && re.Flags&syntax.FoldCase != 0 && rnd.IntN(2) == 0 {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		b.WriteRune(pick(re.Rune, rnd))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteRune(pick([]rune{0, unicode.MaxRune}, rnd))
	case syntax.OpCapture:
		gen(b, re.Sub[0], rnd, anyCase)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			hi = lo + 6
		}
		n := lo + rnd.IntN(min(hi-lo, 10)+1)
		for range n {
			gen(b, re.Sub[0], rnd, anyCase)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			gen(b, sub, rnd, anyCase)
		}
	case syntax.OpAlternate:
		gen(b, re.Sub[rnd.IntN(len(re.Sub))], rnd, anyCase)
	}
	// Empty matches and assertions (^ $ \b \A \z) write nothing: a
	// sample that does not meet them is not found, and is discarded.
}

// pick returns a random rune of the class (pairs of ranges): printable
// ASCII, a tab or a line end; letters and digits only for a class that
// holds most of printable ASCII.
func pick(class []rune, rnd *rand.Rand) rune {
	in := func(r rune) bool {
		for i := 0; i+1 < len(class); i += 2 {
			if class[i] <= r && r <= class[i+1] {
				return true
			}
		}
		return false
	}
	var printable, alnum []rune
	for r := rune(' '); r <= '~'; r++ {
		if in(r) {
			printable = append(printable, r)
			if '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
				alnum = append(alnum, r)
			}
		}
	}
	for _, r := range []rune{'\t', '\n'} {
		if in(r) {
			printable = append(printable, r)
		}
	}
	if len(printable) > 70 && len(alnum) > 0 {
		return alnum[rnd.IntN(len(alnum))]
	}
	if len(printable) > 0 {
		return printable[rnd.IntN(len(printable))]
	}
	return class[0]
}
