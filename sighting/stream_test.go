package sighting_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

// textSource serves a text in pieces of random sizes, so that runes split
// across reads; after fail bytes it fails with notText.
type textSource struct {
	text    string
	seed    uint64
	fail    int
	notText *sighting.NotTextError
}

func (s textSource) OpenText() (io.ReadCloser, error) {
	return io.NopCloser(&choppy{s: s, rnd: rand.New(rand.NewPCG(s.seed, 1))}), nil
}

type choppy struct {
	s   textSource
	off int
	rnd *rand.Rand
}

func (c *choppy) Read(p []byte) (int, error) {
	if c.s.notText != nil && c.off >= c.s.fail {
		return 0, c.s.notText
	}
	if c.off == len(c.s.text) {
		return 0, io.EOF
	}
	n := min(len(p), 1+c.rnd.IntN(7), len(c.s.text)-c.off)
	copy(p, c.s.text[c.off:c.off+n])
	c.off += n
	return n, nil
}

// texts that exercise every escape encoding/json makes.
var streamTexts = []string{
	"plain text\n",
	"quotes \" and \\ backslashes, <html> & \u2028 \u2029 lines",
	"control \x01\x1f\b\f\r\t bytes, and ünïcödé 日本語 🚢",
	"",
	"invalid \xff\xfe utf-8 and a cut rune \xe6\x97",
}

func TestEncodeWritesWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	for i, text := range streamTexts {
		inMemory := &sighting.Files{Contents: []sighting.FileContents{
			{Path: "a <b>.txt", Content: sighting.TextContent("small")},
			{Path: "big.txt", Content: sighting.TextContent(text)},
			{Path: "x.bin", Content: sighting.BinaryContent(3)},
			{Path: "big2.txt", Content: sighting.TextContent(text + text)},
		}}
		streamed := &sighting.Files{Contents: []sighting.FileContents{
			inMemory.Contents[0],
			{Path: "big.txt", Content: sighting.FileContent{Type: sighting.ContentText, Source: textSource{text: text, seed: uint64(i)}}},
			inMemory.Contents[2],
			{Path: "big2.txt", Content: sighting.FileContent{Type: sighting.ContentText, Source: textSource{text: text + text, seed: uint64(i) + 7}}},
		}}
		want, err := sighting.Marshal(inMemory)
		require.NoError(t, err)
		var got bytes.Buffer
		require.NoError(t, sighting.Encode(&got, streamed, nil))
		assert.Equal(t, string(want), got.String(), "text %q", text)
		// Marshal reads the sources whole.
		data, err := sighting.Marshal(streamed)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(data))
	}
}

