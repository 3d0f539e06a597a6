package mcpserver

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPageWriterPagesAsTheWholeText: a page taken from a text as it is
// written (pageWriter) is the page of the whole text, note included, for
// every offset and limit; past countAhead, the note says more follow.
func TestPageWriterPagesAsTheWholeText(t *testing.T) {
	text := strings.Repeat("ab€😀\n", 40)
	next := func(n int) string { return "again at " + strconv.Itoa(n) }
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
