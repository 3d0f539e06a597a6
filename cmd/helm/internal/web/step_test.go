package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/webtest"
	"github.com/helmlog/helm/logbook"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), got)
}

// seededAgent serves the seeded agent session (webtest.SeedAgent).
func seededAgent(t *testing.T) (*webtest.AgentSeeded, *httptest.Server) {
	t.Helper()
	s, err := webtest.SeedAgent(context.Background(), t.TempDir())
	require.NoError(t, err)
	return s, serve(t, s.Dir, nil)
}

var (
	voyageHead = regexp.MustCompile(`(?s)<header class="voyage-head".*?</header>`)
	timeline   = regexp.MustCompile(`(?s)<ol class="timeline" id="timeline">.*?</ol>`)
)

// pageParts is the head and the timeline of a voyage page: what a
// golden holds (the rest is the layout, the same for every voyage).
func pageParts(t *testing.T, body string) string {
	t.Helper()
	head, tl := voyageHead.FindString(body), timeline.FindString(body)
	require.NotEmpty(t, head, body)
	require.NotEmpty(t, tl, body)
	return head + "\n" + tl + "\n"
}

// TestAgentStepsReadAsTheLogTellsThem: a hooked session's voyage page
// tells each step as helm log does, with its text and output behind a
// disclosure, and the subagent's sub-voyage linked; goldens hold the
// session's and the subagent's pages.
func TestAgentStepsReadAsTheLogTellsThem(t *testing.T) {
	s, ts := seededAgent(t)
	for _, tt := range []struct{ name, id, golden string }{
		{"session", s.Session, "agent-session.golden"},
		{"subagent", s.Sub, "agent-subagent.golden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, ts, "/voyages/"+tt.id)
			require.Equal(t, http.StatusOK, status, body)
			// The huge output's 64 KiB are checked below, not kept in
			// the golden.
			got := strings.ReplaceAll(pageParts(t, body), strings.Repeat("0123456789abcdef", 4<<10), "<64 KiB>")
			golden(t, tt.golden, got)
		})
	}
}

