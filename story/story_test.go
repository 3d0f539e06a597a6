package story_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/story"
)

type (
	note         = voyagetest.Note
	noteSighting = voyagetest.NoteSighting
)

var who = voyagetest.Who

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenFile compares got with path, rewriting it under -update.
func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), got, "%s", path)
}

// exportAction is an action that touches nothing and reports result.
type exportAction struct {
	kind    string
	Message string `json:"message,omitempty"`
	result  logbook.ActionResult
	fail    error
}

func (a *exportAction) Kind() string { return a.kind }
func (a *exportAction) Perform(ctx context.Context) (logbook.ActionResult, error) {
	return a.result, a.fail
}

// designExample records DESIGN.md's example voyage with fake actions:
// a bearing over a Rust project, a commit, a push, a pull request, and a
// completion.
func designExample(t *testing.T) *helm.Voyage {
	t.Helper()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Options(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
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
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init. PR #45 merged.", who))
	return v
}

func TestExportMarkdownOfDesignExample(t *testing.T) {
	v := designExample(t)
	var md bytes.Buffer
	require.NoError(t, story.WriteMarkdown(context.Background(), &md, v))
	goldenFile(t, filepath.Join("testdata", "design-example.md"), md.String())
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
	require.NoError(t, story.WriteHTML(context.Background(), &page, v))
	goldenFile(t, filepath.Join("testdata", "design-example.html"), page.String())
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
	_, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Observe(ctx, &note{Topic: `<img src=x onerror=alert(1)>`, Text: "x"}, who, nil)
	require.NoError(t, err)
	const xss = "<script>alert(1)</script>"
	_, err = v.TakeBearing(ctx, xss+"\n# not a heading\n\x1b[2Kerased", who, nil)
	require.NoError(t, err)
	bob := logbook.Who{Identity: "bob", Role: "reviewer", Method: "human"}
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: `"><script>alert(2)</script>`, Reading: "| a | table |"}, bob)
	require.NoError(t, err)
	_, err = v.Note(ctx, "[click](javascript:alert(3)) & <b>bold</b>", who)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "create-pull-request", Message: "</td><script>alert(4)</script>",
		result: logbook.ActionResult{Number: 7, URL: "javascript:alert(5)"}}, who, nil)
	require.NoError(t, err)

	var page bytes.Buffer
	require.NoError(t, story.WriteHTML(ctx, &page, v))
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
	require.NoError(t, story.WriteMarkdown(ctx, &md, v))
	text := md.String()
	assert.Contains(t, text, `> \<script\>alert(1)\</script\>`)
	assert.Contains(t, text, `> \# not a heading`)
	assert.Contains(t, text, `> \\x1b\[2Kerased`, "the escape shows")
	assert.Contains(t, text, `\[click\](javascript:alert(3)) \& \<b\>bold\</b\>`)
	assert.NotContains(t, text, "<javascript:")
	assert.NotRegexp(t, `(?m)^#+ not a heading`, text)
}

// TestHTMLShowsTabsAndLinesOfAProgramsMessage: git's own output (tabbed
// advice on lines of its own) reads in the page as git wrote it, not as
// literal \t and \n, and still drives nothing.
func TestHTMLShowsTabsAndLinesOfAProgramsMessage(t *testing.T) {
	ctx := context.Background()
	_, v := voyagetest.Voyage(t, voyagetest.Fixed())
	_, err := v.Note(ctx, "! [rejected] main -> main (fetch first)\nhint:\tgit pull <first>\x1b[2K", who)
	require.NoError(t, err)

	var page bytes.Buffer
	require.NoError(t, story.WriteHTML(ctx, &page, v))
	html := page.String()
	assert.Contains(t, html, "(fetch first)\nhint:\tgit pull &lt;first&gt;\\x1b[2K", "tabs and lines as written; the rest escaped")
	assert.NotContains(t, html, `hint:\tgit`)
	assert.NotContains(t, html, "\x1b")
}

