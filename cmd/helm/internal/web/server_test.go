package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/web"
	"github.com/helmlog/helm/internal/webtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// seeded serves the seeded home (webtest.Seed) on a test server.
func seeded(t *testing.T) (*webtest.Seeded, *httptest.Server) {
	t.Helper()
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	return s, serve(t, s.Dir, nil)
}

func serve(t *testing.T, dir string, opts *web.Options) *httptest.Server {
	t.Helper()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	srv, err := web.New(h, opts)
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// get fetches path and returns the status, headers and body.
func get(t *testing.T, ts *httptest.Server, path string) (int, http.Header, string) {
	t.Helper()
	return do(t, ts, http.MethodGet, path)
}

func do(t *testing.T, ts *httptest.Server, method, path string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	require.NoError(t, err)
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(body)
}

// artifactOf returns the artifact of the main voyage's sealed observation
// whose label starts with label.
func artifactOf(t *testing.T, s *webtest.Seeded, label string) string {
	t.Helper()
	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	v, err := h.Voyage(context.Background(), s.Main)
	require.NoError(t, err)
	defer v.Close()
	var first logbook.Entry
	for e, err := range v.Entries(context.Background(), nil) {
		require.NoError(t, err)
		first = e
		break
	}
	for _, o := range first.Bearing.Observations {
		if strings.HasPrefix(o.Label, label) {
			return o.Artifact
		}
	}
	t.Fatalf("no observation labelled %q", label)
	return ""
}

func TestEveryPageRendersForASeededHome(t *testing.T) {
	s, ts := seeded(t)
	files := artifactOf(t, s, "FileContents")
	tests := []struct {
		name, path string
		want       []string
	}{
		{"voyages", "/", []string{"Resolve #42: widget crashes on a nil config", "Fix the nil dereference in widget.Init",
			"Regression test for #42", "resolve-issue", "open-waters", `class="badge status-active"`, "sub-voyage of", "4 of 4 voyages"}},
		{"voyages filtered by status", "/?status=completed", []string{"Fix the nil dereference", "2 of 4 voyages"}},
		{"voyages filtered by identity", "/?identity=merge-bot", []string{"Resolve #42", "1 of 4 voyages"}},
		{"voyages filtered by kind", "/?kind=resolve-issue", []string{"Resolve #42", "1 of 4 voyages"}},
		{"main voyage", "/voyages/" + s.Main, []string{
			`id="entry-1"`, `id="entry-2"`, `id="entry-3"`, `id="entry-4"`, `id="life-0"`,
			"Bearing 1", "Started",
			// the challenge as a diff
			"<del>", "<ins>", "the widget is fine; the config is what is nil",
			// the sealed sightings: a file highlighted, a tree, a command
			`class="hl-chroma"`, "widget/init.go", `<span class="name">widget/</span>`, `<span class="name">init_test.go</span>`,
			"exit status 1", "1.834s", "panic: runtime error",
			// the failed and the refused action, the note
			"mark-failed", "push failed: remote rejected: non-fast-forward (fetch first)", "hint: Updates were rejected",
			"mark-refused", `denied by rule &#34;agents may not merge&#34;`, "merge-bot (release)",
			"Waiting for a review of fix-widget.",
			// the slate and the sub-voyages
			`id="slate"`, "the crash happens on ARM builds only", "README.md",
			"Fix the nil dereference in widget.Init", "/static/live.js", `data-seq="`,
		}},
		{"sub-voyage", "/voyages/" + s.Bob[:8], []string{"created PR #45", `href="https://github.com/octo/widgets/pull/45"`,
			"committed (a92aad3)", "Judgement", "correctness", "sub-voyage of", "Minimal fix, tested."}},
		{"transcript", "/transcript", []string{"<svg", `class="bar critical"`, "parallelism", `class="lane-head">ann`, `class="lane-head">bob`,
			`class="lane-head">carol`, "Bearing 1: Init dereferences a nil widget.", "challenged bearing 1", "sealed: FileContents"}},
		{"transcript of a voyage", "/transcript?voyage=" + s.Main, []string{"Transcript: Resolve #42", `class="lane-head">merge-bot`}},
		{"sighting", "/voyages/" + s.Main + "/sightings/" + files, []string{"init.go", `class="hl-chroma"`, "go.mod", "raw JSON"}},
		{"script", "/static/live.js", []string{"EventSource"}},
		{"style", "/static/helm.css", []string{"timeline"}},
		{"highlighting style", "/static/chroma.css", []string{".hl-chroma"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, ts, tt.path)
			require.Equal(t, http.StatusOK, status, body)
			for _, w := range tt.want {
				assert.Contains(t, body, w)
			}
			assert.NotContains(t, body, " style=", "the CSP refuses inline styles")
			assert.NotContains(t, body, "<script>", "the CSP refuses inline script")
		})
	}
	status, h, body := get(t, ts, "/voyages/"+s.Main+"/artifacts/"+files)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"))
	assert.Contains(t, body, `"kind":"file-contents"`)
}

