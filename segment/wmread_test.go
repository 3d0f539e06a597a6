package segment

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readCountFS counts the reads of WATERMARK.
type readCountFS struct {
	OSFS
	mu    sync.Mutex
	reads int
}

type readCountFile struct {
	File
	fs   *readCountFS
	name string
}

func (f *readCountFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &readCountFile{File: file, fs: f, name: name}, nil
}

func (f *readCountFile) ReadAt(b []byte, off int64) (int, error) {
	if strings.HasPrefix(filepath.Base(f.name), watermarkName) { // created as WATERMARK.tmp
		f.fs.mu.Lock()
		f.fs.reads++
		f.fs.mu.Unlock()
	}
	return f.File.ReadAt(b, off)
}

func (f *readCountFS) watermarkReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// requireSlots checks that WATERMARK's two slots hold the ends of the
// last two commits, want and want-1.
func requireSlots(t *testing.T, dir string, want uint64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, watermarkName))
	require.NoError(t, err)
	s0, ok0 := decodeWatermark(b[0:])
	s1, ok1 := decodeWatermark(b[watermarkSlot:])
	require.True(t, ok0 && ok1, "both slots check out")
	assert.ElementsMatch(t, []uint64{want - 1, want}, []uint64{s0.last, s1.last}, "the last two commits")
}

// A Log that commits again, with nobody appending in between, writes the
// watermark without reading it back (it releases the writer lock between
// commits, but knows which slot it wrote last), and the slots still
// alternate.
func TestWatermarkIsNotReadBackBetweenCommitsOfOneLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := &readCountFS{}
	l := openT(t, dir, &Options{NoSync: true, FS: fs})
	defer l.Close()
	_, err := l.Append(ctx, payload(0, 40))
	require.NoError(t, err)
	_, err = l.Append(ctx, payload(1, 40))
	require.NoError(t, err)
	before := fs.watermarkReads()
	for i := 2; i < 8; i++ {
		_, err := l.Append(ctx, payload(i, 40))
		require.NoError(t, err)
		requireSlots(t, dir, uint64(i+1))
	}
	assert.Equal(t, before, fs.watermarkReads(), "no read of WATERMARK per commit")
}

// Two Logs on one directory (two processes) that take turns: each finds
// the other appended, reads the watermark back, and overwrites the older
// slot, so the slots always hold the last two commits.
func TestWatermarkSlotsAlternateWhenLogsTakeTurns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := openT(t, dir, &Options{NoSync: true})
	defer a.Close()
	b := openT(t, dir, &Options{NoSync: true})
	defer b.Close()
	for i := range 8 {
		l := a
		if i%3 == 2 { // a, a, b, a, a, b, ...: some turns by the same Log
			l = b
		}
		_, err := l.Append(ctx, payload(i, 40))
		require.NoError(t, err)
		if i > 0 {
			requireSlots(t, dir, uint64(i+1))
		}
	}
}
