package sighting_test

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

// opener opens data, a read of one byte at a time when tiny, so that
// every string and escape is split across reads.
func opener(data []byte, tiny bool) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		var r io.Reader = bytes.NewReader(data)
		if tiny {
			r = iotest.OneByteReader(r)
		}
		return io.NopCloser(r), nil
	}
}

// standIn finds the stand-ins in a skimmed sighting's JSON.
var standIn = regexp.MustCompile(`"\\u0000helm-long-[0-9a-f]+-[0-9]+\\u0000"`)

func TestSkimLeavesLongStringsInTheStoredJSON(t *testing.T) {
	t.Parallel()
	exit := 3
	text := "package widget\n\n// \"quoted\" \\ back\tslash <html> & \u2028 é 😀 \x01\nfunc init() {}\n"
	for _, c := range []struct {
		name string
		s    sighting.Sighting
	}{
		{"file contents", &sighting.Files{Contents: []sighting.FileContents{
			{Path: "a.go", Content: sighting.FileContent{Type: sighting.ContentText, Text: text, SizeBytes: uint64(len(text))}},
			{Path: "b.bin", Content: sighting.FileContent{Type: sighting.ContentBinary, SizeBytes: 9}},
			{Path: "c.go", Content: sighting.FileContent{Type: sighting.ContentText, Text: strings.Repeat(text, 40), SizeBytes: uint64(40 * len(text))}},
		}}},
		{"a command", &sighting.Command{ExitCode: &exit, Stdout: strings.Repeat("ok\n", 100), Stderr: "one line, no newline"}},
		{"context", &sighting.Context{Description: text}},
	} {
		data, err := sighting.Marshal(c.s)
		require.NoError(t, err)
		for _, long := range []int{1, 16, 200, 1 << 20} {
			for _, tiny := range []bool{false, true} {
				sk, err := sighting.Skim(opener(data, tiny), &sighting.SkimOptions{Long: long})
				require.NoError(t, err, "%s, long %d", c.name, long)
				// Each stand-in, replaced by its text as Text reads it and
				// encoded again, gives back the stored JSON.
				var texts []string
				for _, m := range standIn.FindAll(sk.Doc, -1) {
					var s string
					require.NoError(t, jsonUnmarshal(m, &s))
					assert.True(t, sk.IsLong(s))
					r, err := sk.Text(s)
					require.NoError(t, err)
					b, err := io.ReadAll(r)
					require.NoError(t, err)
					assert.Equal(t, bytes.Contains(b, []byte("\n")), sk.HasNewline(s), "%s: newline of a long string", c.name)
					texts = append(texts, string(b))
				}
				i := 0
				rebuilt := standIn.ReplaceAllFunc(sk.Doc, func([]byte) []byte {
					b, err := jsonMarshal(texts[i])
					require.NoError(t, err)
					i++
					return b
				})
				assert.Equal(t, string(data), string(rebuilt), "%s, long %d, tiny reads %v", c.name, long, tiny)
				if long == 1<<20 {
					assert.Empty(t, texts, "nothing is long")
					want, err := sighting.Unmarshal(data)
					require.NoError(t, err)
					assert.Equal(t, want, sk.Sighting)
				}
				require.NoError(t, sk.Close())
			}
		}
	}
}

func TestSkimReadsLongStringsInAnyOrder(t *testing.T) {
	t.Parallel()
	s := &sighting.Command{Stdout: strings.Repeat("out\n", 50), Stderr: strings.Repeat("err\\\n", 50)}
	data, err := sighting.Marshal(s)
	require.NoError(t, err)
	sk, err := sighting.Skim(opener(data, false), &sighting.SkimOptions{Long: 8})
	require.NoError(t, err)
	defer sk.Close()
	got := sk.Sighting.(*sighting.Command)
	for _, want := range []struct{ standIn, text string }{{got.Stderr, s.Stderr}, {got.Stdout, s.Stdout}, {got.Stderr, s.Stderr}} {
		r, err := sk.Text(want.standIn)
		require.NoError(t, err)
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, want.text, string(b))
	}
}

func TestSkimFindsANewlineWrittenAsAUnicodeEscape(t *testing.T) {
	t.Parallel()
	data := []byte(`{"kind":"context","description":"one` + strings.Repeat("x", 100) + `\u000Atwo"}`)
	sk, err := sighting.Skim(opener(data, true), &sighting.SkimOptions{Long: 10})
	require.NoError(t, err)
	d := sk.Sighting.(*sighting.Context).Description
	assert.True(t, sk.IsLong(d))
	assert.True(t, sk.HasNewline(d))
}

func TestSkimRefusesASightingTooLargeToDecode(t *testing.T) {
	t.Parallel()
	tree := &sighting.DirectoryTree{}
	for range 1000 {
		tree.Listings = append(tree.Listings, sighting.DirectoryListing{Path: "a/b/c"})
	}
	data, err := sighting.Marshal(tree)
	require.NoError(t, err)
	_, err = sighting.Skim(opener(data, false), &sighting.SkimOptions{MaxDoc: 4096})
	assert.ErrorIs(t, err, sighting.ErrTooLarge)
}

func TestSkimReturnsTheStoredFormsError(t *testing.T) {
	t.Parallel()
	data, err := sighting.Marshal(&sighting.Context{Description: "hi"})
	require.NoError(t, err)
	damaged := io.ErrClosedPipe
	_, err = sighting.Skim(func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(damaged))), nil
	}, nil)
	assert.ErrorIs(t, err, damaged, "a stored form that fails at its end fails the skim")
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func jsonMarshal(v any) ([]byte, error)      { return json.Marshal(v) }

func TestSkimLeavesOnlyTheMembersNamed(t *testing.T) {
	t.Parallel()
	s := &sighting.Command{Stdout: strings.Repeat("o", 100), Stderr: strings.Repeat("e", 100), Dir: strings.Repeat("d", 100)}
	data, err := sighting.Marshal(s)
	require.NoError(t, err)
	sk, err := sighting.Skim(opener(data, false), &sighting.SkimOptions{Long: 10, Members: []string{"stdout"}})
	require.NoError(t, err)
	got := sk.Sighting.(*sighting.Command)
	assert.True(t, sk.IsLong(got.Stdout))
	assert.Equal(t, s.Stderr, got.Stderr)
	assert.Equal(t, s.Dir, got.Dir)
}
