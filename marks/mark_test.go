package marks_test

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

	"github.com/helmlog/helm/marks"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestKeysJoinSpellingsOfOneTarget(t *testing.T) {
	tests := []struct {
		name  string
		a, b  marks.Mark
		equal bool
	}{
		{name: "dot slash", a: must(marks.NewFileContents("./a.go")), b: must(marks.NewFileContents("a.go")), equal: true},
		{name: "order and duplicates", a: must(marks.NewFileContents("b.go", "a.go", "a.go")), b: must(marks.NewFileContents("a.go", "./b.go")), equal: true},
		{name: "decoded unclean paths", a: &marks.FileContents{Paths: []string{"x/../a.go", "a.go"}}, b: must(marks.NewFileContents("a.go")), equal: true},
		{name: "different files", a: must(marks.NewFileContents("a.go")), b: must(marks.NewFileContents("b.go")), equal: false},
		{name: "subset of files", a: must(marks.NewFileContents("a.go")), b: must(marks.NewFileContents("a.go", "b.go")), equal: false},
		{name: "space in name is not a separator", a: must(marks.NewFileContents("a b")), b: must(marks.NewFileContents("a", "b")), equal: false},
		{name: "tree trailing slash", a: must(marks.NewDirectoryTree("src/", nil)), b: must(marks.NewDirectoryTree("./src", nil)), equal: true},
		{name: "tree skip order", a: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"b", "a"}})), b: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"a", "b", "a"}})), equal: true},
		{name: "tree depth matters", a: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{MaxDepth: ptr(1)})), b: must(marks.NewDirectoryTree(".", nil)), equal: false},
		{name: "tree skip matters", a: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"a"}})), b: must(marks.NewDirectoryTree(".", nil)), equal: false},
		{name: "rust project spellings", a: must(marks.NewRustProject(".")), b: must(marks.NewRustProject("./")), equal: true},
		{name: "rust and go are different kinds", a: must(marks.NewRustProject(".")), b: must(marks.NewGoProject(".")), equal: false},
		{name: "file and tree of one path differ", a: must(marks.NewFileContents("src")), b: must(marks.NewDirectoryTree("src", nil)), equal: false},
		{name: "go vendor matters", a: must(marks.NewGoProject(".")), b: &marks.GoProject{Root: ".", IncludeVendor: true}, equal: false},
		{name: "context trimmed", a: must(marks.NewContext("call with Ana")), b: &marks.Context{Description: " call with Ana\n"}, equal: true},
		{name: "context words", a: must(marks.NewContext("call with Ana")), b: must(marks.NewContext("call with Bo")), equal: false},
		{name: "command dir dot is default", a: must(marks.NewCommand("", "go", "test")), b: must(marks.NewCommand("./", "go", "test")), equal: true},
		{name: "command args split", a: must(marks.NewCommand("", "echo", "a b")), b: must(marks.NewCommand("", "echo", "a", "b")), equal: false},
		{name: "web case and default port", a: must(marks.NewWeb("HTTP://Example.com:80")), b: must(marks.NewWeb("http://example.com/")), equal: true},
		{name: "web query matters", a: must(marks.NewWeb("http://example.com/?a=1")), b: must(marks.NewWeb("http://example.com/")), equal: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(tt.a.Key(), tt.a.Kind()+":"), "key %q starts with the kind", tt.a.Key())
			if tt.equal {
				assert.Equal(t, tt.a.Key(), tt.b.Key())
			} else {
				assert.NotEqual(t, tt.a.Key(), tt.b.Key())
			}
		})
	}
}

func TestStringRendersOneLogbookLine(t *testing.T) {
	tests := []struct {
		name string
		mark marks.Mark
		want string
	}{
		{name: "rust project root", mark: must(marks.NewRustProject("./")), want: "RustProject @ ."},
		{name: "go project", mark: must(marks.NewGoProject(".")), want: "GoProject @ ."},
		{name: "go project with vendor", mark: &marks.GoProject{Root: "svc", IncludeVendor: true}, want: "GoProject @ svc (with vendor)"},
		{name: "files", mark: must(marks.NewFileContents("./a.go", "b.go")), want: "FileContents: a.go, b.go"},
		{name: "many files", mark: must(marks.NewFileContents("a", "b", "c", "d", "e")), want: "FileContents: a, b, c (+2 more)"},
		{name: "tree", mark: must(marks.NewDirectoryTree("src/", nil)), want: "DirectoryTree @ src"},
		{name: "narrowed tree", mark: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"target", "node_modules"}, MaxDepth: ptr(2)})), want: "DirectoryTree @ . (skip: node_modules, target; max depth 2)"},
		{name: "context", mark: must(marks.NewContext("Call with Ana:\nship v2 first")), want: "Context: Call with Ana: ship v2 first"},
		{name: "long context", mark: must(marks.NewContext(strings.Repeat("word ", 30))), want: "Context: " + strings.TrimSpace(strings.Repeat("word ", 14)) + "…"},
		{name: "command", mark: must(marks.NewCommand("", "go", "test", "./...")), want: "Command: go test ./..."},
		{name: "command quoting and dir", mark: must(marks.NewCommand("svc", "sh", "-c", "echo hi")), want: `Command: sh -c "echo hi" (in svc)`},
		{name: "web", mark: must(marks.NewWeb("https://go.dev/doc")), want: "Web: https://go.dev/doc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.mark.String())
		})
	}
}

