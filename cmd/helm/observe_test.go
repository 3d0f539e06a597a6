package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/sighting"
)

// writeFixture writes a small project that is both a Rust and a Go
// project into the harness's working directory.
func writeFixture(t *testing.T, h *harness) {
	t.Helper()
	h.writeFile("README.md", "# widget\n\nA widget that crashes on init.\n")
	h.writeFile("Cargo.toml", "[package]\nname = \"widget\"\nversion = \"0.1.0\"\n")
	h.writeFile("src/lib.rs", "pub fn init() {}\n")
	h.writeFile("go.mod", "module example.com/widget\n\ngo 1.26\n")
	h.writeFile("widget.go", "// Package widget makes widgets.\npackage widget\n")
	h.writeFile("target/debug/junk", "build output\n")
}

func TestObserveKinds(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("all systems go"))
	}))
	t.Cleanup(web.Close)
	tests := []struct {
		name  string
		args  []string
		label string // the mark's label in the printed line
	}{
		{"file-contents", []string{"file-contents", "--read", "README.md", "--read", "./src/lib.rs"}, "FileContents: README.md, src/lib.rs"},
		{"file-contents positional", []string{"file-contents", "--read", "README.md", "Cargo.toml"}, "FileContents: README.md, Cargo.toml"},
		{"directory-tree", []string{"directory-tree", "src", "--skip", "target", "--max-depth", "1"}, "DirectoryTree @ src"},
		{"rust-project", []string{"rust-project", "."}, "RustProject @ ."},
		{"go-project", []string{"go-project", "."}, "GoProject @ ."},
		{"context", []string{"context", "Agreed on a call: no API change"}, "Context: Agreed on a call: no API change"},
		{"command", []string{"command", "--", "sh", "-c", "echo hi"}, "Command: sh -c"},
		{"web", []string{"web", web.URL + "/status"}, "Web: " + web.URL + "/status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			writeFixture(t, h)
			h.start("observe " + tt.name)
			out := h.ok(append([]string{"observe"}, tt.args...)...)
			assert.Regexp(t, `^Observed .+ \(artifact [0-9a-f]{8}, [0-9.]+ (B|KiB|MiB)\)\n$`, out)
			assert.Contains(t, out, "Observed "+tt.label)
			slate := h.ok("slate", "list")
			assert.Contains(t, slate, "1 observation")
			assert.Contains(t, slate, tt.label)
		})
	}
}

func TestObserveSameMarkTwiceKeepsOneSlateEntry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFixture(t, h)
	h.start("spellings")
	h.ok("observe", "file-contents", "--read", "./README.md")
	h.ok("observe", "file-contents", "--read", "README.md")
	h.ok("observe", "rust-project", ".")
	h.ok("observe", "rust-project", "./")
	var slate []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(h.ok("slate", "list", "--json")), &slate))
	assert.Len(t, slate, 2)
}

func TestObserveOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFixture(t, h)
	h.start("out")
	out := h.ok("observe", "rust-project", ".", "--out", "obs.json")
	assert.Contains(t, out, "Observation written to obs.json\n")
	data, err := os.ReadFile(filepath.Join(h.Dir, "obs.json"))
	require.NoError(t, err)
	var obs helm.Observation
	require.NoError(t, json.Unmarshal(data, &obs))
	assert.Equal(t, "RustProject @ .", obs.Mark.String())
	assert.Equal(t, "rust-project", obs.Sighting.Kind())
	assert.Equal(t, "2026-02-26T17:00:00Z", stamp(obs.ObservedAt))
	rp, ok := obs.Sighting.(*sighting.RustProject)
	require.True(t, ok, "%T", obs.Sighting)
	assert.NotEmpty(t, rp)

	// --out -: the observation on stdout, the line on stderr.
	r := h.run("observe", "context", "to stdout", "--out", "-")
	require.Equal(t, 0, r.Code, r)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &obs))
	assert.Equal(t, "context", obs.Mark.Kind())
	assert.Contains(t, r.Stderr, "Observed Context: to stdout")
}

