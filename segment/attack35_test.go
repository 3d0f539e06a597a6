package segment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackTheWatermarkWrittenWithoutAReadReachesEveryCommit: two Logs
// of one log take turns committing (each remembers the slot it writes
// next and skips the read while the log ends where it left it), one of
// them reclaims records between commits (a new active segment, the end
// unchanged), and the agent edits WATERMARK's slots in place between
// commits (a stale slot copied over the newest, a slot zeroed, the newer
// copied over the older). After every commit the newest slot that
// checks out is the commit's end: the watermark is never left stale and
// never points beyond the log; and the log reopens with every record.
func TestAttackTheWatermarkWrittenWithoutAReadReachesEveryCommit(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{Identity: "attack35", NoSync: true, SegmentSize: 4 << 10}
	logs := []*Log{openT(t, dir, opts), openT(t, dir, opts)}
	wmPath := filepath.Join(dir, watermarkName)
	rng := rand.New(rand.NewPCG(35, 2))
	var stale []byte // a slot as it was some commits ago
	var want [][]byte
	edited := true // the agent touched WATERMARK since the last commit
	for i := range 400 {
		l := logs[rng.IntN(2)]
		data := payload(i, 40+rng.IntN(300))
		if i%3 == 0 {
			data = append([]byte("blob-"), data...)
		}
		_, err := l.Append(ctx, data)
		require.NoError(t, err, "commit %d", i)
		want = append(want, data)
		last := uint64(len(want))

		wm, err := os.ReadFile(wmPath)
		require.NoError(t, err)
		w, older, ok := newestWatermark(wm)
		require.True(t, ok, "commit %d: a slot checks out", i)
		require.Equal(t, last, w.last, "commit %d: the newest slot is the commit's end", i)
		if !edited {
			// The slot overwritten was the older: the other keeps the
			// previous commit's end, so a slot torn by a crash costs one
			// unit of the watermark's reach, never more.
			prev, ok := decodeWatermark(wm[older*watermarkSlot:])
			require.True(t, ok, "commit %d: the other slot checks out", i)
			assert.Equal(t, last-1, prev.last, "commit %d: the other slot is the previous commit's end", i)
		}
		edited = false
		if i%7 == 0 {
			stale = append([]byte(nil), wm[:watermarkLen]...)
		}

		switch rng.IntN(6) {
		case 0: // the agent copies a stale slot over one of them
			if stale != nil {
				f, err := os.OpenFile(wmPath, os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteAt(stale, int64(rng.IntN(2))*watermarkSlot)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				edited = true
			}
		case 1: // the agent zeroes a slot
			f, err := os.OpenFile(wmPath, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(make([]byte, watermarkLen), int64(rng.IntN(2))*watermarkSlot)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			edited = true
		case 2: // another Log reclaims: the active segment may be sealed, a new one started
			_, err := logs[rng.IntN(2)].Reclaim(ctx, isBlob)
			require.NoError(t, err, "reclaim after commit %d", i)
		}
	}
	for _, l := range logs {
		require.NoError(t, l.Close())
	}
	got := readAll(t, openT(t, dir, opts))
	require.Len(t, got, len(want))
	for i, r := range got {
		if r.Reclaimed {
			assert.True(t, isBlob(Record{Data: want[i]}), "record %d", i+1)
			continue
		}
		assert.Equal(t, want[i], r.Data, fmt.Sprint("record ", i+1))
	}
}
