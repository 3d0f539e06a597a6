package helm

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/logbook"
)

// What a list trusts (docs/design.md): the home index's view of a voyage
// whose writers all closed it, while WATERMARK and the last segment keep
// the stamps its last writer recorded.

// indexedView returns what the home index of h says of voyage id.
func indexedView(t *testing.T, h *Home, id string) []byte {
	t.Helper()
	views, err := homeindex.Read(filepath.Join(h.dir, homeindex.Name))
	require.NoError(t, err)
	require.Contains(t, views, id, "the index vouches for %s", id)
	return views[id]
}

// oldFormView is data, a view of this version, in the form view version
// 5 recorded it: the same view, then a print of the log's directory ("")
// and each of its files by size and modification time.
func oldFormView(t *testing.T, data []byte, events string) []byte {
	t.Helper()
	p, _, err := decodeView(data)
	require.NoError(t, err)
	b := encodeView(p)
	b[0] = oldPrintVersion
	entries, err := os.ReadDir(events)
	require.NoError(t, err)
	names := []string{""}
	for _, e := range entries {
		if e.Name() == "WATERMARK" || filepath.Ext(e.Name()) == ".seg" {
			names = append(names, e.Name())
		}
	}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		st, err := os.Stat(filepath.Join(events, name))
		require.NoError(t, err)
		b = appendStr(b, name)
		b = binary.AppendVarint(b, st.Size())
		b = binary.AppendVarint(b, st.ModTime().UnixNano())
	}
	return b
}

// recordView appends to h's index a writer's session on voyage id that
// closed with view at seq: what a helm writer records, or what the agent
// forges with helm's own index code.
func recordView(t *testing.T, h *Home, id string, seq uint64, view []byte) {
	t.Helper()
	w, err := homeindex.Open(h.dir, id, true, nil)
	require.NoError(t, err)
	require.NoError(t, w.Close(id, seq, view))
}

// A home whose index an earlier helm wrote (view version 5: a print of
// the directory and every file by size and mtime) lists from it while
// those stamps hold, reads a voyage itself once one does not, and a
// writer's next close records the voyage in this version's form.
func TestListTrustsAnOldFormIndexWhileItsPrintsHold(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	var ids []string
	for i := range 3 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		observeNote(t, v, fmt.Sprint("note ", i))
		ids = append(ids, v.ID())
		require.NoError(t, v.Close())
	}
	for _, id := range ids {
		data := indexedView(t, h, id)
		p, _, err := decodeView(data)
		require.NoError(t, err)
		recordView(t, h, id, p.Seq, oldFormView(t, data, filepath.Join(h.voyagesDir(), id, "events")))
		require.Equal(t, byte(oldPrintVersion), indexedView(t, h, id)[0], "the index holds the old form")
	}
	want := listWithoutIndex(t, h)

	assert.Len(t, h.indexedViews(), 3, "old prints that hold vouch")
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, want, list)

	// The old print stamps every file by mtime: a segment touched is seen.
	segs, err := filepath.Glob(filepath.Join(h.voyagesDir(), ids[0], "events", "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(segs[0], later, later))
	assert.NotContains(t, h.indexedViews(), ids[0], "the old print no longer holds")
	list, err = h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, want, list, "read itself, listed the same")

	v, err := h.Voyage(ctx, ids[1])
	require.NoError(t, err)
	observeNote(t, v, "a later note")
	require.NoError(t, v.Close())
	assert.Equal(t, byte(viewVersion), indexedView(t, h, ids[1])[0], "a writer records this version's form")
	assert.Contains(t, h.indexedViews(), ids[1])
	list, err = h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, listWithoutIndex(t, h), list)
}

