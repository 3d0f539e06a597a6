package segment

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/helmlog/helm/chain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyRecords reads every record of l as Scan yields them, stubs
// included.
func copyRecords(t *testing.T, l *Log) []Record {
	t.Helper()
	var recs []Record
	require.NoError(t, l.Scan(ctx, 1, func(r Record) error {
		recs = append(recs, r)
		return nil
	}))
	return recs
}

// scanHead is the head a scan computes, stubs by the digest they keep.
func scanHead(t *testing.T, l *Log, identity string) chain.Head {
	t.Helper()
	h := chain.Head{Hash: chain.Genesis(identity)}
	require.NoError(t, l.Scan(ctx, 1, func(r Record) error {
		h = chain.Head{Seq: r.Seq, Hash: r.Link(h.Hash)}
		return nil
	}))
	return h
}

func TestAppendRecordsCopiesALogWithStubsKeepingItsHead(t *testing.T) {
	t.Parallel()
	const id = "voyage-stubs"
	for _, tc := range []struct {
		name    string
		segment int64 // the copy's: small ones put stubs at rotations
		units   int   // the copy is appended in this many batches
	}{
		{"one batch", 0, 1},
		{"a batch per record, small segments", 8 << 10, 40},
		{"four batches", 16 << 10, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := openT(t, t.TempDir(), &Options{Identity: id, SegmentSize: 16 << 10})
			for i := 1; i <= 40; i += 2 {
				_, err := src.Append(ctx, blobby(i), blobby(i+1))
				require.NoError(t, err)
			}
			_, err := src.Reclaim(ctx, isBlob)
			require.NoError(t, err)
			want, err := src.Head(ctx)
			require.NoError(t, err)
			recs := copyRecords(t, src)
			require.NoError(t, src.Close())

			dir := t.TempDir()
			opts := &Options{Identity: id, SegmentSize: tc.segment}
			dst := openT(t, dir, opts)
			per := (len(recs) + tc.units - 1) / tc.units
			for at := 0; at < len(recs); at += per {
				batch := recs[at:min(at+per, len(recs))]
				first, err := dst.AppendRecords(ctx, uint64(at), batch...)
				require.NoError(t, err)
				require.Equal(t, uint64(at+1), first)
			}
			h, err := dst.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, h, "the copy's head is the original's")
			require.NoError(t, dst.Close())

			dst = openT(t, dir, opts)
			h, err = dst.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, h, "the head after open")
			got := copyRecords(t, dst)
			require.Len(t, got, len(recs))
			for i := range recs {
				assert.Equal(t, recs[i], got[i], "record %d", i+1)
			}
			assert.Equal(t, want, scanHead(t, dst, id))
			// It goes on as any log, and Reclaim leaves the stubs as they are.
			_, err = dst.Append(ctx, []byte("after the copy"))
			require.NoError(t, err)
			r, err := dst.Reclaim(ctx, isBlob)
			require.NoError(t, err)
			assert.Zero(t, r.Records, "nothing left to reclaim")
			h, err = dst.Head(ctx)
			require.NoError(t, err)
			require.NoError(t, dst.Close())
			rep, err := Verify(ctx, dir, opts)
			require.NoError(t, err)
			assert.Equal(t, h, rep.Head)
			assert.Equal(t, uint64(40/3), rep.Reclaimed)
		})
	}
}

func TestAppendRecordsStubsAreSeenByLaterDecidesOfTheGroup(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{Identity: "v"})
	d := chain.Digest([]byte("gone"))
	_, err := l.AppendRecords(ctx, 0, Record{Data: []byte("one")}, Record{Reclaimed: true, Len: 4, Digest: d})
	require.NoError(t, err)
	var seen []Record
	_, err = l.Commit(ctx, func(tx *Tx) ([][]byte, error) {
		return nil, tx.Scan(1, func(r Record) error {
			seen = append(seen, r)
			return nil
		})
	})
	require.NoError(t, err)
	assert.Equal(t, []Record{{Seq: 1, Data: []byte("one")}, {Seq: 2, Reclaimed: true, Len: 4, Digest: d}}, seen)
}

func TestAppendRecordsRefusesWhatItCannotHoldAndAppendsNothing(t *testing.T) {
	t.Parallel()
	d := chain.Digest([]byte("gone"))
	stub := Record{Reclaimed: true, Len: 4, Digest: d}
	for _, tc := range []struct {
		name   string
		legacy bool
		after  uint64
		recs   []Record
		want   error
	}{
		{"a stub in a log that goes on in format 2", true, 3, []Record{{Data: []byte("x")}, stub}, ErrStubFormat},
		{"a stub of a record longer than the log takes", false, 3, []Record{{Reclaimed: true, Len: 2 << 20, Digest: d}}, ErrTooLarge},
		{"a stub after a tail that moved", false, 2, []Record{stub}, ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opts := &Options{Identity: "v", MaxRecordSize: 1 << 20}
			if tc.legacy {
				legacyLog(t, dir, "v", 3)
			}
			l := openT(t, dir, opts)
			if !tc.legacy {
				_, err := l.Append(ctx, []byte("a"), []byte("b"), []byte("c"))
				require.NoError(t, err)
			}
			before, err := l.Head(ctx)
			require.NoError(t, err)
			_, err = l.AppendRecords(ctx, tc.after, tc.recs...)
			require.ErrorIs(t, err, tc.want)
			h, err := l.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, before, h, "nothing appended")
			_, err = l.Append(ctx, []byte("still writes"))
			require.NoError(t, err, "a refused batch does not poison the log")
			require.NoError(t, l.Close())
			_, err = Verify(ctx, dir, opts)
			require.NoError(t, err)
		})
	}
}

func TestAStubEditedAfterAppendRecordsIsFoundByVerify(t *testing.T) {
	t.Parallel()
	const id = "voyage-edit-stub"
	dir := t.TempDir()
	opts := &Options{Identity: id}
	l := openT(t, dir, opts)
	_, err := l.AppendRecords(ctx, 0, Record{Data: []byte("event")}, Record{Reclaimed: true, Len: 3000, Digest: chain.Digest([]byte("blob"))}, Record{Data: []byte("event 2")})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	path := filepath.Join(dir, segmentName(1))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	// The stub's digest, in the second frame: the CRC32C chain does not
	// cover it, the BLAKE3 chain does.
	at := fileHeaderSize + frameSize(len("event")) + frameHeaderSize + 8
	data[at] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err = Verify(ctx, dir, opts)
	var ce *CorruptionError
	require.True(t, errors.As(err, &ce), "%v", err)
}