// TestObserveOutOfALargeFile: a file large enough to be streamed into the
// store is streamed out to the observation file, which a bearing seals.
func TestObserveOutOfALargeFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("large")
	text := strings.Repeat("a line of a large log, <tag> & \"quotes\"\n", 150_000) // 6 MB
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "big.log"), []byte(text), 0o600))
	h.ok("observe", "file-contents", "big.log", "--out", "big.json")
	data, err := os.ReadFile(filepath.Join(h.Dir, "big.json"))
	require.NoError(t, err)
	var obs helm.Observation
	require.NoError(t, json.Unmarshal(data, &obs))
	files, ok := obs.Sighting.(*sighting.Files)
	require.True(t, ok, "%T", obs.Sighting)
	assert.Equal(t, sighting.TextContent(text), files.Contents[0].Content)
	h.ok("slate", "clear")
	out := h.ok("bearing", "--reading", "The log is large.", "--observation", "big.json")
	assert.Contains(t, out, "Bearing 1")
}

func TestObserveJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("json")
	var o view.Observed
	require.NoError(t, json.Unmarshal([]byte(h.ok("observe", "context", "note", "--json")), &o))
	assert.Equal(t, id, o.Voyage)
	assert.Equal(t, "Context: note", o.Label)
	assert.Len(t, o.Artifact, 64)
	assert.NotZero(t, o.Size)
}

func TestObserveFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("failures")
	r := h.fails(1, "observe", "directory-tree", "no-such-dir")
	assert.Contains(t, r.Stderr, "observe DirectoryTree @ no-such-dir")
	r = h.fails(2, "observe", "context", "a", "b")
	assert.Contains(t, r.Stderr, "one DESCRIPTION expected")
	r = h.fails(2, "observe", "command")
	assert.Contains(t, r.Stderr, "PROGRAM")
	r = h.fails(2, "observe", "directory-tree", ".", "--max-depth", "deep")
	assert.Contains(t, r.Stderr, "invalid argument")
	h.ok("complete", "--summary", "done")
	r = h.fails(2, "observe", "context", "late") // no active voyage left
	assert.Contains(t, r.Stderr, "no active voyage")
	r = h.fails(1, "--voyage", "a3b00001", "observe", "context", "late")
	assert.Contains(t, r.Stderr, "voyage is completed")
	assert.Contains(t, r.Stderr, "Try: helm voyage new")
}

func TestObserveGitHubWithoutRepository(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("github")
	r := h.fails(1, "observe", "github-issue", "42")
	assert.Contains(t, r.Stderr, "Try: helm observe github-issue 42 --repo OWNER/NAME\n")
}

// newGitHubHarness returns a harness working in a git repository wired to
// the loopback GitHub stand-in, with gh pointed at it.
func newGitHubHarness(t *testing.T) (*harness, *ghtest.Server, *ghtest.GitRepo) {
	t.Helper()
	srv := ghtest.NewServer(t)
	g := srv.GitRepo(t, "octo/widgets")
	h := newHarness(t)
	h.Dir = g.Dir
	h.ExtraEnv = srv.Env()
	return h, srv, g
}

