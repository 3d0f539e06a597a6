package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInvalidUTF8IsRefusedWithItsOffset: text that is not UTF-8 would be
// stored altered; it is bad input (exit 2), named with its offset.
func TestInvalidUTF8IsRefusedWithItsOffset(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"intent", []string{"voyage", "new", "--as", "ann", "caf\xe9"}, "intent is not valid UTF-8: byte 0xe9 at offset 3"},
		{"identity", []string{"voyage", "new", "--as", "\xffann", "x"}, "identity is not valid UTF-8: byte 0xff at offset 0"},
		{"role", []string{"voyage", "new", "--as", "ann", "--role", "c\x80", "x"}, "role is not valid UTF-8: byte 0x80 at offset 1"},
		{"context", []string{"observe", "context", "call \xc3"}, "description is not valid UTF-8: byte 0xc3 at offset 5"},
		{"file name", []string{"observe", "file-contents", "--read", "a\xff.txt"}, "byte 0xff at offset 1"},
		{"command argument", []string{"observe", "command", "--", "printf", "\xfe"}, "argument 1"},
		{"reading", []string{"bearing", "--reading", "ok\xff"}, "reading is not valid UTF-8: byte 0xff at offset 2"},
		{"feedback", []string{"bearing", "challenge", "1", "--with", "\xff", "--reading", "y"}, "feedback is not valid UTF-8: byte 0xff at offset 0"},
		{"summary", []string{"complete", "--summary", "d\xffne"}, "summary is not valid UTF-8: byte 0xff at offset 1"},
	}
	h.start("utf-8")
	h.ok("observe", "context", "x")
	h.ok("bearing", "--reading", "first")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.fails(2, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assertNoRaw(t, "error", r.Stderr)
		})
	}
	assert.Contains(t, h.ok("voyage", "show"), "Status:    active", "nothing was completed")
	var list []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	assert.Len(t, list, 1, "no voyage was started")
}

func TestNegativeMaxDepthIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("depth")
	for _, d := range []string{"-1", "-7"} {
		r := h.fails(2, "observe", "directory-tree", ".", "--max-depth", d)
		assert.Contains(t, r.Stderr, "max depth "+d+" is negative (0 lists the root only)")
		r = h.fails(2, "observe", "directory-tree", ".", "--max-depth="+d)
		assert.Contains(t, r.Stderr, "is negative")
	}
	assert.Contains(t, h.ok("slate", "list"), "is empty")
	assert.Contains(t, h.ok("observe", "directory-tree", ".", "--max-depth", "0"), "DirectoryTree @ . (max depth 0)")
	assert.Contains(t, h.ok("observe", "directory-tree", "."), "DirectoryTree @ .\u0020(artifact", "unlimited when not given")
}

// TestBearingRefusesHostileObservationFiles: an observation file brings
// nothing that observe's constructors would refuse. Bad input: exit 2,
// naming the file and what is wrong, and nothing is recorded.
func TestBearingRefusesHostileObservationFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hostile-observations", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	h := newHarness(t)
	h.start("hostile files")
	h.ok("observe", "context", "on the slate")
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var meta struct {
				Want string `json:"_want"`
			}
			require.NoError(t, json.Unmarshal(data, &meta))
			h.writeFile(name, string(data))
			r := h.fails(2, "bearing", "--reading", "sealed", "--observation", name)
			assert.Contains(t, r.Stderr, "helm: --observation "+name+": ")
			assert.Contains(t, r.Stderr, meta.Want)
			assert.Contains(t, r.Stderr, "Try: helm observe KIND ... --out FILE, to write one\n")
			assert.NotContains(t, r.Stderr, "s3cret")
		})
	}
	assert.Contains(t, h.ok("slate", "list"), "1 observation", "the slate is untouched")
	assert.Contains(t, h.ok("log"), "Status: active\n", "no bearing was taken")
}

func TestObserveOutIsPrivate(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no permission bits for group and others")
	}
	h := newHarness(t)
	h.start("out")
	h.ok("observe", "context", "secret-ish", "--out", "obs.json")
	info, err := os.Stat(filepath.Join(h.Dir, "obs.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	// A file that is there already keeps the mode its owner gave it.
	shared := filepath.Join(h.Dir, "shared.json")
	require.NoError(t, os.WriteFile(shared, nil, 0o600))
	require.NoError(t, os.Chmod(shared, 0o640))
	r := h.run("observe", "context", "again", "--out", "shared.json")
	require.Equal(t, 0, r.Code, r)
	assert.Empty(t, r.Stderr)
	info, err = os.Stat(shared)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
}

func TestObserveSaysWhichFilesItCouldNotRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("warn")
	h.writeFile("a.txt", "a")
	r := h.run("observe", "file-contents", "--read", "a.txt", "--read", "gone.txt")
	require.Equal(t, 3, r.Code, r)
	assert.Equal(t, "helm: observed, but gone.txt could not be read: no such file or directory\n"+
		"Try: helm slate erase file-contents --read a.txt --read gone.txt"+eraseWhy+"\n", r.Stderr)
	assert.Contains(t, r.Stdout, "Observed FileContents: a.txt, gone.txt")
}

// TestFailedObservationSaysHowToEraseIt: the Try: line after a failed
// look is a command line that erases that observation, on the voyage
// named, without the flags only observing takes.
func TestFailedObservationSaysHowToEraseIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string // after --voyage ID
		want string   // after "Try: helm --voyage ID "
	}{
		{"a file", []string{"observe", "file-contents", "--read", "gone.txt", "--out", "o.json"}, "slate erase file-contents --read gone.txt"},
		{"a command", []string{"observe", "command", "--timeout", "5s", "--", "sh", "-c", "exit 2"}, "slate erase command -- sh -c 'exit 2'"},
		{"a name to quote", []string{"observe", "file-contents", "--read=it's gone.txt"}, "slate erase file-contents '--read=it'\\''s gone.txt'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.start("erase")
			r := h.fails(3, append([]string{"--voyage", id}, tt.args...)...)
			try := "Try: helm --voyage " + id + " " + tt.want + eraseWhy + "\n"
			require.True(t, strings.HasSuffix(r.Stderr, try), "%q\nwant the suffix %q", r.Stderr, try)
			require.Contains(t, h.ok("--voyage", id, "slate", "list"), "1 observation")
			line := strings.TrimSuffix(strings.TrimPrefix(try, "Try: helm "), eraseWhy+"\n")
			assert.Contains(t, h.ok(splitQuoted(line)...), "Erased")
			assert.Contains(t, h.ok("--voyage", id, "slate", "list"), "empty")
		})
	}
}

// splitQuoted splits a command line as sh does one that quotes in single
// quotes and escapes a quote outside them (as eraseLine writes it).
func splitQuoted(line string) []string {
	var words []string
	var w strings.Builder
	in, any, esc := false, false, false
	for _, r := range line {
		switch {
		case r == '\\' && !in:
			esc = true
			any = true
		case esc:
			w.WriteRune(r)
			esc = false
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				words = append(words, w.String())
			}
			w.Reset()
			any = false
		default:
			w.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, w.String())
	}
	return words
}
