package helm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A view whose refold failed once keeps failing: the handle's views were
// left part way by the failed fold, and a second read of the story, the
// artifact index or the voyage's info must not show them as the story.
func TestAViewWhoseRefoldFailedKeepsFailingOnTheNextRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, id := snapshottedVoyage(t)
	dir := filepath.Join(h.voyagesDir(), id)
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	full := v.Info()

	start, end := snapshotBody(t, dir)
	flipAt(t, dir, start)
	flipAt(t, dir, end-2)
	flipFirstRecord(t, filepath.Join(dir, "events"))

	_, err = count(v.Entries(ctx, nil))
	require.Error(t, err, "the first read says the story cannot be read")

	n, err := count(v.Entries(ctx, nil))
	assert.Error(t, err, "a second read of the story yielded %d entries and no error", n)
	n, err = count(v.Artifacts(ctx, nil))
	assert.Error(t, err, "a read of the artifact index yielded %d artifacts and no error", n)
	assert.Equal(t, full.Seq, v.Info().Seq, "Info shows the views the failed fold left")
}
