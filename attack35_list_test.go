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

// TestAttackAVoyageSwappedOrRelinkedBehindHelmsBackIsNotVouchedFor: two
// voyages' directories swapped (each file keeps its inode, size and
// times), and a voyage's events/ replaced by a new directory holding the
// same files hard-linked (the same inodes): the index vouches for
// neither voyage, and list reads them themselves.
func TestAttackAVoyageSwappedOrRelinkedBehindHelmsBackIsNotVouchedFor(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		change func(t *testing.T, voyages string, ids []string)
		gone   []int // the voyages no longer vouched for
	}{
		{name: "two voyage directories swapped", gone: []int{0, 1}, change: func(t *testing.T, voyages string, ids []string) {
			a, b, tmp := filepath.Join(voyages, ids[0]), filepath.Join(voyages, ids[1]), filepath.Join(voyages, "swap")
			require.NoError(t, os.Rename(a, tmp))
			require.NoError(t, os.Rename(b, a))
			require.NoError(t, os.Rename(tmp, b))
		}},
		{name: "two events directories swapped", gone: []int{0, 1}, change: func(t *testing.T, voyages string, ids []string) {
			a, b := filepath.Join(voyages, ids[0], "events"), filepath.Join(voyages, ids[1], "events")
			tmp := filepath.Join(voyages, ids[0], "aside")
			require.NoError(t, os.Rename(a, tmp))
			require.NoError(t, os.Rename(b, a))
			require.NoError(t, os.Rename(tmp, b))
		}},
		{name: "events/ replaced by its files hard-linked", gone: []int{0}, change: func(t *testing.T, voyages string, ids []string) {
			events := filepath.Join(voyages, ids[0], "events")
			linked := filepath.Join(voyages, ids[0], "linked")
			require.NoError(t, os.Mkdir(linked, 0o700))
			entries, err := os.ReadDir(events)
			require.NoError(t, err)
			for _, e := range entries {
				require.NoError(t, os.Link(filepath.Join(events, e.Name()), filepath.Join(linked, e.Name())))
			}
			require.NoError(t, os.Rename(events, filepath.Join(voyages, ids[0], "old")))
			require.NoError(t, os.Rename(linked, events))
			require.NoError(t, os.RemoveAll(filepath.Join(voyages, ids[0], "old")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Open(t.TempDir(), nil)
			require.NoError(t, err)
			var ids []string
			for i := range 3 {
				v, err := h.Start(ctx, "voyage", OpenWaters, indexWho, nil)
				require.NoError(t, err)
				observeNote(t, v, "a note")
				if i == 1 {
					require.NoError(t, v.Complete(ctx, logbook.OutcomeFailed, "failed", indexWho))
				}
				ids = append(ids, v.ID())
				require.NoError(t, v.Close())
			}
			require.Len(t, h.indexedViews(), 3)
			tt.change(t, h.voyagesDir(), ids)
			indexed := h.indexedViews()
			for _, i := range tt.gone {
				assert.NotContains(t, indexed, ids[i], "voyage %d is not vouched for", i)
			}
			assert.Contains(t, indexed, ids[2], "the voyage left alone is")
			list, err := h.List(ctx, nil)
			if err == nil {
				assert.Equal(t, listWithoutIndex(t, h), list, "what reading every voyage lists")
				return
			}
			var le *ListError
			require.ErrorAs(t, err, &le, "the damage is named, not shown healthy")
			var gone []string
			for _, i := range tt.gone {
				gone = append(gone, ids[i])
			}
			assert.ElementsMatch(t, gone, le.Voyages)
		})
	}
}
