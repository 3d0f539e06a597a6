package segment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigLog writes a log whose only segment takes several reads (more than
// the first probe), so that a read checks its ctx on the way. It returns
// the mark after the first record.
func bigLog(t *testing.T) (string, Mark) {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(ctx, dir, &Options{NoSync: true})
	require.NoError(t, err)
	var first Mark
	for i := range 8 {
		_, err := l.Append(ctx, payload(i, 16<<10))
		require.NoError(t, err)
		if i == 0 {
			first = l.Mark()
		}
	}
	require.NoError(t, l.Close())
	return dir, first
}

// The open reads under the caller's ctx: an ended ctx ends it, with the
// ctx's error, and the same log opens under a live one.
func TestOpenReadsUnderTheCallersContext(t *testing.T) {
	dir, first := bigLog(t)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		open func(context.Context) (*Log, error)
	}{
		{"Open", func(c context.Context) (*Log, error) { return Open(c, dir, nil) }},
		{"OpenScan", func(c context.Context) (*Log, error) { return OpenScan(c, dir, nil, nil) }},
		{"OpenAfter", func(c context.Context) (*Log, error) { return OpenAfter(c, dir, nil, first, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.open(ended)
			require.ErrorIs(t, err, context.Canceled)
			assert.Nil(t, l)

			l, err = tc.open(ctx)
			require.NoError(t, err)
			assert.Equal(t, uint64(8), l.Last())
			require.NoError(t, l.Close())
		})
	}
}

// Tx.Scan reads under the ctx of its Commit: a decide whose caller gave
// up reads no further, and its batch is not appended.
func TestTxScanReadsUnderItsCommitsContext(t *testing.T) {
	dir, _ := bigLog(t)
	l := openT(t, dir, &Options{NoSync: true})
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	_, err := l.Commit(c, func(tx *Tx) ([][]byte, error) {
		cancel() // the caller gives up while its decide runs
		err := tx.Scan(1, func(Record) error { n++; return nil })
		return [][]byte{[]byte("late")}, err
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, n, 8, "the scan stopped before the end of the log")
	assert.Equal(t, uint64(8), l.Last(), "nothing was appended")
}

// The catch-up at Close has no caller's ctx: it stops at Close's own
// deadline instead.
func TestDeadlineStopsOnceItsTimeHasPassed(t *testing.T) {
	assert.ErrorIs(t, deadline(time.Now().Add(-time.Millisecond)).Err(), context.DeadlineExceeded)
	assert.NoError(t, deadline(time.Now().Add(time.Hour)).Err())
}
