package segment

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/helmlog/helm/chain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainOf computes the head over records as package chain defines it.
func chainOf(identity string, records [][]byte) chain.Head {
	h := chain.Head{Hash: chain.Genesis(identity)}
	for i, r := range records {
		h = chain.Head{Seq: uint64(i + 1), Hash: chain.Link(h.Hash, uint64(i+1), r)}
	}
	return h
}

// forge rewrites the one-segment, one-record-per-unit log in dir as the
// adversary would: records replaced by recs, every frame checksum, the
// CRC32C chain and WATERMARK's sums recomputed. link is what WATERMARK's
// slots then say the chain's link is.
func forge(t *testing.T, dir string, recs [][]byte, link chain.Hash) {
	t.Helper()
	path := filepath.Join(dir, segmentName(1))
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	hdr, reason := decodeFileHeader(old)
	require.Empty(t, reason)
	buf := encodeFileHeader(hdr)
	sum := hdr.seed
	for i, d := range recs {
		buf, sum = appendFrame(buf, uint64(i+1), 0, true, sum, d)
	}
	require.NoError(t, os.WriteFile(path, buf, 0o600))
	w := watermark{last: uint64(len(recs)), segment: 1, sum: sum, link: link, linked: hdr.version >= 4}
	wm := make([]byte, watermarkSize)
	copy(wm, encodeWatermark(w))
	copy(wm[watermarkSlot:], encodeWatermark(w))
	require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), wm, 0o600))
}

func TestVerifyFindsAnEditBelowTheWatermarkUnlessItsLinkIsRecomputed(t *testing.T) {
	t.Parallel()
	const id = "voyage-edit"
	dir := t.TempDir()
	l := openT(t, dir, &Options{Identity: id})
	recs := [][]byte{[]byte("note: DENIED by security"), []byte("reading: tests FAILED badly"), []byte("third")}
	for _, r := range recs {
		_, err := l.Append(ctx, r)
		require.NoError(t, err)
	}
	before, err := l.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	edited := [][]byte{[]byte("note: PASSED by security"), recs[1], recs[2]}
	forge(t, dir, edited, before.Hash) // CRCs and WATERMARK's sums, not its link
	_, err = Open(ctx, dir, &Options{Identity: id})
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce, "open checks the link from the watermark")
	rep, err := Verify(ctx, dir, &Options{Identity: id})
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, "the WATERMARK's chain link at seq 3 does not match the log: records at or below 3 were edited")
	assert.Equal(t, segmentName(1), ce.File)
	assert.Same(t, ce, rep.Problem)

	after := chainOf(id, edited)
	forge(t, dir, edited, after.Hash) // the link too: only a witness tells now
	rep, err = Verify(ctx, dir, &Options{Identity: id})
	require.NoError(t, err)
	assert.Equal(t, after, rep.Head)
	assert.NotEqual(t, before, rep.Head, "the head changed: a witness of the old head finds the edit")
	l = openT(t, dir, &Options{Identity: id})
	h, err := l.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, after, h)
	require.NoError(t, l.Close())
}

func TestHeadAfterOpenIsTheChainOverEveryRecordStubsIncluded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		identity string
		reclaim  bool
	}{
		{"identified log", "voyage-h", false},
		{"anonymous log", "", false},
		{"with stubs", "voyage-h", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opts := &Options{Identity: tc.identity, SegmentSize: 16 << 10}
			l := openT(t, dir, opts)
			var all [][]byte
			for i := 1; i <= 40; i += 2 {
				_, err := l.Append(ctx, blobby(i), blobby(i+1))
				require.NoError(t, err)
				all = append(all, blobby(i), blobby(i+1))
			}
			want := chainOf(tc.identity, all)
			h, err := l.Head(ctx)
			require.NoError(t, err)
			require.Equal(t, want, h)
			if tc.reclaim {
				rec, err := l.Reclaim(ctx, isBlob)
				require.NoError(t, err)
				require.Positive(t, rec.Records)
				h, err = l.Head(ctx)
				require.NoError(t, err)
				assert.Equal(t, want, h, "reclaim keeps the head")
			}
			require.NoError(t, l.Close())

			l = openT(t, dir, opts)
			h, err = l.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, h, "the head after open")
			assert.Equal(t, ChainInfo{Kind: "blake3", Since: 1, Format: formatVersion}, l.Chain())
			// A scan sees the same chain, stubs continuing it by their digest.
			got := chain.Head{Hash: chain.Genesis(tc.identity)}
			stubs := 0
			require.NoError(t, l.Scan(ctx, 1, func(r Record) error {
				if r.Reclaimed {
					stubs++
				}
				got = chain.Head{Seq: r.Seq, Hash: r.Link(got.Hash)}
				return nil
			}))
			assert.Equal(t, want, got)
			assert.Equal(t, tc.reclaim, stubs > 0)
			_, err = l.Append(ctx, []byte("one more"))
			require.NoError(t, err)
			h, err = l.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, chainOf(tc.identity, append(all, []byte("one more"))), h, "the head after a commit")
			require.NoError(t, l.Close())
			rep, err := Verify(ctx, dir, opts)
			require.NoError(t, err)
			assert.Equal(t, h, rep.Head)
		})
	}
}

// legacyLog writes a format-2 log of n records and returns them.
func legacyLog(t *testing.T, dir, identity string, n int) [][]byte {
	t.Helper()
	writeLegacyLog(t, dir, identity)
	l := openT(t, dir, &Options{Identity: identity, SegmentSize: 4 << 10})
	var recs [][]byte
	for i := range n {
		_, err := l.Append(ctx, payload(i, 300))
		require.NoError(t, err)
		recs = append(recs, payload(i, 300))
	}
	require.NoError(t, l.Close())
	return recs
}

