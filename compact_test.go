package helm_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// diskBytes is the space the files under dir take on disk (allocated
// blocks), and their apparent size.
func diskBytes(t *testing.T, dir string) (allocated, apparent int64) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		allocated += allocatedBytes(fi)
		apparent += fi.Size()
		return nil
	}))
	return allocated, apparent
}

func TestCompactReclaimsJettisonedBytesAndKeepsTheStory(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	random := func(n int) string { b := make([]byte, n); rand.Read(b); return hex.EncodeToString(b) }
	var small, large []string // artifact hashes: blob records, pack frames
	for i, size := range []int{500, 1500, 3000, 60 << 10, 200 << 10} {
		o, err := v.Observe(ctx, &note{Topic: "t" + string(rune('a'+i)), Text: random(size)}, who, nil)
		require.NoError(t, err)
		if o.Artifact.StoredSize > 32<<10 {
			large = append(large, o.Record.Artifact)
		} else {
			small = append(small, o.Record.Artifact)
		}
	}
	require.Len(t, large, 2)
	_, err := v.TakeBearing(ctx, "what it meant", who, nil)
	require.NoError(t, err)
	keep := small[0]
	var jettisonedStored int64
	for _, a := range artifactsOf(t, v) {
		if a.Hash != keep {
			jettisonedStored += a.StoredSize
			require.NoError(t, v.Jettison(ctx, a.Hash, "no longer needed", who))
		}
	}
	var before bytes.Buffer
	require.NoError(t, writeStory(ctx, v, &before))
	id := v.ID()
	require.NoError(t, v.Close())
	dir := filepath.Join(h.Dir(), "voyages", id)
	allocBefore, sizeBefore := diskBytes(t, dir)

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	rep, err := v.Compact(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Artifacts)
	assert.Equal(t, 2, rep.LogRecords)
	assert.Positive(t, rep.LogBytes)
	assert.Positive(t, rep.PackBytes)
	var after bytes.Buffer
	require.NoError(t, writeStory(ctx, v, &after))
	assert.Equal(t, before.String(), after.String(), "the story reads the same")
	data, err := readArtifact(ctx, v, keep)
	require.NoError(t, err, "a stowed artifact is never touched")
	assert.Contains(t, string(data), "text")
	_, err = v.Observe(ctx, &note{Topic: "later", Text: "after the compaction"}, who, nil)
	require.NoError(t, err, "the voyage goes on")
	again, err := v.Compact(ctx)
	require.NoError(t, err)
	assert.Zero(t, again.Artifacts, "nothing left to reclaim")
	require.NoError(t, v.Close())

	allocAfter, sizeAfter := diskBytes(t, dir)
	t.Logf("jettisoned %d stored bytes; on disk %d -> %d allocated, %d -> %d apparent; report %+v", jettisonedStored, allocBefore, allocAfter, sizeBefore, sizeAfter, rep)
	if allocBefore > 0 { // a file system that reports blocks
		assert.GreaterOrEqual(t, allocBefore-allocAfter, jettisonedStored-2*4096*int64(len(large))-4096,
			"the disk gives back the jettisoned bytes, but for the blocks pack frames share with their neighbours (and one the file system may keep for the files the compaction rewrote)")
	}

	vr, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%v", vr.Problems)
	assert.Equal(t, uint64(2), vr.Events.Reclaimed)
}
