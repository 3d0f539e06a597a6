package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read whose ctx is cancelled while it folds the log again (a snapshot
// section did not check out) returns ctx's error; the handle is not
// broken by it, and the next read, under a live ctx, yields the whole
// story, and a change is taken.
func TestAViewCancelledWhileItRefoldsLeavesTheHandleWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 3})
	require.NoError(t, err)
	v, err := h.Start(ctx, "a log longer than a read", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	for i := range 6 {
		observeNote(t, v, fmt.Sprint("note ", i, strings.Repeat(" and more", 400)))
		_, err := v.TakeBearing(ctx, fmt.Sprint("reading ", i), indexWho, nil)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	id := v.ID()
	dir := filepath.Join(h.voyagesDir(), id)
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	want := v.Info()

	start, _ := snapshotBody(t, dir)
	flipAt(t, dir, start)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = count(v.Entries(cancelled, nil))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, want, v.Info(), "the views are as they were")

	entries, err := collect(v.Entries(ctx, nil))
	require.NoError(t, err)
	assert.Len(t, entries, 6, "the whole story: the six bearings")
	assert.Equal(t, want.Seq, v.Info().Seq)
	_, err = v.Note(ctx, "after", indexWho)
	assert.NoError(t, err, "a cancelled read does not break the handle for changes")
}