// Each file a voyage's print stamps, written, replaced, truncated,
// touched or removed behind helm's back, makes List read the voyage
// itself. The change time is in the stamp: the agent rewriting WATERMARK
// with its own bytes and setting its modification time back (touch -d)
// is seen too, which a print of size and mtime alone missed.
func TestListReadsAVoyageWhoseStampedFileChangedBehindHelmsBack(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		change  func(t *testing.T, events string)
		ctime   bool // seen only by the change time (or inode) of the stamp
		damaged bool // the voyage read itself is damaged: named, not listed
	}{
		{name: "WATERMARK rewritten in place, its mtime set back", ctime: true, change: func(t *testing.T, events string) {
			rewriteKeepingMtime(t, filepath.Join(events, "WATERMARK"))
		}},
		{name: "the last segment rewritten in place, its mtime set back", ctime: true, change: func(t *testing.T, events string) {
			rewriteKeepingMtime(t, lastSegment(events))
		}},
		{name: "WATERMARK touched", change: func(t *testing.T, events string) {
			later := time.Now().Add(time.Hour)
			require.NoError(t, os.Chtimes(filepath.Join(events, "WATERMARK"), later, later))
		}},
		{name: "the last segment truncated", damaged: true, change: func(t *testing.T, events string) {
			seg := lastSegment(events)
			st, err := os.Stat(seg)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(seg, st.Size()-1))
		}},
		{name: "WATERMARK replaced by a copy of itself", change: func(t *testing.T, events string) {
			wm := filepath.Join(events, "WATERMARK")
			data, err := os.ReadFile(wm)
			require.NoError(t, err)
			st, err := os.Stat(wm)
			require.NoError(t, err)
			require.NoError(t, os.Remove(wm))
			require.NoError(t, os.WriteFile(wm, data, 0o600))
			require.NoError(t, os.Chtimes(wm, st.ModTime(), st.ModTime()))
		}},
		{name: "events/ restored whole from a copy", change: func(t *testing.T, events string) {
			aside := filepath.Join(t.TempDir(), "events")
			require.NoError(t, os.CopyFS(aside, os.DirFS(events)))
			require.NoError(t, os.RemoveAll(events))
			require.NoError(t, os.Rename(aside, events))
		}},
		{name: "WATERMARK removed", damaged: true, change: func(t *testing.T, events string) {
			require.NoError(t, os.Remove(filepath.Join(events, "WATERMARK")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ctime && runtime.GOOS == "windows" {
				t.Skip("a stamp here has no change time and no inode number")
			}
			h, err := Open(t.TempDir(), nil)
			require.NoError(t, err)
			var ids []string
			for i := range 2 {
				v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
				require.NoError(t, err)
				observeNote(t, v, "a note")
				ids = append(ids, v.ID())
				require.NoError(t, v.Close())
			}
			require.Len(t, h.indexedViews(), 2)

			tt.change(t, filepath.Join(h.voyagesDir(), ids[0], "events"))
			indexed := h.indexedViews()
			assert.NotContains(t, indexed, ids[0], "changed behind helm's back: not vouched for")
			assert.Contains(t, indexed, ids[1], "the other voyage is")
			list, err := h.List(ctx, nil)
			if !tt.damaged {
				require.NoError(t, err)
				assert.Equal(t, listWithoutIndex(t, h), list, "what reading every voyage lists")
				return
			}
			var le *ListError
			require.ErrorAs(t, err, &le, "the damage is named, not shown healthy")
			assert.Equal(t, []string{ids[0]}, le.Voyages)
			require.Len(t, list, 1)
			assert.Equal(t, ids[1], list[0].ID)
		})
	}
}

// rewriteKeepingMtime rewrites the file at path with its own bytes, in
// place, and sets its modification time back: only its change time
// tells. It rewrites until the change time moved (the kernel's clock
// ticks every few milliseconds).
func rewriteKeepingMtime(t *testing.T, path string) {
	t.Helper()
	before, ok := stampFile(path)
	require.True(t, ok)
	st, err := os.Stat(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for {
		require.NoError(t, os.WriteFile(path, data, 0o600))
		require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))
		after, ok := stampFile(path)
		require.True(t, ok)
		require.Equal(t, before.mtime, after.mtime)
		require.Equal(t, before.size, after.size)
		require.Equal(t, before.ino, after.ino, "rewritten in place")
		if after.ctime != before.ctime {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// The adversary forges the stamp too: after rolling a voyage's log back
// (events/ restored from an older copy), it appends to the home index,
// with helm's own code, a writer's close that records the stamps of the
// restored files and the view the voyage had before the rollback. List
// trusts the index and shows that view, without an error: a list is a
// view. Everything else that reads the voyage finds the rollback from
// the caches the agent left (open refuses, verify reports it); had it
// removed them and forged the index at the restored seq, only a witness
// would (the tamper matrix).
func TestAttackForgedIndexStampsMakeListShowARolledBackVoyage(t *testing.T) {
	ctx := context.Background()
	h, id, _ := rolledBack(t)
	_, err := h.List(ctx, nil)
	require.ErrorIs(t, err, ErrDamaged, "before the forgery, list names the rollback")

	forged := indexedView(t, h, id)
	p, _, err := decodeView(forged)
	require.NoError(t, err)
	require.Equal(t, logbook.StatusCompleted, voyageInfo(p).Status)
	fp, ok := fingerprint(filepath.Join(h.voyagesDir(), id, "events"))
	require.True(t, ok)
	recordView(t, h, id, p.Seq, appendFingerprint(encodeView(p), fp))

	list, err := h.List(ctx, nil)
	require.NoError(t, err, "the forged stamps hold: list trusts the index")
	require.Len(t, list, 1)
	assert.Equal(t, logbook.StatusCompleted, list[0].Status, "list shows the view the agent chose")
	assert.Equal(t, p.Seq, list[0].Seq)

	_, err = h.Voyage(ctx, id)
	require.ErrorIs(t, err, ErrDamaged, "opening it finds the rollback")
	assert.Contains(t, err.Error(), "rolled back or truncated")
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.False(t, rep.OK(), "verify reports it")
}

// A listing is sorted the oldest first, ids breaking ties, as
// slices.SortFunc on the voyages sorted it.
func TestSortListedOrdersByCreationThenID(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{0, 1, 2, 7, 100, 1000} {
		t.Run(fmt.Sprint(n, " voyages"), func(t *testing.T) {
			var in []VoyageInfo
			for i := range n {
				at := base.Add(time.Duration(r.IntN(50)) * time.Millisecond).Add(time.Duration(r.IntN(3)))
				in = append(in, VoyageInfo{ID: fmt.Sprintf("%08x-%d", r.Uint32()%64, i), Created: at, Intent: fmt.Sprint(i)})
			}
			want := slices.Clone(in)
			slices.SortFunc(want, func(a, b VoyageInfo) int {
				return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
			})
			sortListed(in)
			assert.Equal(t, want, in)
		})
	}
}