func TestObserveGitHubKinds(t *testing.T) {
	t.Parallel()
	h, srv, _ := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "widget crashes", Body: "on init"})
	srv.AddIssueComment("octo/widgets", issue, "", "me too")
	pr := srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix widget", Head: "main"})
	srv.AddRepo("other/repo", "main")
	other := srv.AddIssue("other/repo", ghtest.Issue{Title: "elsewhere"})
	h.start("github")

	tests := []struct {
		args  []string
		label string
		call  string
	}{
		{[]string{"github-issue", itoa(issue), "--focus", "summary", "--focus", "comments"}, "GitHubIssue octo/widgets#" + itoa(issue), "GET repos/octo/widgets/issues/" + itoa(issue) + "/comments"},
		{[]string{"github-pr", itoa(pr)}, "GitHubPullRequest octo/widgets#" + itoa(pr), "GET repos/octo/widgets/pulls/" + itoa(pr)},
		{[]string{"github-repo", "--focus", "issues"}, "GitHubRepository octo/widgets", "GET repos/octo/widgets/issues?state=open"},
		{[]string{"github-issue", itoa(other), "--repo", "other/repo"}, "GitHubIssue other/repo#" + itoa(other), "GET repos/other/repo/issues/" + itoa(other)},
	}
	for _, tt := range tests {
		srv.ClearRequests()
		out := h.ok(append([]string{"observe"}, tt.args...)...)
		assert.Contains(t, out, "Observed "+tt.label)
		assert.Contains(t, srv.Calls(), tt.call)
	}
	srv.Fail("GET", "repos/octo/widgets/issues/999", 404, "Not Found")
	r := h.fails(1, "observe", "github-issue", "999")
	assert.Contains(t, r.Stderr, "Not Found")
	assert.Len(t, strings.Split(strings.TrimSpace(h.ok("slate", "list")), "\n"), 5, "four observations and a heading")
}

// TestObserveWebFailures: an error status and a URL that cannot be
// fetched are observations all the same; helm says what failed and exits
// 3. A success says nothing on stderr.
func TestObserveWebFailures(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("all systems go"))
	}))
	t.Cleanup(web.Close)
	// A loopback port nobody listens on: connections are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())

	h := newHarness(t)
	h.start("web")

	r := h.fails(3, "observe", "web", web.URL+"/missing")
	assert.Equal(t, "helm: observed, but GET "+web.URL+"/missing answered 404 Not Found\nTry: helm slate erase web "+web.URL+"/missing"+eraseWhy+"\n", r.Stderr)
	assert.Contains(t, r.Stdout, "Observed Web: "+web.URL+"/missing")

	r = h.fails(3, "observe", "web", refused)
	assert.True(t, strings.HasPrefix(r.Stderr, "helm: observed, but the URL could not be fetched: Get \""+refused+"\": "), r.Stderr)
	assert.Contains(t, r.Stderr, "refused")
	assert.Equal(t, 2, strings.Count(r.Stderr, "\n"), "one line, and Try: %q", r.Stderr)
	assert.Contains(t, r.Stdout, "Observed Web: "+refused)

	r = h.fails(3, "observe", "web", web.URL+"/missing", "--json")
	var o view.Observed
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &o))
	assert.Equal(t, []sighting.Failure{{Kind: sighting.FailureHTTPStatus, URL: web.URL + "/missing", Status: 404,
		Message: "GET " + web.URL + "/missing answered 404 Not Found"}}, o.Failures)

	r = h.fails(3, "observe", "web", refused, "--json")
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &o))
	require.Len(t, o.Failures, 1)
	assert.Equal(t, sighting.FailureFetch, o.Failures[0].Kind)
	assert.Equal(t, refused, o.Failures[0].URL)

	r = h.run("observe", "web", web.URL+"/ok")
	assert.Equal(t, 0, r.Code, r)
	assert.Empty(t, r.Stderr)

	slate := h.ok("slate", "list")
	assert.Contains(t, slate, "3 observations", "the failed looks are on the slate too")
}

// TestObserveGitHubFocusFailure: a focus that could not be fetched while
// another was is recorded, said, and exits 3.
func TestObserveGitHubFocusFailure(t *testing.T) {
	t.Parallel()
	h, srv, _ := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "widget crashes", Body: "on init"})
	h.start("github")
	srv.Fail("GET", "repos/octo/widgets/issues/"+itoa(issue)+"/comments", 500, "boom")
	r := h.fails(3, "observe", "github-issue", itoa(issue), "--focus", "summary", "--focus", "comments")
	assert.True(t, strings.HasPrefix(r.Stderr, "helm: observed, but the comments of octo/widgets#"+itoa(issue)+" could not be fetched: "), r.Stderr)
	assert.Contains(t, r.Stderr, "boom")
	assert.Contains(t, r.Stdout, "Observed GitHubIssue octo/widgets#"+itoa(issue))
}
