package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/webtest"
)

// serveHome runs helm serve (this tree's, built) on the home at dir, on
// a free loopback port, until the test ends, and returns the address it
// printed. The web UI is the helm program's (cmd/helm/internal/web), so
// the browser drives the program a user runs, not a package.
func serveHome(t *testing.T, dir string) string {
	t.Helper()
	bin := buildHelm(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HELM_HOME=" + dir, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		assert.NoError(t, err, "helm serve: %s", stderr.String())
	})
	// "Serving HOME at http://127.0.0.1:PORT/ (read-only; Ctrl-C stops)"
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "helm serve printed no address: %s", stderr.String())
	start := strings.Index(line, "http://")
	require.GreaterOrEqual(t, start, 0, "helm serve printed %q", line)
	addr, _, _ := strings.Cut(line[start:], " ")
	return strings.TrimSuffix(addr, "/")
}

// findBrowser returns the Chromium to drive: $HELM_CHROMIUM, else the
// first of chromium, chromium-browser, google-chrome on PATH. Without one
// the test is skipped, or fails when HELM_BROWSER_TESTS=1 (as in CI).
func findBrowser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("HELM_BROWSER_TESTS") == "1" {
		t.Fatal("HELM_BROWSER_TESTS=1 but no chromium, chromium-browser or google-chrome is on PATH (Debian: apt-get install chromium), and HELM_CHROMIUM is not set")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH: the browser tests are skipped (HELM_BROWSER_TESTS=1 makes this a failure)")
	return ""
}

// session is a headless Chromium tab on the web UI of a seeded home,
// recording the console's errors and the JavaScript dialogs opened.
type session struct {
	t      *testing.T
	ctx    context.Context
	base   string
	seed   *webtest.Seeded
	shots  string
	mu     sync.Mutex
	errors []string
	dialog []string
}

// newSession opens a tab on the web UI of the seeded home (webtest.Seed).
func newSession(t *testing.T) *session {
	findBrowser(t)
	seed, err := webtest.Seed(context.Background(), t.TempDir())
	require.NoError(t, err)
	s := openSession(t, seed.Dir)
	s.seed = seed
	return s
}

// openSession opens a tab on the web UI of the home in dir.
func openSession(t *testing.T, dir string) *session {
	exe := findBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)

	s := &session{t: t, shots: os.Getenv("HELM_SCREENSHOTS")}
	if s.shots == "" {
		s.shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(s.shots, 0o755))
	s.base = serveHome(t, dir)

	var browserLog bytes.Buffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // root in a container has no user namespace for it
		chromedp.Flag("headless", "new"),
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
		chromedp.CombinedOutput(&browserLog),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	s.ctx = bctx
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v\n%s", exe, err, browserLog.String())
	}

	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				s.mu.Lock()
				s.errors = append(s.errors, fmt.Sprintf("%s (%s:%d)", m.Text, m.URL, m.Line+1))
				s.mu.Unlock()
			}
		}
	}()
	dialogs := chromedp.Events(bctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			s.mu.Lock()
			s.dialog = append(s.dialog, string(ev.Type)+": "+ev.Message)
			s.mu.Unlock()
			// Dismiss it, or the page would wait for it forever.
			_, _ = chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return s
}

// do runs actions on the tab, failing the test on an error.
func (s *session) do(actions ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	require.NoError(s.t, chromedp.Do(ctx, actions...))
}

// text returns the text of the first element sel selects.
func (s *session) text(sel string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	txt, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(s.t, err, sel)
	return txt
}

func eval[T any](s *session, js string) T {
	s.t.Helper()
	v, err := chromedp.Run(s.ctx, chromedp.Evaluate[T](js))
	require.NoError(s.t, err, js)
	return v
}

// screenshot saves the whole page as name.png and checks that it shows
// something: a PNG whose pixels are not all alike.
func (s *session) screenshot(name string) {
	s.t.Helper()
	data, err := chromedp.Run(s.ctx, chromedp.FullScreenshot(100))
	require.NoError(s.t, err)
	path := filepath.Join(s.shots, name+".png")
	require.NoError(s.t, os.WriteFile(path, data, 0o644))
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(s.t, err, "%s is not a PNG", path)
	assert.False(s.t, blank(img), "%s is blank", path)
	s.t.Logf("screenshot: %s (%dx%d)", path, img.Bounds().Dx(), img.Bounds().Dy())
}