// TestEachKindOfStepShows checks, step by step, what the session's page
// shows a person.
func TestEachKindOfStepShows(t *testing.T) {
	s, ts := seededAgent(t)
	status, _, body := get(t, ts, "/voyages/"+s.Session)
	require.Equal(t, http.StatusOK, status, body)
	item := func(n int) string {
		m := regexp.MustCompile(`(?s)<li class="item[^"]*" id="entry-` + strconv.Itoa(n) + `">.*?</li>`).FindString(body)
		require.NotEmpty(t, m, "entry %d", n)
		return m
	}
	tests := []struct {
		name  string
		entry int
		want  []string
		not   []string
	}{
		{"a prompt, whole behind the disclosure", 2, []string{"Step 2: prompt: The widget crashes on a nil config. …",
			`<pre class="step-text">The widget crashes on a nil config.` + "\nFind out why, fix it, and run the tests.</pre>"}, nil},
		{"an allowed Bash call with its rule, result and output", 3, []string{"Step 3: Bash: go test ./widget",
			`<p class="step-decision">allowed by &#34;go tools&#34; (policy.toml:9)</p>`, `<p class="step-result">→ ok (1.234s)</p>`,
			`<pre class="out">ok  ` + "\texample.com/widgets/widget\t0.012s\n</pre>", `&#34;command&#34;: &#34;go test ./widget&#34;`}, []string{"mark-"}},
		{"an Edit with its diff shown as a diff", 4, []string{"Step 4: Edit widget/init.go (&#43;4 −1)", `<pre class="udiff">`,
			`<span class="d-file">--- a/widget/init.go</span>`, `<span class="d-hunk">@@ -3,3 &#43;3,6 @@</span>`,
			`<span class="d-del">-	return &amp;Widget{name: c.Name}</span>`, `<span class="d-add">&#43;	if c == nil {</span>`,
			`<span class="d-ctx"> func Init(c *Config) *Widget {</span>`}, nil},
		{"a denied rm -r -f stands out as a refused action does", 5, []string{`class="item kind-step mark-refused"`,
			`<span class="badge mark-refused">refused</span>`, `<div class="icon" aria-hidden="true">⊘</div>`, "Step 5: Bash: rm -r -f /tmp/victim",
			`<p class="step-decision">denied by &#34;no recursive deletes&#34; (policy.toml:3): recursive deletes need a person</p>`},
			[]string{"step-result"}},
		{"a long output read from its artifact", 6, []string{"output in artifact " + s.LongArtifact[:8],
			`href="/voyages/` + s.Session + `/artifacts/` + s.LongArtifact + `"`, "--- PASS: TestWidget119 (0.00s)", "0.412s"}, []string{"Its first 64 KiB"}},
		{"an output past the page's bound, cut", 7, []string{"Its first 64 KiB", `href="/voyages/` + s.Session + `/artifacts/` + s.HugeArtifact + `"`},
			[]string{"the end of the huge output"}},
		{"a failed call", 8, []string{`class="item kind-step mark-failed"`, `<p class="step-result">→ failed (800ms): widget/init.go:7:2: unreachable code …</p>`,
			`<pre class="err">widget/init.go:7:2: unreachable code`}, nil},
		{"the subagent, its sub-voyage linked", 9, []string{"subagent started: general-purpose (voyage " + s.Sub[:8] + ")",
			`<a href="/voyages/` + s.Sub + `">sub-voyage <code>` + s.Sub[:8] + `</code></a>`}, nil},
		{"a permission held for a person", 11, []string{`mark-held`, "permission asked for WebFetch: https://example.com/widgets",
			"held for a person by &#34;fetches need a person&#34; (policy.toml:12): a person approves web fetches"}, nil},
		{"the usage of a message", 12, []string{"Step 12: message: Init now checks its config for nil; the tests pass.",
			`<p class="step-usage">usage: claude-sonnet-4-5, 12000 in, 850 out, 43000 cache tokens, $0.0731, model 6.4s</p>`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := item(tt.entry)
			for _, w := range tt.want {
				assert.Contains(t, it, w)
			}
			for _, w := range tt.not {
				assert.NotContains(t, it, w)
			}
		})
	}
	huge := item(7)
	assert.Contains(t, huge, strings.Repeat("0123456789abcdef", 4<<10), "the first 64 KiB, from the artifact")
	assert.NotContains(t, huge, strings.Repeat("0123456789abcdef", 4<<10+1), "no more")

	// The figures: the voyage's agent totals.
	head := voyageHead.FindString(body)
	assert.Contains(t, head, "12 agent steps")
	assert.Contains(t, head, `<p class="agents">Agents: 1 prompt, 6 tool calls (1 denied, 1 failed) · tokens: 12000 in, 850 out, 40000 cache read, 3000 cache written · $0.0731 · model time 6.4s</p>`)

	// The artifact link serves the whole output, as text.
	status, h, raw := get(t, ts, "/voyages/"+s.Session+"/artifacts/"+s.HugeArtifact)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"))
	assert.Equal(t, s.Huge, raw)
}

// TestAgentTextIsInert: a step's text is the agent's; markup in a prompt,
// a command, a diff, an output, a decision, a tool's input, a model's
// name or a sub-voyage's id renders as text, on the page, on the
// transcript and in the live stream's parts.
func TestAgentTextIsInert(t *testing.T) {
	s, ts := seededAgent(t)
	for _, path := range []string{"/voyages/" + s.Hostile, "/transcript", "/transcript?voyage=" + s.Hostile} {
		status, _, body := get(t, ts, path)
		require.Equal(t, http.StatusOK, status, path)
		for _, bad := range []string{webtest.XSS, "<img src=x", "<iframe", "<b onmouseover", `href="javascript:`, "javascript:alert(5)\""} {
			assert.NotContains(t, body, bad, path)
		}
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
		assert.NotContains(t, body, " style=", path)
	}
	_, _, body := get(t, ts, "/voyages/"+s.Hostile)
	for _, want := range []string{"&lt;img src=x onerror=alert(2)&gt;", "&lt;iframe src=javascript:alert(3)&gt;&lt;/iframe&gt;",
		"&lt;b onmouseover=alert(4)&gt;no&lt;/b&gt;", `<span class="d-add">&#43;&lt;script&gt;alert(1)&lt;/script&gt;</span>`,
		"subagent started: &lt;script&gt;alert(1)&lt;/script&gt; (voyage javascri)", "usage: &lt;script&gt;alert(1)&lt;/script&gt;, 1 in, 0 out tokens"} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, `class="step-sub"`, "a sub-voyage that is no voyage id is not linked")
}