// TestStoredTextIsEscaped: a reading, an intent, a note, a summary and a
// file holding markup show it as text.
func TestStoredTextIsEscaped(t *testing.T) {
	s, ts := seeded(t)
	for _, path := range []string{"/", "/voyages/" + s.Hostile, "/voyages/" + s.Bob, "/voyages/" + s.Main, "/transcript"} {
		status, _, body := get(t, ts, path)
		require.Equal(t, http.StatusOK, status)
		assert.NotContains(t, body, webtest.XSS, path)
		assert.NotContains(t, body, "<img src=x", path)
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
	}
	_, _, body := get(t, ts, "/voyages/"+s.Hostile)
	assert.Contains(t, body, "&lt;img src=x onerror=alert(2)&gt;")
}

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	s, ts := seeded(t)
	for _, path := range []string{"/", "/voyages/" + s.Main, "/transcript", "/static/live.js", "/nowhere", "/voyages/zzz"} {
		_, h, _ := get(t, ts, path)
		assert.Equal(t, web.CSP, h.Get("Content-Security-Policy"), path)
		assert.Equal(t, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'", h.Get("Content-Security-Policy"))
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
	}
}

func TestOnlyGetAndHeadAreServed(t *testing.T) {
	s, ts := seeded(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		for _, path := range []string{"/", "/voyages/" + s.Main, "/voyages/" + s.Main + "/events"} {
			status, h, _ := do(t, ts, m, path)
			assert.Equal(t, http.StatusMethodNotAllowed, status, "%s %s", m, path)
			assert.Equal(t, "GET, HEAD", h.Get("Allow"))
		}
	}
	for _, path := range []string{"/voyages/" + s.Main, "/voyages/" + s.Main + "/events"} {
		status, _, body := do(t, ts, http.MethodHead, path)
		assert.Equal(t, http.StatusOK, status, path)
		assert.Empty(t, body, path)
	}
}

func TestIdsAndHashesAreChecked(t *testing.T) {
	s, ts := seeded(t)
	hash := artifactOf(t, s, "FileContents")
	tests := []struct {
		path   string
		status int
	}{
		{"/voyages/..%2F..%2Fetc%2Fpasswd", http.StatusBadRequest},
		{"/voyages/..%5Cwindows", http.StatusBadRequest},
		{"/voyages/5e7e0000-..", http.StatusBadRequest},
		{"/voyages/not-an-id", http.StatusBadRequest},
		{"/voyages/00000000-0000-4000-8000-000000000000", http.StatusNotFound},
		{"/voyages/5e7e", http.StatusBadRequest}, // a prefix of several voyages
		{"/voyages/" + s.Main + "/sightings/..%2F..%2Fsummary.json", http.StatusBadRequest},
		{"/voyages/" + s.Main + "/sightings/" + strings.ToUpper(hash), http.StatusBadRequest},
		{"/voyages/" + s.Main + "/sightings/" + hash[:8], http.StatusBadRequest},
		{"/voyages/" + s.Main + "/artifacts/" + strings.Repeat("0", 64), http.StatusNotFound},
		{"/voyages/" + s.Bob + "/artifacts/" + hash, http.StatusNotFound}, // another voyage's
		{"/transcript?voyage=..%2F..", http.StatusBadRequest},
		{"/static/../../go.mod", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, _, body := get(t, ts, tt.path)
			assert.Equal(t, tt.status, status, body)
			assert.NotContains(t, body, "module github.com/helmlog/helm")
		})
	}
	status, _, _ := get(t, ts, "/voyages/"+s.Main[:8])
	assert.Equal(t, http.StatusOK, status, "an unambiguous prefix")
}

