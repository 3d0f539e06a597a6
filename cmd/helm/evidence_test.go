package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// TestSightingShowEveryKind observes one mark of every kind through the
// real marks (files, a command, a loopback web server, the GitHub
// stand-in) and compares `helm sighting show` of each with a golden file.
func TestSightingShowEveryKind(t *testing.T) {
	t.Parallel()
	h, srv, _ := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "widget crashes", Body: "on init\nafter reload"})
	srv.AddIssueComment("octo/widgets", issue, "dyreby", "me too")
	pr := srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix widget", Head: "main", Body: "Fixes the crash."})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Date", "Thu, 26 Feb 2026 17:00:00 GMT")
		w.Write([]byte("widget status: ok\nversion 2\n"))
	}))
	defer web.Close()
	h.writeFile("src/widget.rs", "pub fn init() {}\n")
	h.writeFile("Cargo.toml", "[package]\nname = \"widget\"\n")
	h.writeFile("go.mod", "module example.com/widget\n\ngo 1.26\n")
	h.writeFile("widget.go", "// Package widget makes widgets.\npackage widget\n")
	h.start("every kind of sighting")

	steps := []struct{ name, key string }{}
	observe := func(name string, args ...string) {
		r := h.run(append([]string{"observe"}, args...)...)
		require.Contains(t, []int{0, 3}, r.Code, "%s", r) // 3: recorded, with a failure
		steps = append(steps, struct{ name, key string }{name, args[0]})
	}
	observe("file-contents", "file-contents", "--read", "src/widget.rs", "--read", "missing.txt")
	observe("directory-tree", "directory-tree", "src")
	observe("rust-project", "rust-project", ".")
	observe("go-project", "go-project", ".")
	observe("command", "command", "--", "sh", "-c", "echo out; echo err >&2")
	observe("context", "context", "the user wants\na fix")
	observe("web", "web", web.URL)
	observe("github-issue", "github-issue", itoa(issue), "--repo", "octo/widgets", "--focus", "summary", "--focus", "comments")
	observe("github-pr", "github-pr", itoa(pr), "--repo", "octo/widgets", "--focus", "summary")

	var out strings.Builder
	for _, s := range steps {
		r := h.run("sighting", "show", s.key)
		require.Contains(t, []int{0, 3}, r.Code, "%s: %s", s.name, r)
		out.WriteString("$ helm sighting show " + s.key + "\n" + r.Stdout + "\n")
	}
	got := out.String()
	for _, n := range []struct{ re, with string }{
		{`artifact [0-9a-f]{8}`, "artifact <hash>"},
		{`after \d+ms`, "after <n>ms"},
		{`\b[0-9a-f]{40}\b`, "<sha>"},
		{`127\.0\.0\.1:\d+`, "127.0.0.1:<port>"},
		{regexp.QuoteMeta(h.Dir), "<dir>"},
		{`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`, "<time>"},
		{`\(\d+ B\)\n(\s+│ # octo)`, "(<n> B)\n$1"},
		// The command's sighting holds its duration: one more digit, one more byte.
		{`(Sighting command of .*\(artifact <hash>, )\d+ B\)`, "$1<n> B)"},
	} {
		got = regexp.MustCompile(n.re).ReplaceAllString(got, n.with)
	}
	golden(t, "sighting-show.golden", got)

	js := h.ok("sighting", "show", "context", "--json")
	assert.True(t, strings.HasPrefix(js, `{"kind":"context","description":"the user wants\na fix"}`), js)
	h.fails(2, "sighting", "show")
	r := h.fails(2, "sighting", "show", "zzzz")
	assert.Contains(t, r.Stderr, `no observation key or artifact hash of voyage`)
}

// Jettison, reduce, list, log --evidence and compact, from the CLI.
func TestArtifactLifecycleFromTheCLI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("prune the evidence")
	h.writeFile("big.txt", strings.Repeat("a line of a large file\n", 200))
	h.ok("observe", "file-contents", "--read", "big.txt")
	h.ok("observe", "context", "keep this")
	h.ok("observe", "command", "--", "echo", "hi")
	h.ok("bearing", "--reading", "looked at three things")
	list := h.ok("artifact", "list")
	hashes := regexp.MustCompile(`(?m)^([0-9a-f]{8})  (\S+)`).FindAllStringSubmatch(list, -1)
	require.Len(t, hashes, 3, list)
	byKind := map[string]string{}
	for _, m := range hashes {
		byKind[m[2]] = m[1]
	}

	r := h.fails(2, "artifact", "jettison", byKind["file-contents"])
	assert.Contains(t, r.Stderr, "--reason TEXT is required")
	h.ok("artifact", "jettison", byKind["file-contents"], "--reason", "a customer's data")
	h.ok("artifact", "reduce", byKind["command"], "--method", "human", "--summary", "it said hi")
	list = h.ok("artifact", "list")
	assert.Regexp(t, byKind["file-contents"]+`  file-contents .* jettisoned: a customer's data\n`, list)
	assert.Regexp(t, byKind["command"]+`  command .* reduced to [0-9a-f]{8}\n`, list)
	assert.Regexp(t, `summary .* stowed\n`, list)
	assert.Contains(t, h.ok("voyage", "show"), "jettisoned: a customer's data")

	story := h.ok("log")
	evidence := h.ok("log", "--evidence")
	assert.Contains(t, evidence, "  Evidence of FileContents: big.txt (artifact "+byKind["file-contents"]+"):\n    jettisoned by john-agent (role coder, method human) at 2026-02-26T17:00:00Z: a customer's data\n")
	assert.Contains(t, evidence, "  Evidence of Context: keep this (artifact "+byKind["context"]+"):\n    Description:\n      │ keep this\n")
	assert.Contains(t, evidence, "    reduced to artifact ")
	assert.Equal(t, "jettisoned by john-agent (role coder, method human) at 2026-02-26T17:00:00Z: a customer's data (artifact "+byKind["file-contents"]+")\n", h.ok("sighting", "show", byKind["file-contents"]))

	out := h.ok("voyage", "compact")
	assert.Contains(t, out, "compacted: 2 artifacts reclaimed (1 payload of reduced artifacts)", "the jettisoned one and the reduced one's payload")
	assert.Equal(t, story, h.ok("log"), "the story reads the same")
	assert.Equal(t, evidence, h.ok("log", "--evidence"), "and so does the evidence")
	assert.Contains(t, h.ok("voyage", "verify"), "OK: nothing damaged")
}
