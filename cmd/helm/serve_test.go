package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a buffer a test reads while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingURL = regexp.MustCompile(`at (http://\S+/) \(read-only`)

// startServe runs helm serve with args until the test ends; it returns
// the URL it printed, what it wrote to stderr, and a function that stops
// it (as Ctrl-C does) and returns its error.
func startServe(t *testing.T, h *harness, args ...string) (string, *lockedBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- h.main().Run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &stdout, &stderr)
	}()
	stop := func() error { cancel(); return <-done }
	t.Cleanup(func() { cancel() })
	for {
		if m := servingURL.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], &stderr, stop
		}
		select {
		case err := <-done:
			t.Fatalf("helm serve ended before serving: %v\nstderr: %s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestServeShowsTheHomeReadOnlyAndStopsCleanly(t *testing.T) {
	h := newHarness(t)
	id := h.start("Resolve #42: fix widget crash")
	h.ok("observe", "context", "<script>alert(1)</script>")
	h.ok("bearing", "--reading", "Widget init lacks a nil check.")

	url, stderr, stop := startServe(t, h, "--addr", "127.0.0.1:0")
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "Resolve #42: fix widget crash")
	assert.NotEmpty(t, resp.Header.Get("Content-Security-Policy"))

	resp, err = http.Get(url + "voyages/" + id)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), "Widget init lacks a nil check.")
	assert.Contains(t, string(body), "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, string(body), "<script>alert(1)</script>")

	resp, err = http.Post(url, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	assert.NoError(t, stop(), "Ctrl-C stops it cleanly")
	assert.Empty(t, stderr.String(), "no warning on loopback")
	_, err = http.Get(url)
	assert.Error(t, err, "stopped")
}

func TestServeWarnsWhenNotOnLoopback(t *testing.T) {
	h := newHarness(t)
	_, stderr, stop := startServe(t, h, "--addr", "0.0.0.0:0")
	assert.Contains(t, stderr.String(), "helm: warning: serving on 0.0.0.0:")
	assert.Contains(t, stderr.String(), "not a loopback address")
	assert.NoError(t, stop())
}

func TestServeRefusesABadAddress(t *testing.T) {
	h := newHarness(t)
	r := h.fails(2, "serve", "--addr", "7878")
	assert.Contains(t, r.Stderr, `--addr "7878" is not HOST:PORT`)
	r = h.fails(2, "serve", "extra")
	assert.Contains(t, r.Stderr, "serve takes no arguments")
}

// TestServeCapsTheLiveStreams: with --max-streams 1, a second live page
// is refused (503) with what to do; a cap below 1 is bad usage.
func TestServeCapsTheLiveStreams(t *testing.T) {
	h := newHarness(t)
	id := h.start("Resolve #42: fix widget crash")
	url, _, stop := startServe(t, h, "--addr", "127.0.0.1:0", "--max-streams", "1")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"voyages/"+id+"/events", nil)
	require.NoError(t, err)
	first, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	_, err = first.Body.Read(make([]byte, 1)) // the stream is followed
	require.NoError(t, err)

	resp, err := http.Get(url + "voyages/" + id + "/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "follows at most 1 event streams at once")
	assert.Contains(t, string(body), "--max-streams")

	cancel()
	assert.NoError(t, stop())

	for _, n := range []string{"0", "-3"} {
		r := h.fails(2, "serve", "--addr", "127.0.0.1:0", "--max-streams", n)
		assert.Contains(t, r.Stderr, "--max-streams "+n+": want 1 or more")
	}
}

// TestServeShowsAnImportedClaudeCodeSession: the captured Claude Code
// session, imported, is served as its story tells it: each step, the
// denied rm -r -f marked refused, the subagent's sub-voyage linked, the
// agent totals in the voyage's figures.
func TestServeShowsAnImportedClaudeCodeSession(t *testing.T) {
	h := newHarness(t)
	path := capturedSession(t, filepath.Join(h.Dir, "projects"))
	h.ok("voyage", "import", "--from", "claude-code", path, "--as", "claude-1")
	main, sub := importedVoyages(t, h)

	url, _, stop := startServe(t, h, "--addr", "127.0.0.1:0")
	defer func() { assert.NoError(t, stop()) }()
	resp, err := http.Get(url + "voyages/" + main.ID)
	require.NoError(t, err)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body := string(data)
	for _, want := range []string{
		"Step 1: prompt: Tidy the notes",
		"Step 4: Edit &lt;project&gt;/notes.md (&#43;1 −1)", `<pre class="udiff">`,
		`<li class="item kind-step mark-refused" id="entry-9">`, "Step 9: Bash: rm -r -f victim …",
		"denied: PreToolUse:Bash hook error: helm guard: rm -rf is denied in this project (rule no-rm-rf)",
		`<a href="/voyages/` + sub.ID + `">sub-voyage`,
		`<p class="step-usage">usage: claude-opus-5-5, 1200 in, 34 out, 850 cache tokens</p>`,
		`<p class="agents">Agents: 2 prompts, 6 tool calls (1 denied, 0 failed)`,
	} {
		assert.Contains(t, body, want)
	}
}
