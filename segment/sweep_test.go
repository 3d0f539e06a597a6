package segment

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Byte sweeps (a test that truncates a file at every offset, or flips
// every bit of a unit) visit every position in the full run. Under -short
// they visit a deterministic sample that still reaches every field of the
// frames they cover: see sweep and frameFieldOffsets.

// sweep returns the positions from..to (both included) that a sweep
// visits: every one in the full run; under -short, each position of keep
// that lies in the range and every stride-th one from `from` besides (so
// that the sample also runs through the data between the kept places).
func sweep(from, to, stride int64, keep ...int64) []int64 {
	var out []int64
	for p := from; p <= to; p++ {
		if !testing.Short() || (p-from)%stride == 0 || slices.Contains(keep, p) {
			out = append(out, p)
		}
	}
	return out
}

// frameFieldOffsets returns, for a frame starting at off, the offsets a
// -short sweep keeps so that it reaches each field of the frame at least
// once (format.go draws them): either side of the frame's start, a byte
// inside each header field (hcrc 0..4, len 4..8, seq 8..16, idx 16..20,
// sum 20..24), and the first two bytes of its data.
func frameFieldOffsets(off int64) []int64 {
	return []int64{off - 1, off, off + 1, off + 2, off + 6, off + 12, off + 18, off + 22, off + frameHeaderSize, off + frameHeaderSize + 1}
}

func TestShortSweepKeepsEveryFieldAndTheStride(t *testing.T) {
	t.Parallel()
	got := sweep(100, 200, 16, frameFieldOffsets(100)...)
	if !testing.Short() {
		require.Len(t, got, 101, "the full run visits every position")
		return
	}
	for _, want := range []int64{100, 101, 102, 106, 112, 118, 122, 124, 125, 116, 132, 196} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, int64(99), "nothing before the range")
	assert.NotContains(t, got, int64(201), "nothing after it")
	assert.Less(t, len(got), 101/4, "a sample")
}