// TestTheTranscriptShowsTheAgentTotals: the session's figures on the
// transcript page sum its steps and its subagent's.
func TestTheTranscriptShowsTheAgentTotals(t *testing.T) {
	s, ts := seededAgent(t)
	status, _, body := get(t, ts, "/transcript?voyage="+s.Session)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `<p class="agents">Agents: 2 prompts, 7 tool calls (1 denied, 1 failed) · tokens: 12800 in, 890 out, 40000 cache read, 3000 cache written · $0.0743 · model time 7.3s</p>`)
	assert.Contains(t, body, `<tr class="kind-step-recorded mark-refused">`)
	assert.Contains(t, body, `<tr class="kind-step-finished mark-failed">`)
}

// TestEventsCarryAStepAndItsResult: a call another handle records, and
// then its result, reach a live page as the call's entry (its result
// attached in the second), and the stream's JSON carries the step.
func TestEventsCarryAStepAndItsResult(t *testing.T) {
	s, ts := seededAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/voyages/"+s.Session+"/events", nil)
	require.NoError(t, err)
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	v, err := h.Voyage(ctx, s.Session)
	require.NoError(t, err)
	defer v.Close()
	call := logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: "4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11", ID: "toolu_99", Tool: "Bash",
		Input: json.RawMessage(`{"command":"git status"}`), Text: "git status"}
	_, err = v.Step(ctx, call, webtest.Claude)
	require.NoError(t, err)
	call.Input, call.Text, call.Result = nil, "", &logbook.StepResult{Output: "nothing to commit, " + webtest.XSS, Duration: 20 * time.Millisecond}
	_, err = v.Step(ctx, call, webtest.Claude)
	require.NoError(t, err)

	events := &sse{sc: bufio.NewScanner(resp.Body)}
	events.sc.Buffer(nil, 1<<20)
	type got struct {
		Type  string
		Text  string
		Parts []struct{ ID, Into, HTML string }
		Step  *logbook.Step
	}
	var ups []got
	for len(ups) < 2 {
		name, data, err := events.next()
		require.NoError(t, err)
		require.Equal(t, "update", name, data)
		var u got
		require.NoError(t, json.Unmarshal([]byte(data), &u))
		ups = append(ups, u)
	}
	entry := func(u got) string {
		for _, p := range u.Parts {
			if p.ID == "entry-13" {
				assert.Equal(t, "timeline", p.Into)
				return p.HTML
			}
		}
		t.Fatalf("no part entry-13 in %s", u.Type)
		return ""
	}
	// Each update renders the entry as it is when it is sent: the call's
	// result may be attached already.
	assert.Equal(t, "step-recorded", ups[0].Type)
	require.NotNil(t, ups[0].Step)
	assert.Equal(t, "git status", ups[0].Step.Text)
	assert.Contains(t, entry(ups[0]), "Step 13: Bash: git status")

	assert.Equal(t, "step-finished", ups[1].Type)
	require.NotNil(t, ups[1].Step)
	require.NotNil(t, ups[1].Step.Result, "the call with its result attached")
	assert.Equal(t, "git status", ups[1].Step.Text)
	html := entry(ups[1])
	assert.Contains(t, html, "→ ok (20ms)")
	assert.Contains(t, html, "nothing to commit, &lt;script&gt;")
	assert.NotContains(t, html, webtest.XSS)
	for _, p := range ups[1].Parts {
		if p.ID == "voyage-head" {
			assert.Contains(t, p.HTML, "7 tool calls", "the figures follow")
		}
	}
}
