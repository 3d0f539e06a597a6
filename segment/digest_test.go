package segment

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// longLog appends n records of blobby (events and 3 KB blobs) to a new log
// in dir, 2 per unit, and returns them: a last segment of several read
// buffers, so that an open's scan digests ahead.
func longLog(t *testing.T, dir, identity string, n int, reclaim bool) [][]byte {
	t.Helper()
	l := openT(t, dir, &Options{Identity: identity, NoSync: true})
	var all [][]byte
	for i := 1; i <= n; i += 2 {
		_, err := l.Append(ctx, blobby(i), blobby(i+1))
		require.NoError(t, err)
		all = append(all, blobby(i), blobby(i+1))
	}
	if reclaim {
		rec, err := l.Reclaim(ctx, isBlob)
		require.NoError(t, err)
		require.Positive(t, rec.Records)
	}
	require.NoError(t, l.Close())
	return all
}

func TestOpenAndVerifyOfALongSegmentComputeTheSameChainWithDigestsAhead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reclaim bool
	}{
		{"records only", false},
		{"with stubs between records", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const id = "voyage-ahead"
			dir := t.TempDir()
			all := longLog(t, dir, id, 3000, tc.reclaim) // ≈ 3 MB: probe, 32 KiB, 256 KiB, then 1 MiB reads
			want := chainOf(id, all)

			l := openT(t, dir, &Options{Identity: id})
			h, err := l.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, h, "the head after open")
			require.NoError(t, l.Close())

			rep, err := Verify(ctx, dir, &Options{Identity: id})
			require.NoError(t, err)
			assert.Equal(t, want, rep.Head, "the head Verify computes")
		})
	}
}

func TestOpenFindsAnEditDeepInALongSegmentWithDigestsAhead(t *testing.T) {
	t.Parallel()
	const id = "voyage-ahead-edit"
	for _, at := range []int{1, 1500, 2999} {
		t.Run(fmt.Sprint("record ", at), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			recs := longLog(t, dir, id, 3000, false)
			before := chainOf(id, recs)
			edited := append([][]byte(nil), recs...)
			edited[at-1] = append([]byte("EDITED "), recs[at-1]...)
			forge(t, dir, edited, before.Hash) // CRCs and WATERMARK's sums, not its link

			_, err := Open(ctx, dir, &Options{Identity: id})
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce, "open checks the link from the watermark")
			assert.Contains(t, ce.Reason, "the WATERMARK's chain link at seq 3000 does not match the log")
		})
	}
}

func TestDigestAheadGivesTheDigestOfTheFrameAtTheOffsetAsked(t *testing.T) {
	t.Parallel()
	var buf []byte
	var sum uint32
	var offs []int
	var recs [][]byte
	for i := 1; len(buf) < 2*aheadMin; i++ {
		offs = append(offs, len(buf)+frameHeaderSize)
		recs = append(recs, blobby(i))
		buf, sum = appendFrame(buf, uint64(i), 0, true, sum, blobby(i))
	}
	var a digestAhead
	a.start(buf, 0)
	require.True(t, a.on, "a buffer of %d bytes gets a helper", len(buf))
	require.Len(t, a.slots, len(recs))
	a.wg.Wait() // the helper digests every record it walked
	for i := range a.slots {
		s := &a.slots[i]
		require.Equal(t, slotDone, s.state.Load())
		assert.Equal(t, chain.Digest(recs[i]), s.sum, "record %d", i+1)
	}
	// The scan's asks, in order, with one that names no frame of the walk
	// (another offset): each gets BLAKE3 of the bytes it passes.
	assert.Equal(t, chain.Digest(recs[0]), a.digest(recs[0], offs[0]))
	other := []byte("not in the buffer")
	assert.Equal(t, chain.Digest(other), a.digest(other, offs[1]+1))
	for i := 2; i < len(recs); i++ {
		assert.Equal(t, chain.Digest(recs[i]), a.digest(recs[i], offs[i]), "record %d", i+1)
	}
	a.halt()
	assert.False(t, a.on)

	// A short buffer gets none: the scan digests itself.
	a.start(buf[:aheadMin/2], 0)
	assert.False(t, a.on)
	assert.Equal(t, chain.Digest(recs[0]), a.digest(recs[0], offs[0]))
}
