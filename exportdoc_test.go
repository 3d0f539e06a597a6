package helm_test

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// designExample records DESIGN.md's example voyage with fake actions:
// a bearing over a Rust project, a commit, a push, a pull request, and a
// completion.
func designExample(t *testing.T) *helm.Voyage {
	t.Helper()
	ctx := context.Background()
	opts := helm.Deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
	opts.NoSync = true
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	m, err := marks.NewRustProject(".")
	require.NoError(t, err)
	_, err = v.Record(ctx, helm.Observation{Mark: m, Sighting: &sighting.RustProject{
		Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{{Name: "Cargo.toml"}, {Name: "src", IsDir: true}}}},
		Contents: []sighting.FileContents{{Path: "Cargo.toml", Content: sighting.FileContent{Type: sighting.ContentText, Text: "[package]\nname = \"widget\"\n"}}},
	}}, who)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(t, err)
	for _, a := range []*exportAction{
		{kind: "commit", Message: "Fix null check in widget init", result: logbook.ActionResult{SHA: "abc1234f00d"}},
		{kind: "push", result: logbook.ActionResult{Branch: "fix-widget", SHA: "abc1234f00d"}},
		{kind: "create-pull-request", result: logbook.ActionResult{Number: 45, URL: "https://github.com/octo/widgets/pull/45"}},
	} {
		_, err := v.Perform(ctx, a, who, nil)
		require.NoError(t, err)
	}
	require.NoError(t, v.Complete(ctx, helm.OutcomeCompleted, "Fixed null check in widget init. PR #45 merged.", who))
	return v
}

func TestExportMarkdownOfDesignExample(t *testing.T) {
	v := designExample(t)
	var md bytes.Buffer
	require.NoError(t, v.ExportMarkdown(context.Background(), &md))
	goldenFile(t, filepath.Join("testdata", "export", "design-example.md"), md.String())
	for _, want := range []string{
		"# Voyage: Resolve #42: fix widget crash",
		"RustProject @ .",
		"> Widget module has a null check missing in init().",
		"committed (abc1234)", "pushed to fix-widget (abc1234)", "created PR #45",
		"<https://github.com/octo/widgets/pull/45>",
		"Fixed null check in widget init. PR #45 merged.",
		"john-agent (coder, human)",
	} {
		assert.Contains(t, md.String(), want)
	}
}

func TestExportHTMLOfDesignExample(t *testing.T) {
	v := designExample(t)
	var page bytes.Buffer
	require.NoError(t, v.ExportHTML(context.Background(), &page))
	goldenFile(t, filepath.Join("testdata", "export", "design-example.html"), page.String())
	html := page.String()
	for _, want := range []string{
		"<h1 class=\"text\">Resolve #42: fix widget crash</h1>",
		"<summary>RustProject @ .</summary>",
		"Widget module has a null check missing in init().",
		"committed (abc1234)", "pushed to fix-widget (abc1234)", "created PR #45",
		`<a href="https://github.com/octo/widgets/pull/45" rel="noopener noreferrer">`,
		`<li class="entry bearing" id="entry-1">`, `<li class="entry action performed" id="entry-4">`,
	} {
		assert.Contains(t, html, want)
	}
	assertSelfContained(t, html)
}

// assertSelfContained: the page asks nothing of the network and runs
// nothing.
func assertSelfContained(t *testing.T, html string) {
	t.Helper()
	assert.NotRegexp(t, `(?i)<(script|link|img|iframe|object|embed|frame|audio|video|source|base|form)\b`, html)
	assert.NotRegexp(t, `(?i)<[^>]*\s(src|srcset|action|formaction|background|poster|on[a-z]+)=`, html)
	style := html[strings.Index(html, "<style>"):strings.Index(html, "</style>")]
	assert.NotContains(t, style, "@import")
	assert.NotContains(t, style, "url(")
	assert.Contains(t, html, `content="default-src 'none'; style-src 'unsafe-inline'"`)
	// Every link is to the web, for a reader to follow.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		assert.Regexp(t, `^https?://`, m[1])
	}
}