// TestExportsOfARichVoyage: every kind of entry, a failed action, a
// challenged reading, a note, a judgement, jettisoned and reduced
// artifacts and a slate left open, in both documents.
func TestExportsOfARichVoyage(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	v := richVoyage(t, h)
	var md bytes.Buffer
	require.NoError(t, story.WriteMarkdown(ctx, &md, v))
	goldenFile(t, filepath.Join("testdata", "rich.md"), md.String())
	var page bytes.Buffer
	require.NoError(t, story.WriteHTML(ctx, &page, v))
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

// richVoyage records a voyage with every kind of event an archive
// carries: small and large artifacts (one in the pack), a challenge,
// actions performed and failed, a note, a reduced and a jettisoned
// artifact, a slate left open, a completion and a judgement.
func richVoyage(t *testing.T, h *helm.Home) *helm.Voyage {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, &helm.StartOptions{Repo: "octo/widgets", Base: "1a2b3c4d5e6f", Branch: "main"})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	rng := rand.New(rand.NewPCG(4, 2))
	big := make([]byte, 96<<10) // compresses to more than the inline limit: goes to the pack
	for i := range big {
		big[i] = 'a' + byte(rng.IntN(26))
	}
	large, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "big.txt"}, Sighting: &noteSighting{Text: string(big)}}, who)
	require.NoError(t, err)
	require.Zero(t, large.Artifact.Blob, "the large sighting is in the pack")
	_, err = v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() { cfg.apply() }"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(t, err)
	bob := logbook.Who{Identity: "bob", Role: "reviewer", Method: "human"}
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "cfg is a reference: it cannot be null", Reading: "init() panics when apply() fails."}, bob)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "commit", result: logbook.ActionResult{SHA: "abc1234def5678"}}, who, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "push", fail: errors.New("remote rejected: protected branch")}, who, nil)
	require.Error(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "create-pull-request", result: logbook.ActionResult{Number: 45, URL: "https://github.com/octo/widgets/pull/45"}}, who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "Waiting for CI on PR #45.", bob)
	require.NoError(t, err)
	secret, err := v.Observe(ctx, &note{Topic: "customer.csv", Text: "name,card\nann,4111"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, secret.Record.Artifact, "holds a customer's data", who))
	_, err = v.Reduce(ctx, large.Record.Artifact, helm.Reduction{Summary: &noteSighting{Text: "96 KiB of letters"}, Method: "human"}, who)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "left.txt", Text: "left on the slate"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init. PR #45 merged.", who))
	_, err = v.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "The fix is right."}, logbook.Who{Identity: "carol", Role: "judge", Method: "human"})
	require.NoError(t, err)
	return v
}

// corpusHomes returns the homes of the corpus (voyages written by every
// landed version), each copied where a test may write.
func corpusHomes(t *testing.T) map[string]string {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join("..", "testdata", "voyages", "*", "views.golden.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(entries), 6, "the corpus entries")
	out := map[string]string{}
	for _, e := range entries {
		dir := filepath.Dir(e)
		home := filepath.Join(t.TempDir(), "home")
		require.NoError(t, os.CopyFS(home, os.DirFS(dir)))
		out[dir] = home
	}
	return out
}

// TestTextOfTheCorpusIsAsRecorded: the story of every corpus voyage reads
// as it did when the entry was written (its golden "story").
func TestTextOfTheCorpusIsAsRecorded(t *testing.T) {
	ctx := context.Background()
	for dir, home := range corpusHomes(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "views.golden.json"))
			require.NoError(t, err)
			var golden map[string]struct {
				Story string `json:"story"`
			}
			require.NoError(t, json.Unmarshal(data, &golden))
			require.NotEmpty(t, golden)
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			for id, want := range golden {
				v, err := h.Voyage(ctx, id)
				require.NoError(t, err)
				var got strings.Builder
				require.NoError(t, story.WriteText(ctx, &got, v))
				require.NoError(t, v.Close())
				assert.Equal(t, want.Story, got.String(), "voyage %s", id)
			}
		})
	}
}

// TestDocumentsReadTheSameAfterImport: a corpus voyage carried to another
// home in an archive tells the same story there, in every form.
// anyHead matches the line of a document that gives the voyage's head.
var anyHead = regexp.MustCompile(`(?m)^(- \*\*Head:\*\*|<dt>Head</dt>).*$`)

func TestDocumentsReadTheSameAfterImport(t *testing.T) {
	ctx := context.Background()
	writers := map[string]func(context.Context, io.Writer, *helm.Voyage) error{
		"text": story.WriteText, "markdown": story.WriteMarkdown, "html": story.WriteHTML,
	}
	for dir, home := range corpusHomes(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := helm.Open(home, &helm.Options{NoSync: true})
			require.NoError(t, err)
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			require.NotEmpty(t, list)
			sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
			other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			for _, info := range list {
				v, err := h.Voyage(ctx, info.ID)
				require.NoError(t, err)
				var archive bytes.Buffer
				require.NoError(t, h.Export(ctx, info.ID, &archive))
				imported, err := other.Import(ctx, &archive, nil)
				require.NoError(t, err, "voyage %s", info.ID)
				for name, write := range writers {
					var a, b bytes.Buffer
					require.NoError(t, write(ctx, &a, v))
					require.NoError(t, write(ctx, &b, imported))
					assert.NotEmpty(t, a.String())
					// The head is the import's to keep (the chain over
					// the records it writes: a record an older helm
					// reclaimed keeps no digest, and has one once
					// imported); the story is this test's.
					assert.Equal(t, anyHead.ReplaceAllString(a.String(), "<head>"), anyHead.ReplaceAllString(b.String(), "<head>"), "voyage %s: the %s story reads the same", info.ID, name)
				}
				require.NoError(t, imported.Close())
				require.NoError(t, v.Close())
			}
		})
	}
}

