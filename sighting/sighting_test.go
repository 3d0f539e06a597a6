package sighting_test

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

func ptr[T any](v T) *T { return &v }

// sampleSightings is one sighting of every kind built here, with every
// field set somewhere; the round-trip tests and the fuzz corpus use them.
func sampleSightings() []sighting.Sighting {
	listings := []sighting.DirectoryListing{
		{Path: ".", Entries: []sighting.DirectoryEntry{
			{Name: "README.md", SizeBytes: ptr(uint64(12))},
			{Name: "src", IsDir: true},
			{Name: "caf\uFFFD", RawName: []byte("caf\xe9"), SizeBytes: ptr(uint64(0))},
			{Name: "link", Symlink: "../elsewhere"},
			{Name: "gone", Error: "no such file or directory"},
		}},
		{Path: "locked", Entries: []sighting.DirectoryEntry{}, Error: "permission denied"},
		{Path: "caf\uFFFD", RawPath: []byte("caf\xe9"), Entries: []sighting.DirectoryEntry{}},
	}
	contents := []sighting.FileContents{
		{Path: "README.md", Content: sighting.TextContent("# Helm\n")},
		{Path: "logo.png", Content: sighting.BinaryContent(2048)},
		{Path: "secret", Content: sighting.ErrorContent("permission denied")},
	}
	return []sighting.Sighting{
		&sighting.Files{Contents: contents},
		&sighting.DirectoryTree{Listings: listings},
		&sighting.RustProject{Listings: listings, Contents: contents},
		&sighting.GoProject{
			Listings: listings, Contents: contents,
			Modules: []sighting.GoModule{
				{File: "go.mod", Module: "example.com/w", Go: "1.26.0", Toolchain: "go1.26.1",
					Requires: []sighting.GoRequire{{Path: "a.org/b", Version: "v1.0.0", Indirect: true}},
					Replaces: []sighting.GoReplace{{Old: "a.org/b", OldVersion: "v1.0.0", New: "c.org/b", NewVersion: "v1.0.1"}}},
				{File: "bad/go.mod", Error: "bad/go.mod:1: unknown directive: x"},
			},
			Packages: []sighting.GoPackage{{Dir: ".", Name: "w", Doc: "Package w does widgets.\n"}, {Dir: "b", Error: "b/x.go:1:1: expected 'package'"}},
		},
		&sighting.Context{Description: "Decided with Ana: ship v2 first"},
		&sighting.Command{ExitCode: ptr(1), Stdout: "ok\n", Stderr: "FAIL\n… [truncated 3 bytes] …\n", StderrTruncatedBytes: 3, DurationMS: 1234},
		&sighting.Command{Stdout: "", Stderr: "", TimedOut: true, Error: "killed after the 2m0s timeout"},
		&sighting.Command{Stdout: "", Stderr: "", TimedOut: true, TimeoutMS: 200, Error: "killed after the 200ms timeout"},
		&sighting.Command{Stdout: "part", Stderr: "", TimeoutMS: 120000, Signal: "killed", Error: "signal: killed"},
		&sighting.Command{Stdout: "", Stderr: "", TimeoutMS: 120000, Dir: "nope", DirError: "no such file or directory", Error: "directory nope: no such file or directory"},
		&sighting.Web{URL: "https://example.com/", Redirects: []string{"https://example.com/"}, Status: 200,
			Headers: map[string][]string{"Content-Type": {"text/html"}, "A": {"1", "2"}},
			Body:    sighting.FileContent{Type: sighting.ContentText, Text: "<p>hi\n… [truncated]", SizeBytes: 5, Truncated: true}},
		&sighting.Web{URL: "http://127.0.0.1:1/", Error: "connection refused", Body: sighting.FileContent{}},
	}
}

func TestEverySightingKindRoundTrips(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range sampleSightings() {
		t.Run(s.Kind(), func(t *testing.T) {
			seen[s.Kind()] = true
			data, err := sighting.Marshal(s)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), `{"kind":"`+s.Kind()+`",`), "%s", data)
			back, err := sighting.Unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, s, back)
			again, err := sighting.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(again), "encoding is deterministic")
		})
	}
	for _, k := range []string{"file-contents", "directory-tree", "rust-project", "go-project", "context", "command", "web"} {
		assert.Contains(t, sighting.Kinds(), k)
		assert.True(t, seen[k], "samples cover %s", k)
	}
}

