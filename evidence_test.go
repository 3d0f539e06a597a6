package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// rolledBack is a home whose one voyage wrote notes, had its events/
// copied aside, wrote 50 more and completed, and then had events/
// restored whole from the copy (WATERMARK included): the log checks out,
// shorter. Its caches (summary.json, snapshot, home index) were written
// after the later writes; keep names those left in place.
func rolledBack(t *testing.T, keep ...string) (h *Home, id string, caches map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	h, err := Open(home, &Options{NoSync: true, snapshotEvery: 5})
	require.NoError(t, err)
	v, err := h.Start(ctx, "a voyage to roll back", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id = v.ID()
	for i := range 10 {
		_, err := v.Note(ctx, fmt.Sprint("early note ", i), indexWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	dir := filepath.Join(h.voyagesDir(), id)
	aside := filepath.Join(t.TempDir(), "events")
	require.NoError(t, os.CopyFS(aside, os.DirFS(filepath.Join(dir, "events"))))

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	for i := range 50 {
		_, err := v.Note(ctx, fmt.Sprint("later note ", i), indexWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", indexWho))
	require.NoError(t, v.Close())

	paths := map[string]string{
		summaryName:    filepath.Join(dir, summaryName),
		snapshotName:   filepath.Join(dir, snapshotName),
		homeindex.Name: filepath.Join(home, homeindex.Name),
	}
	caches = map[string][]byte{}
	for name, path := range paths {
		if len(keep) > 0 && !contains(keep, name) {
			require.NoError(t, os.Remove(path))
			continue
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err, "the writes left %s", name)
		caches[path] = data
	}
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "events")))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "events"), os.DirFS(aside)))
	return h, id, caches
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A rolled-back log whose caches prove it went further is DAMAGED: List
// names it, opening it (every read, every write) refuses with the cache
// and both seqs, Verify reports each cache; and nothing of that rewrites
// a cache. Each cache alone is evidence.
func TestCachesBeyondTheLogAreEvidenceOfARollback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keep []string
		want []string // what the damage names
	}{
		{"every cache", nil, []string{summaryName, "the snapshot", "the home index"}},
		{"the summary alone", []string{summaryName}, []string{summaryName}},
		{"the snapshot alone", []string{snapshotName}, []string{"the snapshot"}},
		{"the home index alone", []string{homeindex.Name}, []string{"the home index"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h, id, caches := rolledBack(t, tt.keep...)

			_, err := h.List(ctx, nil)
			var le *ListError
			require.ErrorAs(t, err, &le, "list names the voyage")
			assert.Equal(t, []string{id}, le.Voyages)
			assert.ErrorIs(t, err, ErrDamaged)
			assert.Contains(t, err.Error(), "the log ends at seq 11;")
			assert.Contains(t, err.Error(), "rolled back or truncated")

			_, err = h.Voyage(ctx, id)
			require.ErrorIs(t, err, ErrDamaged, "a read refuses")
			assert.Contains(t, err.Error(), "the log ends at seq 11; "+tt.want[0]+" records seq ")
			assert.Equal(t, "verify", string(HintOf(err).Kind))
			assert.Contains(t, HintOf(err).Text, "witness")

			rep, err := h.Verify(ctx, id, nil)
			require.NoError(t, err)
			assert.False(t, rep.OK())
			var reasons []string
			for _, p := range rep.Problems {
				reasons = append(reasons, p.Reason)
			}
			require.Len(t, reasons, len(tt.want), "%v", reasons)
			for i, what := range tt.want {
				assert.Regexp(t, `^the log ends at seq 11; `+what+` records seq 6\d: rolled back or truncated$`, reasons[i])
			}

			_, err = h.Start(ctx, "another voyage", OpenWaters, indexWho, nil)
			require.NoError(t, err, "the other voyages take writes")
			_, err = h.Voyage(ctx, id) // a note needs the voyage open: refused
			require.ErrorIs(t, err, ErrDamaged)

			for path, data := range caches {
				now, err := os.ReadFile(path)
				require.NoError(t, err, "%s is still there", path)
				if filepath.Base(path) == homeindex.Name {
					// The other voyage's writer appended its records; this
					// voyage's are as they were.
					seqs, err := homeindex.Seqs(path)
					require.NoError(t, err)
					assert.Greater(t, seqs[id], uint64(11))
					assert.Equal(t, data, now[:len(data)], "the index's records before the other voyage's")
					continue
				}
				assert.Equal(t, data, now, "%s is evidence: untouched", path)
			}
		})
	}
}