// blank reports whether every pixel of img has the same colour.
func blank(img image.Image) bool {
	b := img.Bounds()
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// problems returns the console errors and dialogs seen so far.
func (s *session) problems() (errs, dialogs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errors...), append([]string(nil), s.dialog...)
}

func TestVoyagesInABrowser(t *testing.T) {
	s := newSession(t)
	seed := s.seed

	t.Run("the voyages page lists the seeded voyages", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/"), chromedp.WaitVisible(chromedp.CSS("table.voyages")))
		intents := eval[[]string](s, `Array.from(document.querySelectorAll('table.voyages a.intent')).map(a => a.textContent)`)
		assert.ElementsMatch(t, []string{"Resolve #42: widget crashes on a nil config", "Fix the nil dereference in widget.Init",
			"Regression test for #42", webtest.XSS}, intents)
		s.screenshot("voyages")
	})

	t.Run("a voyage page shows every entry, its sightings and its challenge", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/voyages/"+seed.Main), chromedp.WaitVisible(chromedp.ID("timeline")))
		ids := eval[[]string](s, `Array.from(document.querySelectorAll('#timeline > li.item')).map(li => li.id)`)
		want := []string{"life-0"}
		for n := 1; n <= seed.Entries; n++ {
			want = append(want, "entry-"+strconv.Itoa(n))
		}
		assert.Equal(t, want, ids, "the start, then every entry in order")
		assert.Contains(t, s.text("#entry-2"), "push failed")
		assert.Equal(t, []string{"failed"}, eval[[]string](s, `Array.from(document.querySelectorAll('#entry-2 .badge')).map(b => b.textContent)`))
		assert.Contains(t, s.text("#entry-3"), "denied by rule \"agents may not merge\"")
		assert.Contains(t, s.text("#slate"), "the crash happens on ARM builds only")

		// The challenge, as a diff of the two readings.
		assert.Contains(t, s.text("#entry-1 .challenge .feedback"), "the widget is fine; the config is what is nil")
		dels := eval[string](s, `Array.from(document.querySelectorAll('#entry-1 .diff del')).map(e => e.textContent).join('|')`)
		ins := eval[string](s, `Array.from(document.querySelectorAll('#entry-1 .diff ins')).map(e => e.textContent).join('|')`)
		assert.Contains(t, dels, "widget")
		assert.Contains(t, ins, "config")
		assert.Equal(t, seed.Challenged, s.text("#entry-1 .reading"))

		// Expanding a bearing's sightings shows them: a file highlighted,
		// a directory tree, a command's output.
		sightings := eval[map[string]string](s, `Object.fromEntries(Array.from(document.querySelectorAll('#entry-1 details.observation')).map(d => [d.querySelector('.mark-kind').textContent, d.id]))`)
		require.Contains(t, sightings, "file-contents")
		files := "#" + sightings["file-contents"]
		assert.False(t, eval[bool](s, `document.querySelector('`+files+`').open`))
		s.do(chromedp.Click(chromedp.CSS(files+" > summary")), chromedp.WaitVisible(chromedp.CSS(files+" .hl-chroma")))
		assert.Contains(t, s.text(files+" .hl-chroma"), "func Init(c *Config) *Widget {")
		assert.Positive(t, eval[int](s, `document.querySelectorAll('`+files+` .hl-chroma span[class^="hl-k"]').length`), "keywords highlighted")
		tree := "#" + sightings["directory-tree"]
		s.do(chromedp.Click(chromedp.CSS(tree+" > summary")), chromedp.WaitVisible(chromedp.CSS(tree+" ul.tree")))
		assert.Contains(t, s.text(tree+" ul.tree"), "init_test.go")
		command := "#" + sightings["command"]
		s.do(chromedp.Click(chromedp.CSS(command+" > summary")), chromedp.WaitVisible(chromedp.CSS(command+" .command.failed")))
		assert.Contains(t, s.text(command+" .command .status"), "exit status 1, after 1.834s")
		assert.Contains(t, s.text(command+" pre.out"), "panic: runtime error")
		s.screenshot("voyage")
	})

	t.Run("an event another handle appends appears without a reload", func(t *testing.T) {
		s.t = t
		s.do(chromedp.WaitVisible(chromedp.CSS("#live.on")))
		eval[bool](s, `window.helmNotReloaded = true`)
		h, err := helm.Open(seed.Dir, nil)
		require.NoError(t, err)
		v, err := h.Voyage(s.ctx, seed.Main)
		require.NoError(t, err)
		_, err = v.Note(s.ctx, "Appended by another handle: "+webtest.XSS, webtest.Ann)
		require.NoError(t, err)
		require.NoError(t, v.Close())
		next := "#entry-" + strconv.Itoa(seed.Entries+1)
		s.do(chromedp.WaitVisible(chromedp.CSS(next)))
		assert.Equal(t, "Appended by another handle: "+webtest.XSS, s.text(next+" .note"))
		assert.True(t, eval[bool](s, `window.helmNotReloaded === true`), "the page was not reloaded")
		assert.Equal(t, next, "#"+eval[string](s, `document.querySelector('#timeline > li.item:last-child').id`))
		assert.Contains(t, s.text("#voyage-head .counts"), strconv.Itoa(seed.Entries+1)+" entries")
		s.screenshot("voyage-live")
	})

	t.Run("stored script stays text", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/voyages/"+seed.Hostile), chromedp.WaitVisible(chromedp.CSS("h1.intent")))
		assert.Equal(t, webtest.XSS, s.text("h1.intent"))
		assert.Contains(t, s.text("#entry-1 .note"), `<img src=x onerror=alert(2)> and `+webtest.XSS)
		assert.Equal(t, 0, eval[int](s, `document.querySelectorAll('main img, main script').length`))
		assert.Equal(t, []string{"/static/live.js"}, eval[[]string](s, `Array.from(document.scripts).map(e => e.getAttribute('src'))`))
		s.screenshot("hostile")

		s.do(chromedp.Navigate(s.base+"/voyages/"+seed.Bob), chromedp.WaitVisible(chromedp.CSS("#entry-1 .reading")))
		assert.Equal(t, webtest.XSS+" A nil check in Init fixes it.", s.text("#entry-1 .reading"))
	})

	t.Run("the transcript has a lane per identity and the figures' chart", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/transcript?voyage="+seed.Main), chromedp.WaitVisible(chromedp.CSS("svg.bars")))
		lanes := eval[[]string](s, `Array.from(document.querySelectorAll('th.lane-head')).map(th => th.firstChild.textContent.trim())`)
		assert.Equal(t, []string{"ann", "bob", "carol", "dave", "merge-bot"}, lanes)
		assert.Equal(t, 8, eval[int](s, `document.querySelectorAll('svg.bars rect.bar').length`), "total, critical, overhead, and 5 identities")
		s.screenshot("transcript")
	})

	errs, dialogs := s.problems()
	assert.Empty(t, errs, "console errors")
	assert.Empty(t, dialogs, "JavaScript dialogs")
}

