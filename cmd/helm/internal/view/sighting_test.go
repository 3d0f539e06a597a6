package view

import (
	"bytes"
	"io"
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
	}, &sighting.SkimOptions{Long: long, Members: streamedMembers})
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