func TestEncodeRewritesAroundTheTexts(t *testing.T) {
	t.Parallel()
	s := &sighting.Files{Contents: []sighting.FileContents{
		{Path: "secret-path", Content: sighting.FileContent{Type: sighting.ContentText, Source: textSource{text: "a secret text"}}},
	}}
	var got bytes.Buffer
	err := sighting.Encode(&got, s, &sighting.EncodeOptions{
		JSON: func(doc []byte) []byte { return bytes.ReplaceAll(doc, []byte("secret"), []byte("hidden")) },
		Text: func(dst io.Writer) io.WriteCloser { return upper{dst} },
	})
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"file-contents","contents":[{"path":"hidden-path","content":{"type":"text","text":"A SECRET TEXT","size_bytes":13}}]}`, got.String())
}

type upper struct{ w io.Writer }

func (u upper) Write(p []byte) (int, error) { return u.w.Write(bytes.ToUpper(p)) }
func (u upper) Close() error                { return nil }

func TestEncodeReturnsWhatTheSourceTurnedOutToBe(t *testing.T) {
	t.Parallel()
	notText := &sighting.NotTextError{Content: sighting.BinaryContent(99)}
	s := &sighting.Files{Contents: []sighting.FileContents{
		{Path: "x", Content: sighting.FileContent{Type: sighting.ContentText, Source: textSource{text: strings.Repeat("a", 50), fail: 20, notText: notText}}},
	}}
	err := sighting.Encode(io.Discard, s, nil)
	var nt *sighting.NotTextError
	require.True(t, errors.As(err, &nt), "got %v", err)
	assert.Equal(t, sighting.BinaryContent(99), nt.Content)
	_, err = sighting.Marshal(s)
	require.ErrorAs(t, err, &nt)
}

// FuzzEscape checks that a streamed text, cut anywhere, is escaped as
// encoding/json escapes the same text in memory.
func FuzzEscape(f *testing.F) {
	for _, s := range streamTexts {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		s := &sighting.Files{Contents: []sighting.FileContents{{Path: "p", Content: sighting.FileContent{Type: sighting.ContentText, Source: textSource{text: text, seed: seed}}}}}
		var got bytes.Buffer
		require.NoError(t, sighting.Encode(&got, s, nil))
		want, err := sighting.Marshal(&sighting.Files{Contents: []sighting.FileContents{{Path: "p", Content: sighting.TextContent(text)}}})
		require.NoError(t, err)
		require.Equal(t, string(want), got.String(), "text %q", text)
	})
}

func TestStoredTextReadsATextBackOutOfTheJSON(t *testing.T) {
	t.Parallel()
	texts := append([]string{"after a \"content\":{ lookalike", "🚢 \xed\xa0\xbd non-BMP and \\u escapes \u2028"}, streamTexts...)
	var contents []sighting.FileContents
	for i, text := range texts {
		contents = append(contents, sighting.FileContents{Path: fmt.Sprintf(`"content":{%d`, i), Content: sighting.TextContent(text)})
		contents = append(contents, sighting.FileContents{Path: "b", Content: sighting.BinaryContent(1)})
	}
	data, err := sighting.Marshal(&sighting.Files{Contents: contents})
	require.NoError(t, err)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	for i, text := range texts {
		if text == "" {
			continue // no text member to find: an empty text is not streamed
		}
		r, err := sighting.StoredText(open, 2*i, uint64(len(text))).OpenText()
		require.NoError(t, err)
		got, err := io.ReadAll(iotest.OneByteReader(r))
		require.NoError(t, err)
		var want string // what encoding/json makes of the text
		quoted, _ := json.Marshal(text)
		require.NoError(t, json.Unmarshal(quoted, &want))
		assert.Equal(t, want, string(got), "text %d", i)
		require.NoError(t, r.Close())
	}
	_, err = sighting.StoredText(open, 1, 0).OpenText()
	assert.ErrorContains(t, err, "content 1 in the stored JSON is not text")
	_, err = sighting.StoredText(open, len(contents), 0).OpenText()
	assert.ErrorContains(t, err, "find content")

	// The stored form's own error at its end is the text's.
	damage := errors.New("damaged at the end")
	r, err := sighting.StoredText(func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(damage))), nil
	}, 0, 0).OpenText()
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, damage)
}

// FuzzStoredText reads a text back out of a sighting's JSON: a text
// stored by Marshal comes back as encoding/json decodes it, and any bytes
// at all are read without a panic.
func FuzzStoredText(f *testing.F) {
	for _, s := range streamTexts {
		f.Add(s, []byte(`{"contents":[{"content":{"type":"text","text":"`+s))
	}
	f.Fuzz(func(t *testing.T, text string, raw []byte) {
		if text != "" {
			data, err := sighting.Marshal(&sighting.Files{Contents: []sighting.FileContents{{Path: "p", Content: sighting.TextContent(text)}}})
			require.NoError(t, err)
			r, err := sighting.StoredText(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, 0, 0).OpenText()
			require.NoError(t, err)
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			var want string
			quoted, _ := json.Marshal(text)
			require.NoError(t, json.Unmarshal(quoted, &want))
			require.Equal(t, want, string(got))
		}
		r, err := sighting.StoredText(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }, 0, 0).OpenText()
		if err == nil {
			io.ReadAll(r)
			r.Close()
		}
	})
}
