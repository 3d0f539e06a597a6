package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helmlog/helm/internal/testfs"
)

// statfsFree returns the bytes free on the file system holding dir.
func statfsFree(t testing.TB, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	return int64(st.Bavail) * int64(st.Bsize)
}

// TestRealFullDiskTakesNearlyAllFreeSpace fills a 512 KiB tmpfs with
// records of random sizes: the log takes nearly all of it before the
// first ENOSPC, fails only a unit that does not fit, loses nothing
// acknowledged and takes more once a file beside it is removed.
func TestRealFullDiskTakesNearlyAllFreeSpace(t *testing.T) {
	t.Parallel()
	mnt := testfs.Tmpfs(t, 512<<10)
	filler := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 64<<10), 0o600))
	dir := filepath.Join(mnt, "log")
	freeAtStart := statfsFree(t, mnt)

	l, err := Open(ctx, dir, nil)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	var acked, failed [][]byte
	var failErr error
	for i := 0; failErr == nil; i++ {
		require.Less(t, i, 100000, "the disk never filled")
		recs := [][]byte{payload(i, 64+r.IntN(4000))}
		if i%7 == 0 {
			recs = append(recs, payload(-i, 64+r.IntN(1000)))
		}
		if _, err := l.Append(ctx, recs...); err != nil {
			failed, failErr = recs, err
		} else {
			acked = append(acked, recs...)
		}
	}
	data := l.Mark().End
	free := statfsFree(t, mnt)
	t.Logf("tmpfs %d bytes free at start; %d records, %d bytes of log data (%.1f%%) before ENOSPC; the failed unit needed %d bytes, %d were free",
		freeAtStart, len(acked), data, 100*float64(data)/float64(freeAtStart), unitSize(failed), free)
	assert.ErrorIs(t, failErr, syscall.ENOSPC)
	assert.ErrorIs(t, failErr, ErrPoisoned)
	assert.Less(t, free, unitSize(failed)+4096, "the unit fitted (up to the page it would have begun on)")
	assert.GreaterOrEqual(t, float64(data)/float64(freeAtStart), 0.97, "share of the free space the log took")
	require.NoError(t, l.Close())

	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Nil(t, rep.Torn, "a clean end")
	require.NoError(t, os.Remove(filler))
	l2 := openT(t, dir, nil)
	assert.Empty(t, l2.Cuts())
	assert.Equal(t, acked, datas(t, l2), "the acknowledged records, and not the failed unit")
	_, err = l2.Append(ctx, failed...)
	require.NoError(t, err, "space was freed")
	assert.Equal(t, append(acked, failed...), datas(t, l2))
}