func TestADamagedVoyageShowsItsErrorAndTheOthersAreServed(t *testing.T) {
	s, ts := seeded(t)
	require.NoError(t, webtest.Damage(s.Dir, s.Carol))
	status, _, body := get(t, ts, "/voyages/"+s.Carol)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, body, "Damaged voyage")
	assert.Contains(t, body, "checksum mismatch")

	status, _, body = get(t, ts, "/")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "Damaged voyages")
	assert.Contains(t, body, s.Carol)
	assert.Contains(t, body, "Resolve #42: widget crashes on a nil config")
	assert.Contains(t, body, "3 of 3 voyages")

	for _, path := range []string{"/voyages/" + s.Main, "/transcript", "/transcript?voyage=" + s.Main} {
		status, _, body = get(t, ts, path)
		assert.Equal(t, http.StatusOK, status, path)
		assert.Contains(t, body, "Resolve #42", path)
	}
	status, _, _ = get(t, ts, "/transcript?voyage="+s.Carol)
	assert.Equal(t, http.StatusInternalServerError, status)
}

// TestTheHostMustBeLoopback: a page whose name was made to point at the
// loopback address (DNS rebinding) cannot read the home.
func TestTheHostMustBeLoopback(t *testing.T) {
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	for _, tt := range []struct {
		opts   *web.Options
		host   string
		status int
	}{
		{nil, "evil.example:7878", http.StatusForbidden},
		{nil, "localhost:7878", http.StatusOK},
		{nil, "[::1]:7878", http.StatusOK},
		{nil, "127.0.0.1", http.StatusOK},
		{&web.Options{AnyHost: true}, "box.lan:7878", http.StatusOK},
	} {
		ts := serve(t, s.Dir, tt.opts)
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/", nil)
		require.NoError(t, err)
		req.Host = tt.host
		resp, err := ts.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tt.status, resp.StatusCode, tt.host)
	}
}

// sse reads server-sent events from body.
type sse struct {
	sc *bufio.Scanner
}

// next returns the next event's name and data.
func (s *sse) next() (name, data string, err error) {
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if name != "" || data != "" {
				return name, data, nil
			}
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := s.sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", io.EOF
}

// TestEventsStreamWhatAnotherHandleAppends: a voyage page's event stream
// sends what another handle (as another process would) records, as the
// parts of the page it changes.
func TestEventsStreamWhatAnotherHandleAppends(t *testing.T) {
	s, ts := seeded(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/voyages/"+s.Main+"/events", nil)
	require.NoError(t, err)
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))

	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	v, err := h.Voyage(ctx, s.Main)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "Live from another handle: "+webtest.XSS, webtest.Ann)
	require.NoError(t, err)
	m, err := marks.NewContext("a look taken live")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m, webtest.Ann, nil)
	require.NoError(t, err)

	events := &sse{sc: bufio.NewScanner(resp.Body)}
	events.sc.Buffer(nil, 1<<20)
	type part struct{ ID, Into, HTML string }
	var got []struct {
		Seq   uint64
		Type  string
		Text  string
		Parts []part
	}
	for len(got) < 2 {
		name, data, err := events.next()
		require.NoError(t, err)
		require.Equal(t, "update", name, data)
		got = append(got, struct {
			Seq   uint64
			Type  string
			Text  string
			Parts []part
		}{})
		require.NoError(t, json.Unmarshal([]byte(data), &got[len(got)-1]))
	}
	note := got[0]
	assert.Equal(t, "note-added", note.Type)
	assert.Equal(t, "Note 5: Live from another handle: "+webtest.XSS, note.Text)
	ids := map[string]part{}
	for _, p := range note.Parts {
		ids[p.ID] = p
	}
	require.Contains(t, ids, "entry-5")
	assert.Equal(t, "timeline", ids["entry-5"].Into)
	assert.Contains(t, ids["entry-5"].HTML, "Live from another handle: &lt;script&gt;")
	assert.NotContains(t, ids["entry-5"].HTML, webtest.XSS)
	assert.Contains(t, ids, "voyage-head")

	obs := got[1]
	assert.Equal(t, "observed", obs.Type)
	var slate string
	for _, p := range obs.Parts {
		if p.ID == "slate" {
			slate = p.HTML
		}
	}
	assert.Contains(t, slate, "a look taken live")
}

// TestServeStopsWithItsContext: cancelling Serve's context ends it, an
// open event stream included.
func TestServeStopsWithItsContext(t *testing.T) {
	s, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	h, err := helm.Open(s.Dir, nil)
	require.NoError(t, err)
	srv, err := web.New(h, nil)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/voyages/" + s.Main + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	assert.NoError(t, <-done)
	_, err = io.ReadAll(resp.Body)
	assert.NoError(t, err, "the stream ended")
}