// TestExportsKeepHostileTextText: a reading, a note and an action's
// parameters holding markup, markdown structure and terminal escapes stay
// text in both documents.
func TestExportsKeepHostileTextText(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, quickOptions())
	_, err := v.Observe(ctx, &note{Topic: `<img src=x onerror=alert(1)>`, Text: "x"}, who, nil)
	require.NoError(t, err)
	const xss = "<script>alert(1)</script>"
	_, err = v.TakeBearing(ctx, xss+"\n# not a heading\n\x1b[2Kerased", who, nil)
	require.NoError(t, err)
	bob := helm.Who{Identity: "bob", Role: "reviewer", Method: "human"}
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: `"><script>alert(2)</script>`, Reading: "| a | table |"}, bob)
	require.NoError(t, err)
	_, err = v.Note(ctx, "[click](javascript:alert(3)) & <b>bold</b>", who)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "create-pull-request", Message: "</td><script>alert(4)</script>",
		result: logbook.ActionResult{Number: 7, URL: "javascript:alert(5)"}}, who, nil)

	require.NoError(t, err)

	var page bytes.Buffer
	require.NoError(t, v.ExportHTML(ctx, &page))
	html := page.String()
	assert.Contains(t, html, "&lt;script&gt;alert(1)&lt;/script&gt;", "the reading is text")
	assert.Contains(t, html, "&lt;img src=x onerror=alert(1)&gt;", "the mark's label is text")
	assert.Contains(t, html, "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "the feedback is text")
	assert.Contains(t, html, "&lt;/td&gt;&lt;script&gt;alert(4)&lt;/script&gt;", "the parameters are text")
	assert.Contains(t, html, `\x1b[2Kerased`, "the terminal escape shows")
	assert.NotContains(t, html, `href="javascript`, "no link to a script")
	assert.Contains(t, html, "[click](javascript:alert(3)) &amp; &lt;b&gt;bold&lt;/b&gt;")
	assertSelfContained(t, html)

	var md bytes.Buffer
	require.NoError(t, v.ExportMarkdown(ctx, &md))
	text := md.String()
	assert.Contains(t, text, `> \<script\>alert(1)\</script\>`)
	assert.Contains(t, text, `> \# not a heading`)
	assert.Contains(t, text, `> \\x1b\[2Kerased`, "the escape shows")
	assert.Contains(t, text, `\[click\](javascript:alert(3)) \& \<b\>bold\</b\>`)
	assert.NotContains(t, text, "<javascript:")
	assert.NotRegexp(t, `(?m)^#+ not a heading`, text)
}

// TestExportsOfARichVoyage: every kind of entry, a failed action, a
// challenged reading, a note, a judgement, jettisoned and reduced
// artifacts and a slate left open, in both documents.
func TestExportsOfARichVoyage(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v := richVoyage(t, h)
	var md bytes.Buffer
	require.NoError(t, v.ExportMarkdown(ctx, &md))
	goldenFile(t, filepath.Join("testdata", "export", "rich.md"), md.String())
	var page bytes.Buffer
	require.NoError(t, v.ExportHTML(ctx, &page))
	html := page.String()
	assertSelfContained(t, html)
	for _, want := range []string{
		`<li class="entry action failed" id="entry-3">`,
		`<div class="error text">remote rejected: protected branch</div>`,
		`<li class="entry note" id="entry-5">`, `<li class="entry judgement" id="entry-6">`,
		"<strong>8/10</strong> (evidence: entries 1, 2)",
		"<del class=\"text\">Widget module has a null check missing in init().</del>",
		"challenged by bob (reviewer, human)",
		"<h2>Slate</h2>", "jettisoned", "reduced",
	} {
		assert.Contains(t, html, want)
	}
}