// A cache older than the log says nothing: caches lag.
func TestCachesOlderThanTheLogAreFine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 5})
	require.NoError(t, err)
	v, err := h.Start(ctx, "caches lag", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 10 {
		_, err := v.Note(ctx, fmt.Sprint("note ", i), indexWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	dir := filepath.Join(h.voyagesDir(), id)
	old := map[string][]byte{}
	for _, name := range []string{summaryName, snapshotName} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		old[name] = data
	}
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	for i := range 20 {
		_, err := v.Note(ctx, fmt.Sprint("later note ", i), indexWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	for name, data := range old {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}

	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, uint64(31), list[0].Seq)
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	_, err = v.Note(ctx, "and on", indexWho)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

// summary.json records the chain's head; one at the log's last seq with
// another hash is the log edited (or rolled back and written again):
// Verify, which computes the chain, reports it.
func TestASummaryHeadThatIsNotTheLogsIsDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Start(ctx, "heads", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	_, err = v.Note(ctx, "a note", indexWho)
	require.NoError(t, err)
	head, err := v.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	path := filepath.Join(h.voyagesDir(), id, summaryName)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	require.Equal(t, map[string]any{"seq": float64(head.Seq), "hash": head.String()[len(fmt.Sprint(head.Seq))+1:]}, s["head"], "the summary records the head")

	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v", rep.Problems)

	other := chain.Head{Seq: head.Seq, Hash: chain.Genesis("another voyage")}
	s["head"] = other
	data, err = json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	rep, err = h.Verify(ctx, id, nil)
	require.NoError(t, err)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, fmt.Sprintf("%s records head %s at seq %d, the log's is %s: edited or rolled back", summaryName, other, head.Seq, head), rep.Problems[0].Reason)
	assert.Equal(t, path, rep.Problems[0].File)
}

// An event record turned into a stub (its bytes reclaimed, its place in
// the chain kept) that no artifact names hides an entry: every read that
// folds or yields the events refuses, as for other damage.
func TestAStubNoArtifactNamesMakesReadsRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, SegmentSize: 4 << 10})
	require.NoError(t, err)
	v, err := h.Start(ctx, "nothing hidden", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 40 {
		observeNote(t, v, fmt.Sprint("a look ", i, " with some words to fill a segment sooner"))
	}
	require.NoError(t, v.Close())
	dir := filepath.Join(h.voyagesDir(), id)
	_, err = os.Stat(filepath.Join(dir, snapshotName))
	require.ErrorIs(t, err, os.ErrNotExist, "no snapshot: opening folds from the first event")

	events := filepath.Join(dir, "events")
	log, err := segment.Open(ctx, events, &segment.Options{Identity: id, NoSync: true, SegmentSize: 4 << 10})
	require.NoError(t, err)
	// An observation is no entry of the story: its numbers do not tell
	// that one is missing.
	var observed []uint64
	require.NoError(t, log.Scan(ctx, 1, func(r segment.Record) error {
		if e, err := projection.Decode(r.Data); err == nil && e.Type == projection.Observed {
			observed = append(observed, r.Seq)
		}
		return nil
	}))
	require.Len(t, observed, 40)
	target := observed[2]
	require.NotZero(t, target)
	rec, err := log.Reclaim(ctx, func(r segment.Record) bool { return r.Seq == target })
	require.NoError(t, err)
	require.Equal(t, 1, int(rec.Records), "the note's record is a stub, in a sealed segment")
	require.NoError(t, log.Close())

	_, err = h.Voyage(ctx, id)
	require.ErrorIs(t, err, ErrDamaged, "opening folds every event: refused")
	assert.Contains(t, err.Error(), fmt.Sprintf("record %d was reclaimed, but no artifact was stored in it", target))

	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.False(t, rep.OK())
}

// A voyage opened from a snapshot taken before the stub still shows the
// entry (nothing is hidden there); reading its events, or exporting them,
// meets the stub and refuses.
func TestAStubNoArtifactNamesMakesEventsAndExportRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, SegmentSize: 4 << 10})
	require.NoError(t, err)
	v, err := h.Start(ctx, "nothing hidden", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 40 {
		observeNote(t, v, fmt.Sprint("a look ", i, " with some words to fill a segment sooner"))
	}
	require.NoError(t, v.Close())
	events := filepath.Join(h.voyagesDir(), id, "events")
	log, err := segment.Open(ctx, events, &segment.Options{Identity: id, NoSync: true, SegmentSize: 4 << 10})
	require.NoError(t, err)
	var observed []uint64
	require.NoError(t, log.Scan(ctx, 1, func(r segment.Record) error {
		if e, err := projection.Decode(r.Data); err == nil && e.Type == projection.Observed {
			observed = append(observed, r.Seq)
		}
		return nil
	}))
	target := observed[2]
	_, err = log.Reclaim(ctx, func(r segment.Record) bool { return r.Seq == target })
	require.NoError(t, err)
	require.NoError(t, log.Close())

	// The views as a full open folds them cannot be had; the handle's
	// read paths that scan the log are what this test is about.
	v = &Voyage{home: h, id: id, dir: filepath.Dir(events)}
	j := &diskJournal{v: v, d: h.back.(*disk)}
	j.log, err = segment.Open(ctx, events, &segment.Options{Identity: id, NoSync: true})
	require.NoError(t, err)
	defer j.log.Close()
	v.rec = j
	n := 0
	for _, err := range v.Events(ctx, 0) {
		if err != nil {
			require.ErrorIs(t, err, ErrDamaged)
			assert.Contains(t, err.Error(), fmt.Sprintf("record %d was reclaimed", target))
			n = -1
			break
		}
		n++
	}
	assert.Equal(t, -1, n, "the events end with the damage")
	err = v.exportArchive(ctx, io.Discard)
	require.ErrorIs(t, err, ErrDamaged, "export refuses")
}