// sampleMarks is one mark of every kind built here, with every field set
// somewhere; the round-trip tests and the fuzz seed corpus use them.
func sampleMarks() []marks.Mark {
	return []marks.Mark{
		must(marks.NewFileContents("README.md", "./src/main.rs")),
		must(marks.NewDirectoryTree("src", nil)),
		must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"node_modules"}, MaxDepth: ptr(0)})),
		must(marks.NewRustProject(".")),
		&marks.GoProject{Root: "svc", IncludeVendor: true},
		must(marks.NewContext("Decided with Ana: ship v2 first ✓")),
		must(marks.NewCommand("sub", "go", "test", "./...")),
		must(marks.NewCommand("", "true")),
		must(marks.NewWeb("https://example.com/a?b=1")),
	}
}

func TestEveryKindIsRegisteredAndRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range sampleMarks() {
		t.Run(m.Kind()+" "+m.String(), func(t *testing.T) {
			seen[m.Kind()] = true
			data, err := marks.Marshal(m)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), `{"kind":"`+m.Kind()+`"`), "%s", data)
			back, err := marks.Unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, m, back)
			again, err := marks.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(again))
		})
	}
	for _, k := range []string{"file-contents", "directory-tree", "rust-project", "go-project", "context", "command", "web"} {
		assert.Contains(t, marks.Kinds(), k)
		assert.True(t, seen[k], "sampleMarks covers %s", k)
	}
}

func TestMarkJSONFieldNamesAreStable(t *testing.T) {
	tests := []struct {
		name string
		mark marks.Mark
		want string
	}{
		{name: "file-contents", mark: must(marks.NewFileContents("a.go")), want: `{"kind":"file-contents","paths":["a.go"]}`},
		{name: "directory-tree", mark: must(marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"x"}, MaxDepth: ptr(2)})), want: `{"kind":"directory-tree","root":".","skip":["x"],"max_depth":2}`},
		{name: "rust-project", mark: must(marks.NewRustProject(".")), want: `{"kind":"rust-project","root":"."}`},
		{name: "go-project", mark: &marks.GoProject{Root: ".", IncludeVendor: true}, want: `{"kind":"go-project","root":".","include_vendor":true}`},
		{name: "context", mark: must(marks.NewContext("c")), want: `{"kind":"context","description":"c"}`},
		{name: "command", mark: must(marks.NewCommand("d", "p", "a")), want: `{"kind":"command","dir":"d","program":"p","args":["a"]}`},
		{name: "web", mark: must(marks.NewWeb("http://x.org/")), want: `{"kind":"web","url":"http://x.org/"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := marks.Marshal(tt.mark)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(data))
			assert.Equal(t, tt.want, string(data), "field order is part of the stored bytes")
		})
	}
}

func TestUnmarshalRejectsUnknownKind(t *testing.T) {
	_, err := marks.Unmarshal([]byte(`{"kind":"telescope"}`))
	assert.ErrorContains(t, err, `unknown kind "telescope"`)
}

// FuzzMarkUnmarshal: decoding arbitrary bytes never panics, and a value
// that decodes re-encodes to bytes that decode to an equal value (and the
// same bytes again). Key and String must not panic on decoded values,
// which never went through a constructor.
func FuzzMarkUnmarshal(f *testing.F) {
	for _, m := range sampleMarks() {
		data, err := marks.Marshal(m)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"file-contents","paths":[]}`))
	f.Add([]byte(`{"kind":"directory-tree","max_depth":-3}`))
	f.Add([]byte(`{"kind":"web","url":"::"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := marks.Unmarshal(data)
		if err != nil {
			return
		}
		_, _ = m.Key(), m.String()
		_ = marks.Validate(m)
		enc, err := marks.Marshal(m)
		require.NoError(t, err)
		back, err := marks.Unmarshal(enc)
		require.NoError(t, err, "re-decoding %s", enc)
		assert.Equal(t, m, back)
		enc2, err := marks.Marshal(back)
		require.NoError(t, err)
		assert.Equal(t, string(enc), string(enc2))
		assert.True(t, json.Valid(enc))
		assert.Equal(t, m.Key(), back.Key())
	})
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzMarkUnmarshal from sampleMarks")

// TestFuzzCorpusIsCurrent keeps the checked-in seed corpus in step with
// sampleMarks; run with -update-corpus after adding a kind.
func TestFuzzCorpusIsCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMarkUnmarshal")
	for _, m := range sampleMarks() {
		data, err := marks.Marshal(m)
		require.NoError(t, err)
		file := filepath.Join(dir, fmt.Sprintf("%s-%x", m.Kind(), sha256.Sum256(data))[:len(m.Kind())+13])
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *updateCorpus {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(file, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err, "run go test ./marks -run TestFuzzCorpusIsCurrent -update-corpus")
		assert.Equal(t, want, string(got))
	}
}
