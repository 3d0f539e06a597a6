package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/store/storetest"
)

var snapWho = logbook.Who{Identity: "ana", Role: "coder", Method: "human"}

// sharedSnapHome is a shared home on a storetest.Dir in dir whose writers
// put a snapshot once every events were folded since the last.
func sharedSnapHome(t *testing.T, dir string, every uint64) *Home {
	t.Helper()
	st := storetest.OpenDir(filepath.Join(dir, "store"), &storetest.DirOptions{NoSync: true})
	h, err := OpenStore(filepath.Join(dir, "local"), st, "the test's store", &Options{NoSync: true, snapshotEvery: every})
	require.NoError(t, err)
	return h
}

// writeNotes starts a voyage in h (or opens id) and records n notes, then
// closes it.
func writeNotes(t *testing.T, h *Home, id string, n int) string {
	t.Helper()
	ctx := context.Background()
	var v *Voyage
	var err error
	if id == "" {
		v, err = h.Start(ctx, "a long shared voyage", OpenWaters, snapWho, nil)
	} else {
		v, err = h.Voyage(ctx, id)
	}
	require.NoError(t, err)
	for i := range n {
		_, err := v.Note(ctx, fmt.Sprint("note ", i), snapWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	return v.ID()
}

// storeSnapshotPath is where storetest.Dir keeps a voyage's snapshot.
func storeSnapshotPath(dir, id string) string {
	return filepath.Join(dir, "store", "voyages", id, "store-snapshot")
}

// foldedInfo is the voyage's view folded from every event.
func foldedInfo(t *testing.T, h *Home, id string) VoyageInfo {
	t.Helper()
	v, err := h.back.open(context.Background(), id, false)
	require.NoError(t, err)
	defer v.Close()
	require.Zero(t, v.snapSeq)
	return v.Info()
}

func TestASharedVoyageOpensFromTheSnapshotItsWriterPut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := sharedSnapHome(t, dir, 5)
	id := writeNotes(t, h, "", 12)
	writeNotes(t, h, id, 3) // after the snapshot: folded on open

	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	assert.Equal(t, uint64(13), v.snapSeq, "opened from the snapshot the first writer's Close put (the start and 12 notes)")
	assert.Equal(t, foldedInfo(t, h, id), v.Info(), "the views are those the events give")
	var texts []string
	for e, err := range v.Entries(ctx, nil) {
		require.NoError(t, err)
		if e.Note != nil {
			texts = append(texts, e.Note.Text)
		}
	}
	assert.Len(t, texts, 15, "the notes, read from the snapshot and after it")
	assert.Equal(t, "note 2", texts[len(texts)-1])
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	require.NotNil(t, rep.Snapshot)
	assert.Equal(t, uint64(13), rep.Snapshot.Seq)
	assert.Empty(t, rep.Snapshot.Ignored)
}

// A voyage written before shared snapshots existed (a store that keeps
// none, or a voyage whose writers never put one) opens by folding every
// event, as before; readers never put one, and the next writer past the
// threshold does.
func TestASharedVoyageWithoutSnapshotOpensAsBeforeAndReadersWriteNone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := sharedSnapHome(t, dir, 1<<30) // as an earlier version: no snapshot
	id := writeNotes(t, old, "", 12)
	path := storeSnapshotPath(dir, id)
	require.NoFileExists(t, path)

	h := sharedSnapHome(t, dir, 5)
	r, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	assert.Zero(t, r.snapSeq, "no snapshot: folded from the first event")
	assert.Equal(t, foldedInfo(t, h, id), r.Info())
	_, err = h.List(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.NoFileExists(t, path, "reading never writes")

	writeNotes(t, h, id, 1)
	require.FileExists(t, path, "a writer past the threshold puts one")
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	assert.Equal(t, uint64(14), v.snapSeq)
}

// The recorded agent holds the store's credentials and can put any
// snapshot there: one whose head is not the log's, or that names another
// identity, is passed by (the views are the events'), and verify says
// why; one after the log's end makes the voyage damaged, as a summary
// beyond the log does; one at the log's true head with forged views is
// trusted by opening (what a cache is for, as on disk) and reported as
// damage by verify.
func TestAForgedSharedSnapshotIsPassedByOrReported(t *testing.T) {
	ctx := context.Background()
	forge := func(t *testing.T, path string, head func(chain.Head) chain.Head, views func([]byte) []byte) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		line, data, ok := bytes.Cut(bytes.TrimPrefix(b, []byte("HELMDSN1")), []byte("\n"))
		require.True(t, ok)
		var h chain.Head
		require.NoError(t, json.Unmarshal(line, &h))
		h = head(h)
		hj, err := json.Marshal(h)
		require.NoError(t, err)
		if views != nil {
			data = views(data)
		}
		require.NoError(t, os.WriteFile(path, append(append(append([]byte("HELMDSN1"), hj...), '\n'), data...), 0o600))
	}
	same := func(h chain.Head) chain.Head { return h }
	reencode := func(t *testing.T, edit func(vv *projection.VoyageView)) func([]byte) []byte {
		return func(data []byte) []byte {
			st, err := decodeSharedSnapshot(data)
			require.NoError(t, err)
			require.NoError(t, st.Load(projection.AllSections))
			edit(&st.Voyage)
			out, err := st.EncodeSnapshot()
			require.NoError(t, err)
			return append([]byte(sharedSnapshotMagic), out...)
		}
	}
	for _, tc := range []struct {
		name        string
		head        func(chain.Head) chain.Head
		views       func(t *testing.T) func([]byte) []byte
		openDamaged bool
		trusted     bool
		ignored     string
		problem     string
	}{
		{name: "another head at its record", head: func(h chain.Head) chain.Head { h.Hash[0] ^= 1; return h },
			ignored: "is not the log's"},
		{name: "another record, the log's head elsewhere", head: func(h chain.Head) chain.Head { h.Seq -= 2; return h },
			ignored: "is not the log's"},
		{name: "after the log's end", head: func(h chain.Head) chain.Head { h.Seq += 100; return h },
			openDamaged: true, problem: "the log lost records it had acknowledged, or the snapshot was forged"},
		{name: "another identity at the log's head", head: same,
			views: func(t *testing.T) func([]byte) []byte {
				return reencode(t, func(vv *projection.VoyageView) { vv.Identity = "mallory" })
			},
			ignored: "identities are not the log's"},
		{name: "forged views at the log's head", head: same,
			views: func(t *testing.T) func([]byte) []byte {
				return reencode(t, func(vv *projection.VoyageView) { vv.Intent = "a forged intent" })
			},
			trusted: true, problem: "does not give the views its events give"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := sharedSnapHome(t, dir, 5)
			id := writeNotes(t, h, "", 12)
			want := foldedInfo(t, h, id)
			var views func([]byte) []byte
			if tc.views != nil {
				views = tc.views(t)
			}
			forge(t, storeSnapshotPath(dir, id), tc.head, views)
			forged, err := os.ReadFile(storeSnapshotPath(dir, id))
			require.NoError(t, err)

			v, err := h.Voyage(ctx, id)
			if tc.openDamaged {
				require.ErrorIs(t, err, ErrDamaged)
				assert.ErrorContains(t, err, tc.problem)
			} else {
				require.NoError(t, err)
				if tc.trusted {
					assert.Equal(t, "a forged intent", v.Info().Intent, "a cache at the log's true head is trusted by opening, as on disk")
				} else {
					assert.Zero(t, v.snapSeq, "passed by")
					assert.Equal(t, want, v.Info(), "the views are the events'")
				}
				require.NoError(t, v.Close())
			}
			after, err := os.ReadFile(storeSnapshotPath(dir, id))
			require.NoError(t, err)
			assert.Equal(t, forged, after, "reading never writes: the forged snapshot stays, as evidence")

			rep, err := h.verify(ctx, id, nil)
			require.NoError(t, err)
			if tc.problem != "" {
				require.False(t, rep.OK())
				assert.Contains(t, fmt.Sprint(rep.Problems), tc.problem)
			} else {
				assert.True(t, rep.OK(), "%v", rep.Problems)
				require.NotNil(t, rep.Snapshot)
				assert.Contains(t, rep.Snapshot.Ignored, tc.ignored)
			}
		})
	}
}