// TestStoriesReadWhatOthersAppended: a handle opened before another
// process's writes tells them too: each form reads the log's new events
// first.
func TestStoriesReadWhatOthersAppended(t *testing.T) {
	ctx := context.Background()
	h, v := voyagetest.Voyage(t, voyagetest.Fixed())
	other, err := helm.Open(h.Dir(), nil)
	require.NoError(t, err)
	w, err := other.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Note(ctx, "written by another process", who)
	require.NoError(t, err)
	for name, write := range map[string]func(context.Context, io.Writer, *helm.Voyage) error{
		"text": story.WriteText, "markdown": story.WriteMarkdown, "html": story.WriteHTML,
	} {
		var b bytes.Buffer
		require.NoError(t, write(ctx, &b, v))
		assert.Contains(t, b.String(), "written by another process", name)
	}
}

// TestWriteTextTellsTheLifecycleOnceResumed: the text names the outcome
// and, once a voyage was resumed, every change of its status.
func TestWriteTextTellsTheLifecycleOnceResumed(t *testing.T) {
	ctx := context.Background()
	_, v := voyagetest.Voyage(t, voyagetest.Fixed())
	require.NoError(t, v.Complete(ctx, logbook.OutcomeBlocked, "waiting for CI", who))
	var b strings.Builder
	require.NoError(t, story.WriteText(ctx, &b, v))
	assert.Contains(t, b.String(), "Status: blocked (2026-02-26T17:02:00Z)\nSummary: waiting for CI\n")
	assert.NotContains(t, b.String(), "Lifecycle:")
	require.NoError(t, v.Resume(ctx, "CI is green", voyagetest.Bob))
	b.Reset()
	require.NoError(t, story.WriteText(ctx, &b, v))
	assert.Contains(t, b.String(), "Status: active\n")
	assert.Contains(t, b.String(), "Lifecycle:\n  2026-02-26T17:01:00Z started by john-agent\n  2026-02-26T17:02:00Z blocked by john-agent: waiting for CI\n  2026-02-26T17:03:00Z resumed by bob: CI is green\n")
}

// The markdown and html documents give the voyage's head (Voyage.Head)
// beside its id: whoever holds the document holds a witness.
func TestDocumentsGiveTheHead(t *testing.T) {
	ctx := context.Background()
	v := designExample(t)
	head, err := v.Head(ctx)
	require.NoError(t, err)
	var md, page bytes.Buffer
	require.NoError(t, story.WriteMarkdown(ctx, &md, v))
	require.NoError(t, story.WriteHTML(ctx, &page, v))
	assert.Contains(t, md.String(), "- **Voyage:** `"+v.ID()+"` (resolve-issue)\n- **Head:** `"+head.String()+"`\n")
	assert.Contains(t, page.String(), "<dt>Head</dt><dd><code>"+head.String()+"</code></dd>\n")
}

// A voyage an older helm compacted kept no BLAKE3 digest of the records
// it reclaimed, only their length and CRC32C: those enter the chain by a
// weak link (segment format 3's stubs), so it has a head too, and its
// documents give it.
func TestDocumentsOfAVoyageCompactedBeforeTheChainGiveItsHead(t *testing.T) {
	ctx := context.Background()
	for dir, home := range corpusHomes(t) {
		if filepath.Base(dir) != "v0.5-2026-11-27" {
			continue
		}
		h, err := helm.Open(home, &helm.Options{NoSync: true})
		require.NoError(t, err)
		v, err := h.Voyage(ctx, "c0a9b5e1-0000-4000-8000-000000000004")
		require.NoError(t, err)
		defer v.Close()
		head, err := v.Head(ctx)
		require.NoError(t, err, "the corpus voyage reclaimed a record before digests were kept")
		var md, page bytes.Buffer
		require.NoError(t, story.WriteMarkdown(ctx, &md, v))
		require.NoError(t, story.WriteHTML(ctx, &page, v))
		assert.Contains(t, md.String(), "- **Head:** `"+head.String()+"`")
		assert.Contains(t, md.String(), "## Logbook")
		assert.Contains(t, page.String(), "<dt>Head</dt><dd><code>"+head.String()+"</code></dd>")
		return
	}
	t.Fatal("no corpus entry v0.5-2026-11-27")
}