// TestAgentStepsInABrowser: a hooked session's steps render in a real
// browser: each step's line, a denial marked as a refusal, the whole text,
// diff and output opened from their disclosure, the subagent's sub-voyage
// one click away, the agent totals; and an agent's markup stays text.
func TestAgentStepsInABrowser(t *testing.T) {
	findBrowser(t)
	seed, err := webtest.SeedAgent(context.Background(), t.TempDir())
	require.NoError(t, err)
	s := openSession(t, seed.Dir)

	t.Run("each step reads as the log tells it", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/voyages/"+seed.Session), chromedp.WaitVisible(chromedp.ID("timeline")))
		titles := eval[[]string](s, `Array.from(document.querySelectorAll('#timeline > li.kind-step .title')).map(e => e.textContent)`)
		assert.Equal(t, []string{
			"Step 1: session started (startup)",
			"Step 2: prompt: The widget crashes on a nil config. …",
			"Step 3: Bash: go test ./widget",
			"Step 4: Edit widget/init.go (+4 −1)",
			"Step 5: Bash: rm -r -f /tmp/victim",
			"Step 6: Bash: go test -v ./widget",
			"Step 7: Bash: cat testdata/huge.txt",
			"Step 8: Bash: go vet ./...",
			"Step 9: subagent started: general-purpose (voyage " + seed.Sub[:8] + ")",
			"Step 10: subagent stopped: general-purpose (voyage " + seed.Sub[:8] + ")",
			"Step 11: permission asked for WebFetch: https://example.com/widgets",
			"Step 12: message: Init now checks its config for nil; the tests pass.",
		}, titles)
		assert.Equal(t, "→ ok (1.234s)", s.text("#entry-3 .step-result"))
		assert.Equal(t, []string{"refused"}, eval[[]string](s, `Array.from(document.querySelectorAll('#entry-5 .badge')).map(b => b.textContent)`))
		assert.Equal(t, "denied by \"no recursive deletes\" (policy.toml:3): recursive deletes need a person", s.text("#entry-5 .step-decision"))
		assert.Equal(t, "rgb(130, 80, 223)", eval[string](s, `getComputedStyle(document.querySelector('#entry-5 .step-decision')).color`),
			"a denial in the refused colour")
		assert.Equal(t, []string{"failed"}, eval[[]string](s, `Array.from(document.querySelectorAll('#entry-8 .badge')).map(b => b.textContent)`))
		assert.Contains(t, s.text("#entry-12 .step-usage"), "usage: claude-sonnet-4-5, 12000 in, 850 out, 43000 cache tokens, $0.0731")
		assert.Contains(t, s.text("#voyage-head .agents"), "1 prompt, 6 tool calls (1 denied, 1 failed)")

		// The disclosures open on the whole text, the diff, the outputs.
		assert.False(t, eval[bool](s, `document.querySelector('#entry-4 details.step-evidence').open`))
		s.do(chromedp.Click(chromedp.CSS("#entry-4 details.step-evidence > summary")), chromedp.WaitVisible(chromedp.CSS("#entry-4 pre.udiff")))
		assert.Equal(t, []string{"+\tif c == nil {", "+\t\treturn &Widget{}", "+\t}", "+\treturn &Widget{name: c.Name}"},
			eval[[]string](s, `Array.from(document.querySelectorAll('#entry-4 pre.udiff .d-add')).map(e => e.textContent)`))
		s.do(chromedp.Click(chromedp.CSS("#entry-6 details.step-evidence > summary")), chromedp.WaitVisible(chromedp.CSS("#entry-6 pre.out")))
		assert.Equal(t, seed.Long, s.text("#entry-6 pre.out"), "the long output, whole, from its artifact")
		s.do(chromedp.Click(chromedp.CSS("#entry-7 details.step-evidence > summary")), chromedp.WaitVisible(chromedp.CSS("#entry-7 pre.out")))
		assert.Equal(t, 64<<10, eval[int](s, `document.querySelector('#entry-7 pre.out').textContent.length`), "the first 64 KiB")
		s.screenshot("agent-session")

		// The subagent's sub-voyage, one click away.
		s.do(chromedp.Click(chromedp.CSS("#entry-9 .step-sub a")), chromedp.WaitVisible(chromedp.CSS("h1.intent")))
		assert.Equal(t, "general-purpose: Count the widget's lines", s.text("h1.intent"))
		assert.Equal(t, "Step 2: Read: widget/init.go", s.text("#entry-2 .title"))
	})

	t.Run("an agent's markup stays text", func(t *testing.T) {
		s.t = t
		s.do(chromedp.Navigate(s.base+"/voyages/"+seed.Hostile), chromedp.WaitVisible(chromedp.ID("timeline")))
		eval[bool](s, `document.querySelectorAll('details').forEach(d => d.open = true), true`)
		assert.Equal(t, webtest.XSS+"\n<img src=x onerror=alert(2)>", s.text("#entry-1 pre.step-text"))
		assert.Contains(t, s.text("#entry-2 pre.out"), "<iframe src=javascript:alert(3)></iframe>")
		assert.Equal(t, "+"+webtest.XSS, s.text("#entry-3 pre.udiff .d-add"))
		assert.Contains(t, s.text("#entry-4 .step-decision"), "<b onmouseover=alert(4)>no</b>")
		assert.Equal(t, 0, eval[int](s, `document.querySelectorAll('main img, main script, main iframe, main b[onmouseover]').length`))
		assert.Equal(t, 0, eval[int](s, `document.querySelectorAll('a[href^="javascript"]').length`))
		s.screenshot("agent-hostile")
	})

	errs, dialogs := s.problems()
	assert.Empty(t, errs, "console errors")
	assert.Empty(t, dialogs, "JavaScript dialogs")
}
