package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
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

// TestAttackAnEditAtAnyReadBoundaryFailsTheChainAtOpen edits one record in
// place (its length kept) of a long segment, the agent recomputing every
// frame's CRC and WATERMARK's sums but not the chain's link, at the
// records an open's reads and links ahead split: the first, the last,
// those across the 32 KiB, 64 KiB, 256 KiB and 1 MiB marks, and records
// larger than a read buffer. Open must refuse each, with links ahead on
// a second core and with GOMAXPROCS=1 (no helper).
func TestAttackAnEditAtAnyReadBoundaryFailsTheChainAtOpen(t *testing.T) {
	const id = "voyage-attack35"
	big := map[int]int{100: 70 << 10, 400: 300 << 10, 700: 1200 << 10} // record: size
	var recs [][]byte
	for i := 1; i <= 1000; i++ {
		r := blobby(i)
		if n, ok := big[i]; ok {
			r = payload(i, n)
		}
		recs = append(recs, r)
	}
	src := t.TempDir()
	l := openT(t, src, &Options{Identity: id, NoSync: true, SegmentSize: 64 << 20})
	for _, r := range recs {
		_, err := l.Append(ctx, r)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	head := chainOf(id, recs)

	// Where each frame starts in the forged segment.
	hdr, reason := decodeFileHeader(mustRead(t, filepath.Join(src, segmentName(1))))
	require.Empty(t, reason)
	off := len(encodeFileHeader(hdr))
	var sum uint32
	starts := make([]int, len(recs)+1)
	for i, r := range recs {
		starts[i] = off
		var b []byte
		b, sum = appendFrame(nil, uint64(i+1), 0, true, sum, r)
		off += len(b)
	}
	starts[len(recs)] = off
	at := map[int]bool{1: true, len(recs): true}
	for seq := range big {
		at[seq] = true
	}
	for _, mark := range []int{32 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20} {
		for i := range recs {
			if starts[i] < mark && starts[i+1] >= mark {
				at[i+1] = true // across the mark
				if i+2 <= len(recs) {
					at[i+2] = true // the first after it
				}
			}
		}
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, p := range []int{max(procs, 2), 1} {
		runtime.GOMAXPROCS(p)
		for seq := range at {
			t.Run(fmt.Sprintf("GOMAXPROCS=%d record %d", p, seq), func(t *testing.T) {
				dir := t.TempDir()
				for _, name := range []string{segmentName(1), watermarkName} {
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), mustRead(t, filepath.Join(src, name)), 0o600))
				}
				edited := append([][]byte(nil), recs...)
				r := append([]byte(nil), recs[seq-1]...)
				r[len(r)/2] ^= 0x20 // one letter's case: the length kept
				edited[seq-1] = r
				forge(t, dir, edited, head.Hash)

				_, err := Open(ctx, dir, &Options{Identity: id})
				var ce *CorruptionError
				require.ErrorAs(t, err, &ce, "open checks the link from the watermark")
				assert.Contains(t, ce.Reason, fmt.Sprintf("the WATERMARK's chain link at seq %d does not match the log", len(recs)))
			})
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// A transient scan (an open that folds, NoRetain) reuses its read buffer,
// except when a unit of several records is cut by the buffer's end (its
// first records still use it). An edit of any record of a log of such
// units, with CRCs and WATERMARK's sums recomputed but not the chain's
// link, fails the chain at open, with and without a helper computing
// digests; the log unedited opens with every record delivered.
func TestAttackAnEditInAUnitOfSeveralRecordsFailsTheChainAtATransientOpen(t *testing.T) {
	const id = "voyage-attack36"
	const perUnit = 3
	var recs [][]byte
	for i := 1; i <= 240; i++ {
		recs = append(recs, payload(i, 1000+(i*773)%4000))
	}
	src := t.TempDir()
	l := openT(t, src, &Options{Identity: id, NoSync: true})
	for i := 0; i < len(recs); i += perUnit {
		_, err := l.Append(ctx, recs[i:i+perUnit]...)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	head := chainOf(id, recs)
	forgeUnits := func(t *testing.T, dir string, recs [][]byte) {
		path := filepath.Join(dir, segmentName(1))
		hdr, reason := decodeFileHeader(mustRead(t, path))
		require.Empty(t, reason)
		buf, sum := encodeFileHeader(hdr), hdr.seed
		for i, d := range recs {
			buf, sum = appendFrame(buf, uint64(i+1), uint32(i%perUnit), i%perUnit == perUnit-1, sum, d)
		}
		require.NoError(t, os.WriteFile(path, buf, 0o600))
		w := watermark{last: uint64(len(recs)), segment: 1, sum: sum, link: head.Hash, linked: true}
		wm := make([]byte, watermarkSize)
		copy(wm, encodeWatermark(w))
		copy(wm[watermarkSlot:], encodeWatermark(w))
		require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), wm, 0o600))
	}
	copyLog := func(t *testing.T) string {
		dir := t.TempDir()
		for _, name := range []string{segmentName(1), watermarkName} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), mustRead(t, filepath.Join(src, name)), 0o600))
		}
		return dir
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, p := range []int{max(procs, 2), 1} {
		runtime.GOMAXPROCS(p)
		t.Run(fmt.Sprintf("GOMAXPROCS=%d unedited", p), func(t *testing.T) {
			dir := copyLog(t)
			forgeUnits(t, dir, recs) // the same bytes: the forger's frames are helm's
			var got [][]byte
			l, err := OpenScan(ctx, dir, &Options{Identity: id, NoRetain: true}, func(r Record) error {
				got = append(got, bytes.Clone(r.Data))
				return nil
			})
			require.NoError(t, err)
			h, err := l.Head(ctx)
			require.NoError(t, err)
			require.NoError(t, l.Close())
			assert.Equal(t, head, h)
			assert.Equal(t, recs, got)
		})
		t.Run(fmt.Sprintf("GOMAXPROCS=%d edited", p), func(t *testing.T) {
			for seq := 1; seq <= len(recs); seq++ {
				dir := copyLog(t)
				edited := append([][]byte(nil), recs...)
				r := bytes.Clone(recs[seq-1])
				r[len(r)/2] ^= 0x20
				edited[seq-1] = r
				forgeUnits(t, dir, edited)
				_, err := OpenScan(ctx, dir, &Options{Identity: id, NoRetain: true}, func(Record) error { return nil })
				var ce *CorruptionError
				require.ErrorAs(t, err, &ce, "record %d edited", seq)
				assert.Contains(t, ce.Reason, fmt.Sprintf("the WATERMARK's chain link at seq %d does not match the log", len(recs)), "record %d edited", seq)
			}
		})
	}
}
