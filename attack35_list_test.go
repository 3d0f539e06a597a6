package helm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
)

// TestAttackASegmentAddedAfterTheLastIsSeenByList: the agent writes, with
// helm's own code in a scratch home, the next segment of a voyage's log
// (the voyage completed) and drops it into the voyage's events/ beside
// the last one, leaving WATERMARK and the last segment alone. Open reads
// the new segment: the voyage is completed. A list must not show it
// active from the index.
func TestAttackASegmentAddedAfterTheLastIsSeenByList(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "a voyage", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	observeNote(t, v, "a note")
	id := v.ID()
	require.NoError(t, v.Close())
	require.Contains(t, h.indexedViews(), id)
	events := filepath.Join(h.voyagesDir(), id, "events")

	// The scratch home: a copy of the voyage, written on with segments so
	// small that its next change opens a new one.
	scratch := t.TempDir()
	require.NoError(t, tamper.CopyDir(filepath.Join(h.voyagesDir(), id), filepath.Join(scratch, "voyages", id)))
	hs, err := Open(scratch, &Options{SegmentSize: 1})
	require.NoError(t, err)
	vs, err := hs.Voyage(ctx, id)
	require.NoError(t, err)
	require.NoError(t, vs.Complete(ctx, logbook.OutcomeCompleted, "done behind helm's back", indexWho))
	require.NoError(t, vs.Close())
	before, err := os.ReadDir(events)
	require.NoError(t, err)
	have := map[string]bool{}
	for _, e := range before {
		have[e.Name()] = true
	}
	after, err := os.ReadDir(tamper.Events(scratch, id))
	require.NoError(t, err)
	added := 0
	for _, e := range after {
		if filepath.Ext(e.Name()) == ".seg" && !have[e.Name()] {
			data, err := os.ReadFile(filepath.Join(tamper.Events(scratch, id), e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(events, e.Name()), data, 0o600))
			added++
		}
	}
	require.Equal(t, 1, added, "the scratch log's new segment")

	list, listErr := h.List(ctx, nil)
	opened, err := h.Voyage(ctx, id)
	require.NoError(t, err, "open reads the added segment")
	truth := opened.Info().Status
	require.NoError(t, opened.Close())
	require.Equal(t, logbook.StatusCompleted, truth)
	require.NoError(t, listErr)
	require.Len(t, list, 1)
	assert.Equal(t, truth, list[0].Status, "list shows what opening the voyage shows")
}
