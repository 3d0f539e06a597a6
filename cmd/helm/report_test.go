package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/report"
)

// TestReportOfAVoyageWithRealCommits plays a voyage in a real repository
// whose pushes go to a local bare remote and whose pull requests to the
// GitHub stand-in: a challenged bearing, a commit of two files, a push, a
// pull request, a failed push, a note, a completion, a judgement and a
// sub-voyage. The markdown report is a golden file; its numbers of lines
// are git's own.
func TestReportOfAVoyageWithRealCommits(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "Widget crashes on init"})
	g.WriteFile(t, "widget.rs", "pub fn init(cfg: &Config) {\n    cfg.apply();\n}\n")
	g.WriteFile(t, "CHANGELOG.md", "# Changelog\n")
	g.Git(t, "add", ".")
	g.Git(t, "commit", "-q", "-m", "widget")
	base := g.Git(t, "rev-parse", "HEAD")

	h.at(0)
	id := h.start("Resolve #"+itoa(issue)+": fix widget crash", "--kind", "resolve-issue")
	v := id[:8]
	h.at(1)
	h.ok("observe", "file-contents", "--read", "widget.rs")
	h.at(2)
	h.ok("bearing", "--reading", "init() dereferences cfg without a check.")
	h.at(3)
	h.ok("bearing", "challenge", "1", "--as", "bob", "--role", "reviewer", "--with", "cfg is a reference: it cannot be null", "--reading", "init() panics when apply() fails on an empty Config.")
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "widget.rs", "pub fn init(cfg: &Config) {\n    if cfg.is_empty() {\n        return;\n    }\n    cfg.apply();\n}\n")
	g.WriteFile(t, "CHANGELOG.md", "# Changelog\n\n- Fix the crash on an empty Config.\n")
	g.Git(t, "add", ".")
	h.at(5)
	h.ok("action", "commit", "--message", "Return early on an empty Config", "--why", "the reading of bearing 1")
	head := g.Git(t, "rev-parse", "HEAD")
	h.at(6)
	h.ok("action", "push", "--branch", "fix-widget")
	h.at(7)
	h.ok("action", "create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash", "--body", "Fixes #"+itoa(issue))
	pr := issue + 1
	h.at(8)
	h.fails(3, "action", "push", "--branch", "HEAD~1:fix-widget") // not a fast-forward: git refuses it
	h.at(9)
	h.ok("note", "--as", "bob", "--role", "reviewer", "Waiting for CI on PR #"+itoa(pr)+".")
	h.at(10)
	h.ok("complete", "--summary", "Returned early on an empty Config; PR #"+itoa(pr)+" is open.")
	h.at(12)
	h.ok("--voyage", v, "judge", "--as", "carol", "--role", "judge", "--score", "8", "--dimension", "correctness", "--evidence", "1,2", "The early return fixes the crash.")
	h.at(13)
	h.ok("voyage", "new", "--as", "bob", "--parent", v, "Write the regression test")

	before := hashTree(t, h.Home)
	md := h.ok("report", v)
	assert.Equal(t, before, hashTree(t, h.Home), "reading never writes")
	masked := strings.NewReplacer(head[:7], "<head>", base[:7], "<base>", srv.URL, "https://github.example").Replace(md)
	// git's own words change with its version.
	masked = regexp.MustCompile(`(push failed: ).*`).ReplaceAllString(masked, "${1}<git's message>")
	masked = regexp.MustCompile(`\b([0-9]+):[0-9a-f]{64}\b`).ReplaceAllString(masked, "${1}:<chain head>") // over commits made now
	golden(t, "report.golden", masked)

	// The numbers are git's own.
	numstat := g.Git(t, "diff", "--numstat", base, head)
	assert.Equal(t, "2\t0\tCHANGELOG.md\n3\t0\twidget.rs", numstat)
	assert.Contains(t, md, "| CHANGELOG.md | 2 | 0 |\n| widget.rs | 3 | 0 |\n")

	var r report.Report
	require.NoError(t, json.Unmarshal([]byte(h.ok("report", v, "--format", "json")), &r))
	assert.Equal(t, id, r.Voyage.ID)
	assert.Equal(t, base, r.Diff.Base)
	assert.Equal(t, head, r.Diff.Head)
	var got []string
	for _, f := range r.Diff.Files {
		got = append(got, f.Path+" +"+strconv.Itoa(f.Added)+" -"+strconv.Itoa(f.Deleted))
	}
	var want []string
	for _, line := range strings.Split(numstat, "\n") {
		f := strings.Split(line, "\t")
		want = append(want, f[2]+" +"+f[0]+" -"+f[1])
	}
	assert.Equal(t, want, got)
	assert.Equal(t, srv.URL+"/octo/widgets/pull/"+itoa(pr), r.Actions[2].Result.URL)
	assert.Equal(t, h.ok("report", v, "--format", "json"), h.ok("--json", "--voyage", v, "report"), "--json is --format json")
}

func TestReportVoyageArgument(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start("first")
	h.ok("complete", "--summary", "done")
	second := h.start("second")

	assert.Contains(t, h.ok("report"), "## Voyage report: second\n", "the only active voyage")
	assert.Contains(t, h.ok("report", first[:8]), "## Voyage report: first\n")
	assert.Contains(t, h.ok("--voyage", first[:8], "report", first), "## Voyage report: first\n", "the same voyage twice")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"two voyages", []string{"--voyage", first[:8], "report", second[:8]}, 2, "report: --voyage " + first[:8] + " and VOYAGE " + second[:8] + " name different voyages"},
		{"no such voyage", []string{"report", "b0b"}, 2, "VOYAGE b0b: no such voyage"},
		{"two arguments", []string{"report", first[:8], second[:8]}, 2, "one VOYAGE at most"},
		{"unknown format", []string{"report", "--format", "html"}, 2, `--format "html" is not md or json`},
		{"json against md", []string{"report", "--json", "--format", "md"}, 2, "--json and --format md disagree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.fails(tt.code, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Empty(t, r.Stdout)
		})
	}
}

// TestReportSaysWhyItHasNoFiles: a voyage started outside a repository
// has no base; one that committed nothing has no last commit.
func TestReportSaysWhyItHasNoFiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // h.Dir is no repository
	h.start("outside")
	md := h.ok("report")
	assert.Contains(t, md, "### Files changed\n\nNo file list: no base commit recorded: the voyage did not start in a git repository")

	h2, _, _ := newGitHubHarness(t)
	h2.start("inside, nothing committed")
	assert.Contains(t, h2.ok("report"), "No file list: no commit recorded: the voyage performed no commit or push.\n")
}

// TestReportRunsGitWhereItCan: the voyage's directory moved away, git
// runs in the working directory; git failing there leaves the report
// whole, saying why it lists no files.
func TestReportRunsGitWhereItCan(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	h.start("moved")
	g.WriteFile(t, "a.txt", "a\nb\n")
	g.Git(t, "add", ".")
	h.ok("action", "commit", "--message", "a")

	moved := filepath.Join(t.TempDir(), "moved")
	require.NoError(t, os.Rename(g.Dir, moved))
	h.Dir = moved
	assert.Contains(t, h.ok("report"), "| a.txt | 2 | 0 |\n")

	h.Dir = t.TempDir() // no repository here
	r := h.run("report")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stdout, "No file list: the files could not be compared: diff ")
	assert.Contains(t, r.Stderr, "helm: report: the files could not be compared: diff ")
}
