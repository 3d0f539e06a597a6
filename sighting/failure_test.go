package sighting_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

func TestFailuresOfEveryKind(t *testing.T) {
	t.Parallel()
	listings := []sighting.DirectoryListing{
		{Path: ".", Entries: []sighting.DirectoryEntry{
			{Name: "ok.txt", SizeBytes: ptr(uint64(1))},
			{Name: "gone", Error: "no such file or directory"},
		}},
		{Path: "locked", Entries: []sighting.DirectoryEntry{}, Error: "permission denied"},
		{Path: "src", Entries: []sighting.DirectoryEntry{{Name: "vanished.rs", Error: "no such file or directory"}}},
	}
	listingFailures := []sighting.Failure{
		{Kind: sighting.FailureMissing, Path: "gone", Error: "no such file or directory", Message: "gone could not be examined: no such file or directory"},
		{Kind: sighting.FailureUnreadable, Path: "locked", Error: "permission denied", Message: "the directory locked could not be listed: permission denied"},
		{Kind: sighting.FailureMissing, Path: "src/vanished.rs", Error: "no such file or directory", Message: "src/vanished.rs could not be examined: no such file or directory"},
	}
	contents := []sighting.FileContents{
		{Path: "README.md", Content: sighting.TextContent("# hi\n")},
		{Path: "src/x.rs", Content: sighting.ErrorContent("no such file or directory")},
		{Path: "src", Content: sighting.ErrorContent("is a directory")},
		{Path: "fifo", Content: sighting.ErrorContent("not a regular file (FIFO)")},
	}
	contentFailures := []sighting.Failure{
		{Kind: sighting.FailureMissing, Path: "src/x.rs", Error: "no such file or directory", Message: "src/x.rs could not be read: no such file or directory"},
		{Kind: sighting.FailureUnreadable, Path: "src", Error: "is a directory", Message: "src could not be read: is a directory"},
		{Kind: sighting.FailureUnreadable, Path: "fifo", Error: "not a regular file (FIFO)", Message: "fifo could not be read: not a regular file (FIFO)"},
	}
	tests := []struct {
		name string
		s    sighting.Sighting
		want []sighting.Failure
	}{
		{name: "files read", s: &sighting.Files{Contents: contents[:1]}},
		{name: "files missing and unreadable", s: &sighting.Files{Contents: contents}, want: contentFailures},
		{name: "tree", s: &sighting.DirectoryTree{Listings: listings}, want: listingFailures},
		{name: "tree read", s: &sighting.DirectoryTree{Listings: []sighting.DirectoryListing{{Path: ".", Entries: listings[0].Entries[:1]}}}},
		{name: "rust project", s: &sighting.RustProject{Listings: listings, Contents: append(contents, sighting.FileContents{Path: "Cargo.toml", Content: sighting.TextContent("[package]\n")})},
			want: append(append([]sighting.Failure(nil), listingFailures...), contentFailures...)},
		{name: "rust project without a Cargo.toml, in a Go module", s: &sighting.RustProject{Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{
			{Name: "go.mod", SizeBytes: ptr(uint64(9))}, {Name: "package.json", IsDir: true}}}}},
			want: []sighting.Failure{{Kind: sighting.FailureNotProject, Path: ".", Error: "no Cargo.toml in the tree; it holds go.mod (go-project)",
				Message: "not a Rust project: no Cargo.toml in the tree; its top holds go.mod (go-project)"}}},
		{name: "go project without a go.mod", s: &sighting.GoProject{Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{
			{Name: "Cargo.toml", SizeBytes: ptr(uint64(9))}, {Name: "README.md", SizeBytes: ptr(uint64(9))}}}}},
			want: []sighting.Failure{{Kind: sighting.FailureNotProject, Path: ".", Error: "no go.mod in the tree; it holds Cargo.toml (rust-project)",
				Message: "not a Go project: no go.mod in the tree; its top holds Cargo.toml (rust-project)"}}},
		{name: "go project in an empty directory", s: &sighting.GoProject{Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{}}}},
			want: []sighting.Failure{{Kind: sighting.FailureNotProject, Path: ".", Error: "no go.mod in the tree", Message: "not a Go project: no go.mod in the tree"}}},
		{name: "go project: modules and packages that do not parse are no failure", s: &sighting.GoProject{
			Contents: contents[1:2],
			Modules:  []sighting.GoModule{{File: "go.mod", Error: "go.mod:1: unknown directive: x"}},
			Packages: []sighting.GoPackage{{Dir: "b", Error: "b/x.go:1:1: expected 'package'"}},
		}, want: contentFailures[:1]},
		{name: "context", s: &sighting.Context{Description: "a call"}},
		{name: "command exit 0", s: &sighting.Command{ExitCode: ptr(0)}},
		{name: "command exit 2", s: &sighting.Command{ExitCode: ptr(2)}, want: []sighting.Failure{
			{Kind: sighting.FailureExitStatus, ExitCode: 2, Message: "the command exited with status 2"}}},
		{name: "command timeout", s: &sighting.Command{TimedOut: true, TimeoutMS: 120000, Error: "killed after the 2m0s timeout"}, want: []sighting.Failure{
			{Kind: sighting.FailureTimeout, TimeoutMS: 120000, Error: "killed after the 2m0s timeout", Message: "the command was killed after the 2m0s timeout"}}},
		{name: "command timeout recorded before its duration was", s: &sighting.Command{TimedOut: true, Error: "killed after the 2m0s timeout"}, want: []sighting.Failure{
			{Kind: sighting.FailureTimeout, Error: "killed after the 2m0s timeout", Message: "the command timed out"}}},
		{name: "command signal", s: &sighting.Command{Signal: "segmentation fault", Error: "signal: segmentation fault"}, want: []sighting.Failure{
			{Kind: sighting.FailureSignal, Signal: "segmentation fault", Error: "signal: segmentation fault", Message: "the command was ended by a signal: segmentation fault"}}},
		{name: "command signal recorded before Signal was", s: &sighting.Command{Error: "signal: killed"}, want: []sighting.Failure{
			{Kind: sighting.FailureSignal, Signal: "killed", Error: "signal: killed", Message: "the command was ended by a signal: killed"}}},
		{name: "command not started", s: &sighting.Command{Error: `exec: "nope": executable file not found in $PATH`}, want: []sighting.Failure{
			{Kind: sighting.FailureNotStarted, Error: `exec: "nope": executable file not found in $PATH`, Message: `the command could not be started: exec: "nope": executable file not found in $PATH`}}},
		{name: "command directory missing", s: &sighting.Command{Dir: "nope", DirError: "no such file or directory", Error: "directory nope: no such file or directory"}, want: []sighting.Failure{
			{Kind: sighting.FailureMissing, Path: "nope", Error: "no such file or directory", Message: "the directory nope to run the command in could not be entered: no such file or directory"}}},
		{name: "command directory a file", s: &sighting.Command{Dir: "a.txt", DirError: "not a directory"}, want: []sighting.Failure{
			{Kind: sighting.FailureUnreadable, Path: "a.txt", Error: "not a directory", Message: "the directory a.txt to run the command in could not be entered: not a directory"}}},
		{name: "command left pipes open but exited 0", s: &sighting.Command{ExitCode: ptr(0), Error: "output pipes still open after exit (a background child kept them)"}},
		{name: "web 200", s: &sighting.Web{URL: "http://x/", Status: 200, Body: sighting.TextContent("ok")}},
		{name: "web 404", s: &sighting.Web{URL: "http://x/a", Status: 404, Body: sighting.TextContent("nope")}, want: []sighting.Failure{
			{Kind: sighting.FailureHTTPStatus, URL: "http://x/a", Status: 404, Message: "GET http://x/a answered 404 Not Found"}}},
		{name: "web status without a name", s: &sighting.Web{URL: "http://x/", Status: 599}, want: []sighting.Failure{
			{Kind: sighting.FailureHTTPStatus, URL: "http://x/", Status: 599, Message: "GET http://x/ answered 599"}}},
		{name: "web refused", s: &sighting.Web{URL: "http://127.0.0.1:1/", Error: "connection refused"}, want: []sighting.Failure{
			{Kind: sighting.FailureFetch, URL: "http://127.0.0.1:1/", Error: "connection refused", Message: "the URL could not be fetched: connection refused"}}},
		{name: "web 500 cut short", s: &sighting.Web{URL: "http://x/", Status: 500, Body: sighting.ErrorContent("reading body: unexpected EOF")}, want: []sighting.Failure{
			{Kind: sighting.FailureHTTPStatus, URL: "http://x/", Status: 500, Message: "GET http://x/ answered 500 Internal Server Error"},
			{Kind: sighting.FailureFetch, URL: "http://x/", Error: "reading body: unexpected EOF", Message: "the body of http://x/ could not be read: reading body: unexpected EOF"}}},
		{name: "pull request", s: &sighting.GitHubPullRequest{Repo: "o/r", Number: 45, Errors: []sighting.FocusError{{Focus: "checks", Error: "gh: boom (HTTP 500)"}}}, want: []sighting.Failure{
			{Kind: sighting.FailureFetch, Focus: "checks", Error: "gh: boom (HTTP 500)", Message: "the checks of o/r#45 could not be fetched: gh: boom (HTTP 500)"}}},
		{name: "issue", s: &sighting.GitHubIssue{Repo: "o/r", Number: 7, Errors: []sighting.FocusError{{Focus: "comments", Error: "gh: no"}}}, want: []sighting.Failure{
			{Kind: sighting.FailureFetch, Focus: "comments", Error: "gh: no", Message: "the comments of o/r#7 could not be fetched: gh: no"}}},
		{name: "issue fetched", s: &sighting.GitHubIssue{Repo: "o/r", Number: 7}},
		{name: "repository", s: &sighting.GitHubRepository{Repo: "o/r", Errors: []sighting.FocusError{{Focus: "issues", Error: "gh: no"}}}, want: []sighting.Failure{
			{Kind: sighting.FailureFetch, Focus: "issues", Error: "gh: no", Message: "the issues of o/r could not be fetched: gh: no"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sighting.Failures(tt.s)
			assert.Equal(t, tt.want, got)
			for _, f := range got {
				assert.Equal(t, f.Message, f.String())
			}
		})
	}
}

