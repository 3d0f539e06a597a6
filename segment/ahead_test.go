package segment

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// longLog appends n records of blobby (events and 3 KB blobs) to a new log
// in dir, 2 per unit, and returns them: a last segment of several read
// buffers, so that an open's scan links ahead.
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

func TestOpenAndVerifyOfALongSegmentComputeTheSameChainWithLinksAhead(t *testing.T) {
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

func TestOpenFindsAnEditDeepInALongSegmentWithLinksAhead(t *testing.T) {
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

func TestLinksAheadAreTheChainTheScanComputes(t *testing.T) {
	t.Parallel()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: no helper starts, and the scan computes every digest (TestAttackAnEditAtAnyReadBoundaryFailsTheChainAtOpen runs both ways)")
	}
	var buf []byte
	var sum uint32
	var frames []frame
	var offs []int
	for i := 1; len(buf) < 2*aheadMin; i++ {
		offs = append(offs, len(buf))
		buf, sum = appendFrame(buf, uint64(i), 0, true, sum, blobby(i))
		fr, _, st := decodeHeader(buf[offs[i-1]:])
		require.Equal(t, frameOK, st)
		fr.data = blobby(i)
		frames = append(frames, fr)
	}
	// A stub in the middle: the chain continues over its digest.
	stubAt := len(frames) / 2
	digest := chain.Digest(frames[stubAt].data)
	stub := appendStub(nil, frames[stubAt], len(frames[stubAt].data), 7, &digest)
	tail := append([]byte(nil), buf[offs[stubAt+1]:]...)
	buf = append(append(buf[:offs[stubAt]], stub...), tail...)
	shift := len(stub) - (offs[stubAt+1] - offs[stubAt])
	for i := stubAt + 1; i < len(offs); i++ {
		offs[i] += shift
	}
	frames[stubAt].stub, frames[stubAt].recLen, frames[stubAt].digest = true, len(frames[stubAt].data), digest

	g := chain.Genesis("voyage-links")
	want := make([]chain.Hash, len(frames))
	prev := g
	for i := range frames {
		want[i] = frames[i].link(prev)
		prev = want[i]
	}

	var a linkAhead
	a.start(buf, 0)
	require.True(t, a.on, "a buffer of %d bytes gets a helper", len(buf))
	require.Len(t, a.slots, len(frames)-1, "a slot for every frame but the stub, which holds its digest")
	a.wg.Wait() // the helper computes the digest of every frame it walked
	for i := range a.slots {
		s := &a.slots[i]
		require.Equal(t, slotHelperDone, s.state.Load())
		assert.Equal(t, chain.Digest(buf[s.off+frameHeaderSize:s.off+frameHeaderSize+s.n]), s.digest, "frame at %d", s.off)
	}
	// An ask from another link before the frame (as if an earlier frame
	// had differed) gets the link computed from the link given.
	other := chain.Genesis("another voyage")
	assert.Equal(t, frames[0].link(other), a.link(&frames[0], offs[0], other))
	// The scan's asks, in order: each gets the link after its frame.
	prev = g
	for i := range frames {
		got := a.link(&frames[i], offs[i], prev)
		assert.Equal(t, want[i], got, "frame %d", i+1)
		prev = got
	}
	a.halt()
	assert.False(t, a.on)

	// The scan asking while the helper runs: they meet somewhere, and
	// every link is still the chain's.
	for round := range 20 {
		a.start(buf, 0)
		require.True(t, a.on)
		prev = g
		for i := range frames {
			got := a.link(&frames[i], offs[i], prev)
			require.Equal(t, want[i], got, "round %d, frame %d", round, i+1)
			prev = got
		}
		a.halt()
	}

	// A short buffer gets no helper: the scan links itself.
	a.start(buf[:aheadMin/2], 0)
	assert.False(t, a.on)
	assert.Equal(t, want[0], a.link(&frames[0], offs[0], g))
}

func TestTheHelperOvertakenGoesOnHalfwayToTheEnd(t *testing.T) {
	t.Parallel()
	var buf []byte
	var sum uint32
	var offs []int
	for i := 1; len(buf) < 2*aheadMin; i++ {
		offs = append(offs, len(buf))
		buf, sum = appendFrame(buf, uint64(i), 0, true, sum, blobby(i))
	}
	a := linkAhead{buf: buf}
	for i, off := range offs {
		a.slots = append(a.slots, digestSlot{off: off, seq: uint64(i + 1), n: len(blobby(i + 1))})
	}
	n := len(a.slots)
	require.Greater(t, n, 8)
	// The scan took slot 2 before the helper reached it (run here on the
	// test's goroutine, so the order is fixed).
	a.slots[2].state.Store(slotScan)
	a.wg.Add(1)
	a.run()
	jump := 2 + (n-2)/2 + 1
	for i := range a.slots {
		s := &a.slots[i]
		switch {
		case i < 2 || i >= jump:
			require.Equal(t, slotHelperDone, s.state.Load(), "slot %d", i)
			assert.Equal(t, chain.Digest(blobby(i+1)), s.digest, "slot %d", i)
		case i == 2:
			assert.Equal(t, slotScan, s.state.Load(), "the scan's slot is left to it")
		default:
			assert.Equal(t, slotTodo, s.state.Load(), "slot %d, between the scan and halfway, is the scan's to compute", i)
		}
	}
}
