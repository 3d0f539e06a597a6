package marks_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// TestLargeFilesAreStreamedAsTheyWouldBeRead: with Env.StreamAbove, a
// large file's text is a source, and encoding the sighting writes what
// reading it whole would have; a small one is read as before.
func TestLargeFilesAreStreamedAsTheyWouldBeRead(t *testing.T) {
	dir := t.TempDir()
	// Runes of every width, so the reader's chunks split some of them.
	big := strings.Repeat("line <ü> 日本 🚢 \"q\"\t\n", 40000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small"), 0o600))
	m, err := marks.NewFileContents("big.txt", "small.txt", "missing.txt")
	require.NoError(t, err)

	whole, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir, StreamAbove: 1 << 10})
	require.NoError(t, err)
	files := s.(*sighting.Files)
	big0 := files.Contents[0].Content
	require.NotNil(t, big0.Source, "the large file is a source")
	assert.Empty(t, big0.Text)
	assert.Equal(t, uint64(len(big)), big0.SizeBytes)
	assert.Nil(t, files.Contents[1].Content.Source, "the small one is read")
	assert.Equal(t, sighting.ContentError, files.Contents[2].Content.Type)

	want, err := sighting.Marshal(whole)
	require.NoError(t, err)
	var got bytes.Buffer
	require.NoError(t, sighting.Encode(&got, s, nil))
	assert.True(t, bytes.Equal(want, got.Bytes()), "the streamed sighting is the one read whole")
}

// TestAStreamedFileThatIsNotTextSaysWhatItIs: a file that turns out to be
// binary part way, or is gone, fails the stream with what it holds.
func TestAStreamedFileThatIsNotTextSaysWhatItIs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	text := strings.Repeat("text ", 300<<10)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	m, err := marks.NewFileContents("f")
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir, StreamAbove: 1 << 10})
	require.NoError(t, err)

	tests := []struct {
		name    string
		content []byte // the file when the sighting is stored; nil: gone
		want    sighting.FileContent
	}{
		{"a NUL byte past the first megabyte", append([]byte(text), 0, 'x'), sighting.BinaryContent(uint64(len(text) + 2))},
		{"invalid UTF-8 at the end", append([]byte(text), 0xe6, 0x97), sighting.BinaryContent(uint64(len(text) + 2))},
		{"gone", nil, sighting.ErrorContent("no such file or directory")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.content == nil {
				require.NoError(t, os.Remove(path))
			} else {
				require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			}
			err := sighting.Encode(&bytes.Buffer{}, s, nil)
			var nt *sighting.NotTextError
			require.True(t, errors.As(err, &nt), "got %v", err)
			assert.Equal(t, tt.want, nt.Content)
		})
	}
}

// TestAStreamedFileReadsUnderItsObservationsContext: the reader of a large
// file's text stops counting a binary file's rest once the context of the
// observation that found the file has ended, as a file read whole does.
func TestAStreamedFileReadsUnderItsObservationsContext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	text := strings.Repeat("text ", 300<<10)
	m, err := marks.NewFileContents("f")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := m.Observe(ctx, &marks.Env{Dir: dir, StreamAbove: 1 << 10})
	require.NoError(t, err)
	// Binary from its first bytes once the sighting is stored: what is
	// left is counted, under the observation's context.
	require.NoError(t, os.WriteFile(path, append([]byte{0}, text...), 0o600))

	tests := []struct {
		name   string
		cancel bool
		want   sighting.FileContent
	}{
		{"while the observation's context lives", false, sighting.BinaryContent(uint64(len(text) + 1))},
		{"once it has ended", true, sighting.ErrorContent("interrupted: " + context.Canceled.Error())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cancel {
				cancel()
			}
			err := sighting.Encode(&bytes.Buffer{}, s, nil)
			var nt *sighting.NotTextError
			require.True(t, errors.As(err, &nt), "got %v", err)
			assert.Equal(t, tt.want, nt.Content)
		})
	}
}