// TestEverySampleSightingKindReportsFailures: every kind but context
// answers Failures, and some sample of each reports one.
func TestEverySampleSightingKindReportsFailures(t *testing.T) {
	t.Parallel()
	failed := map[string]bool{}
	for _, s := range sampleSightings() {
		_, ok := s.(interface{ Failures() []sighting.Failure })
		assert.Equal(t, s.Kind() != "context", ok, "%s has a Failures method", s.Kind())
		if len(sighting.Failures(s)) > 0 {
			failed[s.Kind()] = true
		}
	}
	for _, k := range []string{"file-contents", "directory-tree", "rust-project", "go-project", "command", "web"} {
		assert.True(t, failed[k], "a sample of %s reports a failure", k)
	}
}

// A kind that records no failures (an outside one, here) has none.
type quiet struct{}

func (quiet) Kind() string { return "quiet" }

func TestFailuresOfAKindWithoutThem(t *testing.T) {
	t.Parallel()
	assert.Nil(t, sighting.Failures(quiet{}))
}

func TestFailureJSONFieldNamesAreStable(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(sighting.Failures(&sighting.Command{TimedOut: true, TimeoutMS: 200, Error: "killed after the 200ms timeout"}))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"kind":"timeout","timeout_ms":200,"error":"killed after the 200ms timeout","message":"the command was killed after the 200ms timeout"}]`, string(data))
}
