package segment

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blobby makes records of which every third is a large "blob".
func blobby(i int) []byte {
	if i%3 == 0 {
		return append([]byte(fmt.Sprintf("blob-%d:", i)), bytes.Repeat([]byte{byte(i)}, 3000)...)
	}
	return []byte(fmt.Sprintf("event-%d", i))
}

func isBlob(r Record) bool { return bytes.HasPrefix(r.Data, []byte("blob-")) }

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	for _, s := range segs {
		fi, err := os.Stat(filepath.Join(dir, segmentName(s)))
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

func TestReclaimFreesTheBytesAndKeepsTheChain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(ctx, dir, &Options{SegmentSize: 32 << 10, Identity: "voyage-1"})
	require.NoError(t, err)
	const n = 60
	// A second handle scans half way, so it holds a position (seq 31) in
	// a file that Reclaim replaces.
	other, err := Open(ctx, dir, &Options{Identity: "voyage-1"})
	require.NoError(t, err)
	defer other.Close()
	for i := 1; i <= n; i += 2 {
		_, err := l.Append(ctx, blobby(i), blobby(i+1))
		require.NoError(t, err)
		if i == 29 {
			require.NoError(t, other.Scan(ctx, 1, func(Record) error { return nil }))
		}
	}

	before := dirSize(t, dir)
	rec, err := l.Reclaim(ctx, isBlob)
	require.NoError(t, err)
	assert.Equal(t, n/3, rec.Records)
	assert.Positive(t, rec.Segments)
	assert.GreaterOrEqual(t, rec.Bytes, int64(n/3*(3000-stubSizeV4)), "each blob's bytes are freed")
	require.NoError(t, l.Close())
	assert.Less(t, dirSize(t, dir), before-int64(n/3*3000)+int64(n/3*frameSize(stubSizeV4)))

	check := func(l *Log, from uint64) {
		t.Helper()
		seq := from
		require.NoError(t, l.Scan(ctx, from, func(r Record) error {
			require.Equal(t, seq, r.Seq)
			if int(seq)%3 == 0 {
				assert.True(t, r.Reclaimed, "seq %d", seq)
				assert.Nil(t, r.Data)
			} else {
				assert.False(t, r.Reclaimed)
				assert.Equal(t, blobby(int(seq)), r.Data)
			}
			seq++
			return nil
		}))
		assert.Equal(t, uint64(n+1), seq)
	}
	check(other, 31) // its position is in a replaced file: it reads it anew
	rep, err := Verify(ctx, dir, &Options{Identity: "voyage-1"})
	require.NoError(t, err)
	assert.Equal(t, uint64(n), rep.Records)
	assert.Equal(t, uint64(n/3), rep.Reclaimed)

	l, err = Open(ctx, dir, &Options{SegmentSize: 32 << 10, Identity: "voyage-1"})
	require.NoError(t, err)
	check(l, 1)
	again, err := l.Reclaim(ctx, isBlob)
	require.NoError(t, err)
	assert.Zero(t, again.Records, "stubs are not offered again")
	_, err = l.Append(ctx, blobby(n+1))
	require.NoError(t, err, "the log goes on after a reclaim")
	require.NoError(t, l.Close())
	_, err = Verify(ctx, dir, &Options{Identity: "voyage-1"})
	require.NoError(t, err)
}

func TestReclaimedSegmentsAreRefusedAsNewerByTheirVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLegacyLog(t, dir, "")
	l, err := Open(ctx, dir, nil)
	require.NoError(t, err)
	_, err = l.Append(ctx, blobby(3), blobby(4))
	require.NoError(t, err)
	_, err = l.Reclaim(ctx, isBlob)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	h, err := os.ReadFile(filepath.Join(dir, segmentName(1)))
	require.NoError(t, err)
	hdr, reason := decodeFileHeader(h)
	require.Empty(t, reason)
	assert.Equal(t, uint32(reclaimedVersion), hdr.version, "a build that knows no stubs refuses the file as newer")
}

func TestReclaimRefusesADamagedLogAndLeavesIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(ctx, dir, nil)
	require.NoError(t, err)
	_, err = l.Append(ctx, blobby(3), blobby(4))
	require.NoError(t, err)
	_, err = l.Append(ctx, blobby(6))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	path := filepath.Join(dir, segmentName(1))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[fileHeaderSize+frameHeaderSize+10] ^= 1 // inside the first blob
	require.NoError(t, os.WriteFile(path, data, 0o600))

	l, err = Open(ctx, dir, nil)
	if err == nil {
		_, err = l.Reclaim(ctx, isBlob)
		l.Close()
	}
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, data, after, "nothing rewritten")
}

func TestStubFrameChainsLikeTheRecord(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 7, 4096, 4097, 100000} {
		rec := bytes.Repeat([]byte{0xA5}, n)
		full, sum := appendFrame(nil, 5, 0, true, 0x1234, rec)
		f, _, st := decodeFrame(full, 0x1234)
		require.Equal(t, frameOK, st)
		stub := appendStub(nil, f, len(rec), crcOf(rec), nil)
		g, size, st := decodeFrame(stub, 0x1234)
		require.Equal(t, frameOK, st, "n=%d", n)
		assert.True(t, g.stub)
		assert.Equal(t, sum, g.sum)
		assert.Equal(t, frameSize(stubSize), size)
		_, _, st = decodeFrame(stub, 0x1235)
		assert.Equal(t, frameBody, st, "a stub checks the chain")
		bad := append([]byte(nil), stub...)
		bad[frameHeaderSize+4] ^= 1
		_, _, st = decodeFrame(bad, 0x1234)
		assert.Equal(t, frameBody, st, "and the record's crc it keeps")
	}
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// A Log that read the active segment before another Log reclaimed (and so
// replaced) it must not write at its old offsets in the new file.
func TestAWriterAfterAReclaimElsewhereReadsTheLogAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(ctx, dir, nil)
	require.NoError(t, err)
	for i := 1; i <= 6; i++ {
		_, err := l.Append(ctx, blobby(i))
		require.NoError(t, err)
	}
	reader, err := Open(ctx, dir, nil) // positioned after seq 6 in segment 1
	require.NoError(t, err)
	defer reader.Close()
	for i := 7; i <= 9; i++ { // others write on
		_, err := l.Append(ctx, blobby(i))
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	w, err := Open(ctx, dir, nil)
	require.NoError(t, err)
	rec, err := w.Reclaim(ctx, isBlob)
	require.NoError(t, err)
	require.Equal(t, 3, rec.Records)
	require.NoError(t, w.Close())

	first, err := reader.Append(ctx, []byte("after"))
	require.NoError(t, err)
	assert.Equal(t, uint64(10), first)
	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err, "the new record is where the log ends, not at the replaced file's old offset")
	assert.Equal(t, uint64(10), rep.Records)
}
