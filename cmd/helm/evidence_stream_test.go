package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

// renderSkimmed renders the sighting data holds as sighting show does,
// skimmed with strings longer than long left in the stored JSON, read a
// byte at a time.
func renderSkimmed(t *testing.T, data []byte, long int) string {
	t.Helper()
	sk, err := sighting.Skim(func() (io.ReadCloser, error) {
		return io.NopCloser(iotest.OneByteReader(bytes.NewReader(data))), nil
	}, sighting.SkimOptions{Long: long, Members: streamedMembers})
	require.NoError(t, err)
	defer sk.Close()
	var b strings.Builder
	require.NoError(t, renderSighting(&b, sk, "  "))
	return b.String()
}

// TestStreamedRenderIsTheWholeRender: a sighting whose texts are streamed
// from the store renders exactly as one decoded whole (every string
// short: the sighting as Unmarshal gives it), whatever the texts hold.
func TestStreamedRenderIsTheWholeRender(t *testing.T) {
	exit := 1
	text := "package widget\n\n// \"quoted\" \\ tab\there <b> & é 😀 \u2028 \x1b[31mred\n\nfunc init() {}\n"
	fc := func(path, text string) sighting.FileContents {
		return sighting.FileContents{Path: path, Content: sighting.FileContent{Type: sighting.ContentText, Text: text, SizeBytes: uint64(len(text))}}
	}
	for _, c := range []struct {
		name string
		s    sighting.Sighting
	}{
		{"file contents", &sighting.Files{Contents: []sighting.FileContents{
			fc("a.go", text), fc("nl", "\n"), fc("nls", "\n\n\n"), fc("no-final-newline", "one\ntwo"), fc("empty", ""),
			{Path: "b.bin", Content: sighting.FileContent{Type: sighting.ContentBinary, SizeBytes: 9}},
			{Path: "gone", Content: sighting.FileContent{Type: sighting.ContentError, Error: "no such file"}},
			fc("long.go", strings.Repeat(text, 50)),
		}}},
		{"a command", &sighting.Command{ExitCode: &exit, DurationMS: 12, Stdout: strings.Repeat("ok\n", 100), Stderr: "one line, no newline " + strings.Repeat("x", 300)}},
		{"context", &sighting.Context{Description: text}},
		{"a directory tree", &sighting.DirectoryTree{Listings: []sighting.DirectoryListing{{Path: ".", Entries: []sighting.DirectoryEntry{{Name: "src", IsDir: true}, {Name: "a.go"}}}}}},
		{"a web answer, field by field", &sighting.Web{URL: "https://example.com/" + strings.Repeat("p", 200), Status: 200,
			Headers:   map[string][]string{"Content-Type": {"text/plain"}, "X-Long": {strings.Repeat("v", 300)}},
			Redirects: []string{"https://example.com/a", strings.Repeat("r", 300)},
			Body:      sighting.FileContent{Type: sighting.ContentText, Text: text + strings.Repeat("line\n", 40), SizeBytes: 99}}},
	} {
		data, err := sighting.Marshal(c.s)
		require.NoError(t, err)
		whole := renderSkimmed(t, data, 1<<30)
		require.NotEmpty(t, whole)
		for _, long := range []int{1, 5, 64, 512} {
			assert.Equal(t, whole, renderSkimmed(t, data, long), "%s: strings longer than %d streamed", c.name, long)
		}
	}
}

// TestPageWriterPagesAsTheWholeText: a page taken from a text as it is
// written (pageWriter) is the page of the whole text, note included, for
// every offset and limit; past countAhead, the note says more follow.
func TestPageWriterPagesAsTheWholeText(t *testing.T) {
	text := strings.Repeat("ab€😀\n", 40)
	next := func(n int) string { return "again at " + itoa(n) }
	for _, limit := range []int{1, 2, 3, 7, 64, len(text), len(text) + 9} {
		for offset := 0; offset <= len(text); offset += 3 {
			wantBody, wantNote, wantErr := page(text, offset, limit, next)
			pw := newPageWriter(offset, limit)
			var err error
			for i := 0; i < len(text) && err == nil; i += 5 { // written in pieces
				_, err = pw.Write([]byte(text[i:min(i+5, len(text))]))
			}
			body, note, err := pw.page(err, offset, limit, next)
			assert.Equal(t, wantErr, err, "offset %d, limit %d", offset, limit)
			assert.Equal(t, wantBody, body, "offset %d, limit %d", offset, limit)
			assert.Equal(t, wantNote, note, "offset %d, limit %d", offset, limit)
		}
	}
	// A text of more than countAhead past its page is not written to
	// its end.
	pw := newPageWriter(10, 20)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	var err error
	written := 0
	for written < 64<<20 && err == nil {
		_, err = pw.Write(chunk)
		written += len(chunk)
	}
	require.ErrorIs(t, err, errPageFull)
	assert.Less(t, written, 8<<20, "the writer stopped soon after the page")
	body, note, err := pw.page(err, 10, 20, next)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", 20), body)
	assert.Equal(t, "[helm: bytes 10 to 30 shown, more follow; again at 30 for the rest]", note)
	_, _, err = newPageWriter(100, 5).page(nil, 100, 5, next)
	assert.ErrorContains(t, err, "offset 100 is outside the text (0 bytes)")
}

// TestDamagedSightingIsNotShown: a sighting whose stored bytes are
// damaged is read to its end and checked before any of it is shown, by
// every form that shows it.
func TestDamagedSightingIsNotShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("show me")
	// Many distinct lines compress too little to be kept in the event
	// log: the sighting goes to the pack file, damaged below.
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("line " + itoa(i*7919%100003) + "\n")
	}
	h.writeFile("a.txt", b.String())
	h.ok("observe", "file-contents", "--read", "a.txt")
	pack := filepath.Join(h.Home, "voyages", id, "artifacts.pack")
	data, err := os.ReadFile(pack)
	require.NoError(t, err)
	data[len(data)-3] ^= 0xff
	require.NoError(t, os.WriteFile(pack, data, 0o600))
	for _, args := range [][]string{{"sighting", "show", "file-contents"}, {"sighting", "show", "file-contents", "--json"}} {
		r := h.fails(1, args...)
		assert.Empty(t, r.Stdout, "%v: nothing shown", args)
		assert.Contains(t, r.Stderr, "damaged", "%v", args)
		assert.Contains(t, r.Stderr, id, "%v: the voyage named", args)
	}
}