func TestRechainMovesAFormat2LogOntoTheStoredChain(t *testing.T) {
	t.Parallel()
	const id = "voyage-old"
	dir := t.TempDir()
	recs := legacyLog(t, dir, id, 30)
	opts := &Options{Identity: id, SegmentSize: 4 << 10}

	l := openT(t, dir, opts)
	assert.Equal(t, ChainInfo{Kind: "crc32c", Format: legacyVersion}, l.Chain(), "written in format 2, it stays so")
	h, err := l.Head(ctx)
	require.NoError(t, err)
	require.Equal(t, chainOf(id, recs), h, "an older log's head is computed by reading it")
	rep, err := Verify(ctx, dir, opts)
	require.NoError(t, err)
	assert.Equal(t, "crc32c", rep.Chain.Kind)
	assert.Equal(t, h, rep.Head)

	wm, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	require.Equal(t, uint64(30), wm.last)
	ev := []byte(`{"type":"chain_rechained"}`)
	var told struct {
		last uint64
		sum  uint32
	}
	first, err := l.Rechain(ctx, func(tx *Tx, sum uint32) ([][]byte, error) {
		told.last, told.sum = tx.Last(), sum
		return [][]byte{ev}, nil
	})
	require.NoError(t, err)
	require.Equal(t, uint64(31), first)
	assert.Equal(t, uint64(30), told.last)
	assert.Equal(t, wm.sum, told.sum, "decide is told where the CRC32C chain ends")
	recs = append(recs, ev)
	want := chainOf(id, recs)
	h, err = l.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, h, "the chain's definition does not change at a rechain")
	assert.Equal(t, ChainInfo{Kind: "blake3", Since: 31, Format: formatVersion}, l.Chain())
	assert.Equal(t, "blake3 since seq 31", l.Chain().String())
	_, err = l.Rechain(ctx, just(ev))
	assert.ErrorIs(t, err, ErrRechained)
	_, err = l.Append(ctx, []byte("after"))
	require.NoError(t, err)
	recs = append(recs, []byte("after"))
	require.NoError(t, l.Close())

	w, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	assert.True(t, w.linked, "the watermark moved to the format-4 slot")
	assert.Equal(t, chainOf(id, recs).Hash, w.link)
	l = openT(t, dir, opts)
	h, err = l.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, chainOf(id, recs), h, "known at open, from the format-4 segment")
	require.NoError(t, l.Close())
	rep, err = Verify(ctx, dir, opts)
	require.NoError(t, err)
	assert.Equal(t, ChainInfo{Kind: "blake3", Since: 31, Format: formatVersion}, rep.Chain)
	assert.Equal(t, chainOf(id, recs), rep.Head)

	fresh := openT(t, t.TempDir(), opts)
	_, err = fresh.Append(ctx, []byte("new"))
	require.NoError(t, err)
	_, err = fresh.Rechain(ctx, just(ev))
	assert.ErrorIs(t, err, ErrRechained, "a new log is on the BLAKE3 chain from its genesis")
	require.NoError(t, fresh.Close())
}

func TestACrashDuringRechainLeavesTheOldLogOrTheRechainedOne(t *testing.T) {
	t.Parallel()
	const id = "voyage-crash"
	for _, tc := range []struct {
		name      string
		arm       func(*faultFS)
		rechained bool
	}{
		{"creating the new segment fails", func(f *faultFS) { f.failOpen = syscall.ENOSPC }, false},
		{"writing the new segment is cut short", func(f *faultFS) { f.failWrite, f.shortBy = errors.New("injected short write"), 5 }, false},
		{"sealing the old segment fails", func(f *faultFS) { f.failSync = syscall.EIO }, false},
		{"the watermark never written", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			recs := legacyLog(t, dir, id, 20)
			wmBefore, err := os.ReadFile(filepath.Join(dir, watermarkName))
			require.NoError(t, err)
			ffs := &faultFS{}
			opts := &Options{Identity: id, SegmentSize: 4 << 10, FS: ffs}
			l := openT(t, dir, opts)
			if tc.arm != nil {
				_, err := l.Append(ctx, []byte("warm")) // the writer is set up
				require.NoError(t, err)
				recs = append(recs, []byte("warm"))
				tc.arm(ffs)
			}
			ev := []byte("rechained")
			_, err = l.Rechain(ctx, just(ev))
			if tc.arm != nil {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				recs = append(recs, ev)
			}
			l.Close()
			if tc.arm == nil {
				// As if the power failed before the slot reached the disk.
				require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), wmBefore, 0o600))
			}

			plain := &Options{Identity: id}
			rep, err := Verify(ctx, dir, plain)
			require.NoError(t, err)
			assert.Equal(t, chainOf(id, recs), rep.Head)
			l = openT(t, dir, plain)
			assert.Equal(t, tc.rechained, l.Chain().Kind == "blake3", "the old log, or the rechained one")
			assert.Equal(t, recs, datas(t, l))
			h, err := l.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, chainOf(id, recs), h)
			if !tc.rechained {
				_, err = l.Rechain(ctx, just(ev))
				require.NoError(t, err, "a rechain that failed can be done again")
				recs = append(recs, ev)
			}
			require.NoError(t, l.Close())
			rep, err = Verify(ctx, dir, plain)
			require.NoError(t, err)
			assert.Equal(t, "blake3", rep.Chain.Kind)
			assert.Equal(t, chainOf(id, recs), rep.Head)
		})
	}
}

// just is a Rechain decide that appends recs.
func just(recs ...[]byte) func(*Tx, uint32) ([][]byte, error) {
	return func(*Tx, uint32) ([][]byte, error) { return recs, nil }
}