func TestSightingJSONFieldNamesAreStable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    sighting.Sighting
		want string
	}{
		{name: "files", s: &sighting.Files{Contents: []sighting.FileContents{
			{Path: "a", Content: sighting.TextContent("hi")},
			{Path: "b", Content: sighting.BinaryContent(3)},
			{Path: "c", Content: sighting.ErrorContent("is a directory")},
		}}, want: `{"kind":"file-contents","contents":[{"path":"a","content":{"type":"text","text":"hi","size_bytes":2}},{"path":"b","content":{"type":"binary","size_bytes":3}},{"path":"c","content":{"type":"error","error":"is a directory"}}]}`},
		{name: "tree", s: &sighting.DirectoryTree{Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{
			{Name: "d", IsDir: true}, {Name: "f", SizeBytes: ptr(uint64(0))}, {Name: "l", Symlink: "f"},
		}}}}, want: `{"kind":"directory-tree","listings":[{"path":".","entries":[{"name":"d","is_dir":true},{"name":"f","is_dir":false,"size_bytes":0},{"name":"l","is_dir":false,"symlink":"f"}]}]}`},
		{name: "command", s: &sighting.Command{ExitCode: ptr(0), Stdout: "x", DurationMS: 5}, want: `{"kind":"command","exit_code":0,"stdout":"x","stderr":"","duration_ms":5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := sighting.Marshal(tt.s)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(data))
		})
	}
}

func TestTextNameKeepsRawBytesOfNonUTF8Names(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		raw            []byte
	}{
		{name: "ascii", in: "main.go", want: "main.go"},
		{name: "utf-8", in: "café.md", want: "café.md"},
		{name: "latin-1", in: "caf\xe9.md", want: "caf\uFFFD.md", raw: []byte("caf\xe9.md")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, raw := sighting.TextName(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.raw, raw)
			assert.Equal(t, tt.in, sighting.DirectoryEntry{Name: got, RawName: raw}.FSName())
		})
	}
}

func TestFileContentString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "text, 2 bytes", sighting.TextContent("hi").String())
	assert.Equal(t, "binary, 9 bytes", sighting.BinaryContent(9).String())
	assert.Equal(t, "error: permission denied", sighting.ErrorContent("permission denied").String())
}

// FuzzSightingUnmarshal: decoding arbitrary bytes never panics, and a value
// that decodes re-encodes to bytes that decode to an equal value (and the
// same bytes again: the content address is stable).
func FuzzSightingUnmarshal(f *testing.F) {
	for _, s := range sampleSightings() {
		data, err := sighting.Marshal(s)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"web","headers":{},"redirects":[]}`))
	f.Add([]byte(`{"kind":"directory-tree","listings":[{"entries":null,"raw_path":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := sighting.Unmarshal(data)
		if err != nil {
			return
		}
		enc, err := sighting.Marshal(s)
		require.NoError(t, err)
		back, err := sighting.Unmarshal(enc)
		require.NoError(t, err, "re-decoding %s", enc)
		assert.Equal(t, s, back)
		enc2, err := sighting.Marshal(back)
		require.NoError(t, err)
		assert.Equal(t, string(enc), string(enc2))
		assert.True(t, json.Valid(enc))
	})
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzSightingUnmarshal from sampleSightings")

// TestFuzzCorpusIsCurrent keeps the checked-in seed corpus in step with
// sampleSightings; run with -update-corpus after adding a kind.
func TestFuzzCorpusIsCurrent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "fuzz", "FuzzSightingUnmarshal")
	for _, s := range sampleSightings() {
		data, err := sighting.Marshal(s)
		require.NoError(t, err)
		file := filepath.Join(dir, fmt.Sprintf("%s-%x", s.Kind(), sha256.Sum256(data))[:len(s.Kind())+13])
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *updateCorpus {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(file, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err, "run go test ./sighting -run TestFuzzCorpusIsCurrent -update-corpus")
		assert.Equal(t, want, string(got))
	}
}
