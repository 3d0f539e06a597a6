package marks_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

func observeFiles(t *testing.T, dir string, paths ...string) *sighting.Files {
	t.Helper()
	m, err := marks.NewFileContents(paths...)
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
	require.NoError(t, err)
	files, ok := s.(*sighting.Files)
	require.True(t, ok, "sighting is %T", s)
	require.Len(t, files.Contents, len(m.Paths))
	return files
}

func TestFileContentsReadsTextBinaryAndErrorsPerFile(t *testing.T) {
	dir := t.TempDir()
	// A multi-byte rune straddling the 256 KiB read chunk must stay text.
	straddle := strings.Repeat("a", 256<<10-1) + "é" + strings.Repeat("ü", 1000)
	tree(t, dir, map[string]string{
		"a.txt":        "hello\n",
		"empty.txt":    "",
		"bin.dat":      "\xff\xfe\x00\x01",
		"nul.txt":      "text\x00with nul",
		"sub/":         "",
		"straddle.txt": straddle,
	})
	require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link.txt")))
	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))

	tests := []struct {
		name string
		path string
		want sighting.FileContent
	}{
		{name: "text", path: "a.txt", want: sighting.TextContent("hello\n")},
		{name: "empty file is text", path: "empty.txt", want: sighting.TextContent("")},
		{name: "invalid UTF-8 is binary", path: "bin.dat", want: sighting.BinaryContent(4)},
		{name: "NUL byte is binary", path: "nul.txt", want: sighting.BinaryContent(13)},
		{name: "missing", path: "nope.txt", want: sighting.ErrorContent("no such file or directory")},
		{name: "directory", path: "sub", want: sighting.ErrorContent("is a directory")},
		{name: "symlink is followed for reading", path: "link.txt", want: sighting.TextContent("hello\n")},
		{name: "symlink loop", path: "loop", want: sighting.ErrorContent("too many levels of symbolic links")},
		{name: "rune across read chunks", path: "straddle.txt", want: sighting.TextContent(straddle)},
		{name: "absolute path ignores Env.Dir", path: filepath.Join(dir, "a.txt"), want: sighting.TextContent("hello\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := observeFiles(t, dir, tt.path)
			assert.Equal(t, tt.path, got.Contents[0].Path)
			assert.Equal(t, tt.want, got.Contents[0].Content)
		})
	}

	t.Run("one bad file does not fail the others", func(t *testing.T) {
		got := observeFiles(t, dir, "a.txt", "nope.txt", "./bin.dat")
		assert.Equal(t, []string{"a.txt", "nope.txt", "bin.dat"},
			[]string{got.Contents[0].Path, got.Contents[1].Path, got.Contents[2].Path})
		assert.Equal(t, sighting.ContentText, got.Contents[0].Content.Type)
		assert.Equal(t, sighting.ContentError, got.Contents[1].Content.Type)
		assert.Equal(t, sighting.ContentBinary, got.Contents[2].Content.Type)
	})

	t.Run("unreadable file", func(t *testing.T) {
		skipIfRoot(t)
		p := filepath.Join(dir, "secret.txt")
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o000))
		got := observeFiles(t, dir, "secret.txt")
		assert.Equal(t, sighting.ErrorContent("permission denied"), got.Contents[0].Content)
	})

	t.Run("non-UTF-8 file name on disk is read through a directory walk", func(t *testing.T) {
		// Paths given to a mark must be text; such files are reached by
		// listing (see TestDirectoryTreeRecordsRawNames).
		_, err := marks.NewFileContents("bad\xffname")
		assert.ErrorIs(t, err, marks.ErrInvalid)
	})

	t.Run("10 MB binary is counted, not kept", func(t *testing.T) {
		big := bytes.Repeat([]byte{0xff, 0x00, 0x42, 0x17}, 10<<20/4)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
		got := observeFiles(t, dir, "big.bin")
		assert.Equal(t, sighting.BinaryContent(10<<20), got.Contents[0].Content)
	})
}

func TestNewFileContentsValidatesAndCleans(t *testing.T) {
	tests := []struct {
		name    string
		paths   []string
		want    []string
		wantErr string
	}{
		{name: "cleans and dedupes in order", paths: []string{"./b.go", "a.go", "b.go", "dir/"}, want: []string{"b.go", "a.go", "dir"}},
		{name: "no paths", wantErr: "no files to read"},
		{name: "empty path", paths: []string{""}, wantErr: "empty path"},
		{name: "NUL", paths: []string{"a\x00b"}, wantErr: "NUL"},
		{name: "not UTF-8", paths: []string{"\xff"}, wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := marks.NewFileContents(tt.paths...)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, marks.ErrInvalid)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.Paths)
		})
	}
}

func TestFileContentsStopsWhenCancelled(t *testing.T) {
	m, err := marks.NewFileContents("a")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Observe(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
}
