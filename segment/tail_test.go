package segment

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingFS counts the bytes read from segment files and the lowest
// offset read, so tests can assert what a scan touched without timing it.
type countingFS struct {
	OSFS
	mu     sync.Mutex
	bytes  int64
	reads  int
	minOff int64
}

type countingFile struct {
	File
	fs   *countingFS
	name string
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := c.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c, name: name}, nil
}

func (c *countingFS) reset() {
	c.mu.Lock()
	c.bytes, c.reads, c.minOff = 0, 0, math.MaxInt64
	c.mu.Unlock()
}

func (c *countingFS) get() (bytes int64, reads int, minOff int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.reads, c.minOff
}

func (f *countingFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(b, off)
	if strings.HasSuffix(f.name, segmentExt) {
		f.fs.mu.Lock()
		f.fs.bytes += int64(n)
		f.fs.reads++
		f.fs.minOff = min(f.fs.minOff, off)
		f.fs.mu.Unlock()
	}
	return n, err
}

// fillLog appends n records of size bytes in batches of 100.
func fillLog(t testing.TB, l *Log, n, size int) {
	t.Helper()
	batch := make([][]byte, 0, 100)
	for i := 0; i < n; i++ {
		batch = append(batch, payload(i, size))
		if len(batch) == cap(batch) || i == n-1 {
			_, err := l.Append(context.Background(), batch...)
			require.NoError(t, err)
			batch = batch[:0]
		}
	}
}

func TestScanFromTailReadsOnlyNewBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := openT(t, dir, &Options{NoSync: true})
	fillLog(t, w, 20000, 100) // ≈ 2.5 MiB, one segment
	cfs := &countingFS{}
	r := openT(t, dir, &Options{NoSync: true, FS: cfs})
	seen := r.Last()
	require.Equal(t, uint64(20000), seen)

	cfs.reset()
	require.NoError(t, r.Scan(ctx, seen+1, func(Record) error { t.Fatal("no new records"); return nil }))
	// The file size no longer says where the data ends (preallocation): a
	// tail scan reads one probe at the tail, which holds the zero header
	// that ends the log, plus whatever new units it covers.
	n, reads, _ := cfs.get()
	assert.Equal(t, 1, reads, "nothing new: one probe")
	assert.LessOrEqual(t, n, int64(readProbe), "nothing new: one probe")

	for round := 0; round < 5; round++ {
		batch := [][]byte{payload(round, 100), payload(round+1, 7), payload(round+2, 300)}
		_, err := w.Append(ctx, batch...)
		require.NoError(t, err)
		want := int64(frameSize(100) + frameSize(7) + frameSize(300))

		cfs.reset()
		var got []uint64
		require.NoError(t, r.Scan(ctx, seen+1, func(rec Record) error { got = append(got, rec.Seq); return nil }))
		assert.Equal(t, []uint64{seen + 1, seen + 2, seen + 3}, got)
		n, reads, _ := cfs.get()
		assert.Equal(t, 1, reads, "round %d: a tail scan reads the new unit with one probe", round)
		assert.GreaterOrEqual(t, n, want+frameHeaderSize, "round %d: the new unit and the header after it", round)
		assert.LessOrEqual(t, n, int64(readProbe), "round %d", round)
		seen += 3
	}

	// A Commit whose decide scans from the Log's previous tail, after another
	// Log appended: the catch-up and the Tx.Scan each read the new bytes once.
	// (The first Commit of a Log reads the free space once, as Open used
	// to: it is left out.)
	cutNow(t, r)
	for round := 0; round < 3; round++ {
		_, err := w.Append(ctx, payload(round, 100), payload(round, 100))
		require.NoError(t, err)
		cfs.reset()
		var got []uint64
		_, err = r.Commit(ctx, func(tx *Tx) ([][]byte, error) {
			require.NoError(t, tx.Scan(seen+1, func(rec Record) error { got = append(got, rec.Seq); return nil }))
			return [][]byte{payload(round, 50)}, nil
		})
		require.NoError(t, err)
		assert.Equal(t, []uint64{seen + 1, seen + 2}, got)
		n, reads, _ := cfs.get()
		assert.Equal(t, 2, reads, "round %d: catch-up and Tx.Scan each read one probe at the tail", round)
		assert.LessOrEqual(t, n, int64(2*readProbe), "round %d", round)
		seen += 3
	}

	// A scan from an arbitrary seq starts at most indexSpacing (plus a unit)
	// before it; Open's recovery walked the segment and indexed it.
	for _, from := range []uint64{5000, 12345, 19999} {
		cfs.reset()
		first := uint64(0)
		stop := fmt.Errorf("stop")
		err := r.Scan(ctx, from, func(rec Record) error { first = rec.Seq; return stop })
		require.ErrorIs(t, err, stop)
		assert.Equal(t, from, first)
		_, _, minOff := cfs.get()
		recOff := int64(fileHeaderSize) + int64(from-1)*int64(frameSize(100))
		assert.GreaterOrEqual(t, minOff, recOff-indexSpacing-100*int64(frameSize(100)), "from %d", from)
	}

	// Everything is still there and verified from the start.
	assert.Len(t, readAll(t, r), int(seen))
	_, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
}

func TestTailScanStillVerifiesNewBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := openT(t, dir, &Options{NoSync: true})
	fillLog(t, w, 500, 40)
	r := openT(t, dir, &Options{NoSync: true})
	seen := r.Last()
	require.NoError(t, r.Scan(ctx, seen+1, func(Record) error { return nil }))
	_, err := w.Append(ctx, payload(1, 40))
	require.NoError(t, err)
	_, err = w.Append(ctx, payload(2, 40))
	require.NoError(t, err)
	// Flip a data bit of the first new record: valid data follows it.
	f, err := os.OpenFile(dir+"/"+segmentName(1), os.O_RDWR, 0)
	require.NoError(t, err)
	off := int64(fileHeaderSize) + int64(seen)*int64(frameSize(40)) + frameHeaderSize + 3
	b := []byte{0}
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 1
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	err = r.Scan(ctx, seen+1, func(Record) error { return nil })
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestTailScanFollowsRotationByAnotherLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := openT(t, dir, &Options{NoSync: true, SegmentSize: 4096})
	r := openT(t, dir, &Options{NoSync: true, SegmentSize: 4096})
	seen := uint64(0)
	for round := 0; round < 40; round++ {
		for i := 0; i < round%4; i++ {
			_, err := w.Append(ctx, payload(round, 300), payload(i, 200))
			require.NoError(t, err)
		}
		var got []uint64
		require.NoError(t, r.Scan(ctx, seen+1, func(rec Record) error { got = append(got, rec.Seq); return nil }))
		require.Len(t, got, 2*(round%4))
		for i, s := range got {
			require.Equal(t, seen+uint64(i)+1, s)
		}
		seen += uint64(len(got))
		first, err := r.Commit(ctx, func(tx *Tx) ([][]byte, error) {
			require.Equal(t, seen, tx.Last())
			return [][]byte{payload(round, 500)}, nil
		})
		require.NoError(t, err)
		require.Equal(t, seen+1, first)
		seen++
	}
	assert.Len(t, readAll(t, w), int(seen))
	_, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
}
