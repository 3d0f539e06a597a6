package helm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// lazyViews reads what a Voyage shows in an order shuffled by r, first
// what the head of a snapshot answers (counts, pages of the artifact
// index), so that a voyage opened from one reads its sections in any
// order; it returns them in a fixed order.
func lazyViews(t *testing.T, r *rand.Rand, v *Voyage) []any {
	out := make([]any, 8)
	var pages []ArtifactInfo
	reads := []func(){
		func() { out[0] = v.Info() },
		func() { out[1] = v.Slate() },
		func() { out[2] = entriesOf(t, v) },
		func() { out[3] = failedOf(t, v) },
		func() { out[4] = artifactsOf(t, v) },
		func() { out[5] = v.Info().Counts },
		func() { out[6] = v.Info().Counts.Entries },
		func() {
			for after := ""; ; {
				p, err := v.artifactsAfter(context.Background(), after, 1+r.IntN(3))
				require.NoError(t, err)
				if len(p) == 0 {
					break
				}
				pages = append(pages, p...)
				after = p[len(p)-1].Hash
			}
			out[7] = pages
		},
	}
	r.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	for _, read := range reads {
		read()
	}
	return out
}

// requireSameAsReplay checks that v (opened from its snapshot, perhaps)
// shows what folding every event shows, its views read in a random
// order.
func requireSameAsReplay(t *testing.T, h *Home, v *Voyage, msg string) {
	t.Helper()
	full, err := h.back.open(context.Background(), v.ID(), false)
	require.NoError(t, err, msg)
	defer full.Close()
	r := rand.New(rand.NewPCG(uint64(len(msg)), v.Info().Seq))
	want := lazyViews(t, r, full)
	if arts := want[4].([]ArtifactInfo); len(arts) == 0 {
		want[7] = []ArtifactInfo(nil)
	}
	assert.Equal(t, want, lazyViews(t, r, v), msg)
	v.mu.Lock()
	full.mu.Lock()
	require.NoError(t, v.loadView(context.Background(), projection.AllSections))
	assert.Equal(t, full.st, v.st, msg)
	full.mu.Unlock()
	v.mu.Unlock()
}

// For random voyages, written and reopened over and over with snapshots
// taken every few events, every open from a snapshot shows what folding
// every event shows.
func TestOpenFromSnapshotIsTheReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	fromSnapshot := 0
	for round := range 4 {
		opts := &Options{NoSync: true, snapshotEvery: 5}
		if round%2 == 1 {
			opts.SegmentSize = 8 << 10 // marks in sealed segments too
		}
		h, err := Open(t.TempDir(), opts)
		require.NoError(t, err)
		v, err := h.Start(ctx, fmt.Sprint("random voyage ", round), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		id := v.ID()
		for step := range 30 {
			for range 1 + r.IntN(6) {
				switch k := r.IntN(10); {
				case k < 5:
					m, err := marks.NewContext(fmt.Sprint("note ", r.IntN(12)))
					require.NoError(t, err)
					_, err = v.Observe(ctx, m, indexWho, nil)
					require.NoError(t, err)
				case k < 7:
					if _, err := v.TakeBearing(ctx, fmt.Sprint("reading ", step), indexWho, nil); err != nil {
						require.ErrorIs(t, err, ErrEmptySlate)
					}
				case k < 8:
					if n := v.Info().Counts.Entries; n > 0 {
						_, err := v.Challenge(ctx, 1+r.IntN(n), Challenge{Feedback: "no", Reading: fmt.Sprint("better ", step)}, indexWho)
						require.NoError(t, err)
					}
				case k < 9:
					if s := v.Slate(); len(s) > 0 {
						require.NoError(t, v.Erase(ctx, s[r.IntN(len(s))].Key, indexWho))
					}
				default:
					if a := artifactsOf(t, v); len(a) > 0 && a[0].Status == logbook.ArtifactStowed {
						require.NoError(t, v.Jettison(ctx, a[0].Hash, "stale", indexWho))
					}
				}
			}
			require.NoError(t, v.Close())
			v, err = h.Voyage(ctx, id)
			require.NoError(t, err)
			if v.snapSeq > 0 {
				fromSnapshot++
			}
			requireSameAsReplay(t, h, v, fmt.Sprintf("round %d, step %d", round, step))
		}
		require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", indexWho))
		require.NoError(t, v.Close())
		v, err = h.Voyage(ctx, id)
		require.NoError(t, err)
		requireSameAsReplay(t, h, v, fmt.Sprintf("round %d, completed", round))
		require.NoError(t, v.Close())
	}
	assert.Greater(t, fromSnapshot, 60, "most opens went through a snapshot")
}

// rewriteSnapshot rewrites the voyage's snapshot with change applied to
// its mark and its encoded views, with a checksum that matches.
func rewriteSnapshot(t *testing.T, dir string, change func(m *segment.Mark, views []byte) []byte) {
	path := filepath.Join(dir, snapshotName)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rest := data[len(snapshotMagic)+4:]
	n := binary.LittleEndian.Uint32(rest)
	var m segment.Mark
	require.NoError(t, json.Unmarshal(rest[4:4+n], &m))
	views := change(&m, append([]byte(nil), rest[4+n:]...))
	mj, err := json.Marshal(m)
	require.NoError(t, err)
	out := binary.LittleEndian.AppendUint32([]byte(snapshotMagic), crc32.Checksum(mj, crcTable))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(mj)))
	out = append(append(out, mj...), views...)
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

// A damaged snapshot, or one of another history of the log, is ignored:
// the voyage opens from its first event, and Verify says why. One that
// checks out but lies is trusted by opening, and Verify calls it damage.
func TestSnapshotsThatDoNotCheckOutAreIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 3})
	require.NoError(t, err)
	v, err := h.Start(ctx, "snapshots", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 6 {
		observeNote(t, v, fmt.Sprint("note ", i))
	}
	require.NoError(t, v.Close())
	dir := filepath.Join(h.voyagesDir(), id)
	good, err := os.ReadFile(filepath.Join(dir, snapshotName))
	require.NoError(t, err)

	openIgnoring := func(what string) *VerifyReport {
		t.Helper()
		v, err := h.Voyage(ctx, id)
		require.NoError(t, err, what)
		requireSameAsReplay(t, h, v, what)
		assert.Zero(t, v.snapSeq, "%s: the snapshot is not used, once its views were read", what)
		require.NoError(t, v.Close())
		rep, err := h.Verify(ctx, id, nil)
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%s: an ignored snapshot is not damage: %v", what, rep.Problems)
		require.NotNil(t, rep.Snapshot, what)
		assert.NotEmpty(t, rep.Snapshot.Ignored, what)
		return rep
	}

	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-3] ^= 1
	require.NoError(t, os.WriteFile(filepath.Join(dir, snapshotName), flipped, 0o600))
	assert.Contains(t, openIgnoring("a flipped bit").Snapshot.Ignored, "checksum")

	require.NoError(t, os.WriteFile(filepath.Join(dir, snapshotName), good, 0o600))
	rewriteSnapshot(t, dir, func(m *segment.Mark, views []byte) []byte { m.Sum++; return views })
	assert.Contains(t, openIgnoring("another history").Snapshot.Ignored, "does not go on from it")

	// The good one is used, and Verify finds nothing wrong with it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, snapshotName), good, 0o600))
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	assert.NotZero(t, v.snapSeq)
	requireSameAsReplay(t, h, v, "the good snapshot")
	require.NoError(t, v.Close())
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Empty(t, rep.Snapshot.Ignored)

	// A snapshot that checks out but lies (here: another intent).
	rewriteSnapshot(t, dir, func(_ *segment.Mark, views []byte) []byte {
		st, err := projection.DecodeSnapshot(views)
		require.NoError(t, err)
		st.Voyage.Intent = "a forged intent"
		forged, err := st.EncodeSnapshot()
		require.NoError(t, err)
		return forged
	})
	rep, err = h.Verify(ctx, id, nil)
	require.NoError(t, err)
	require.False(t, rep.OK())
	assert.Contains(t, rep.Problems[0].Reason, "remove it")
}

// snapshotBody returns where the voyage's snapshot's blocks start (after
// its mark and its head) and the file's length.
func snapshotBody(t *testing.T, dir string) (start, end int64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, snapshotName))
	require.NoError(t, err)
	at := len(snapshotMagic) + 8 + int(binary.LittleEndian.Uint32(data[len(snapshotMagic)+4:]))
	require.Equal(t, byte('S'), data[at])
	require.Equal(t, byte(projection.SnapshotVersion), data[at+1])
	head := int(binary.LittleEndian.Uint32(data[at+2:]))
	return int64(at + 2 + 4 + head + 4), int64(len(data))
}

// flipAt flips a bit of the snapshot at off, in place: a handle that has
// it open reads the damage when it reads that block.
func flipAt(t *testing.T, dir string, off int64) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, snapshotName), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := []byte{0}
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x04
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// snapshottedVoyage writes a voyage of six observations and three
// bearings whose snapshot (taken every 3 events) is at its
// last event.
func snapshottedVoyage(t *testing.T) (*Home, string) {
	t.Helper()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 3})
	require.NoError(t, err)
	v, err := h.Start(ctx, "late damage", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	for i := range 6 {
		observeNote(t, v, fmt.Sprint("note ", i))
		if i%2 == 1 {
			_, err := v.TakeBearing(ctx, fmt.Sprint("reading ", i), indexWho, nil)
			require.NoError(t, err)
		}
	}
	require.NoError(t, v.Close())
	return h, v.ID()
}

// A block of the snapshot found damaged when it is read, after the voyage
// opened from the snapshot's head, is a snapshot that does not check out:
// the views are folded from the first event, whether a view, a refresh or
// a change read it; nothing is lost and no error reaches the caller.
func TestSnapshotDamageFoundLateFoldsEveryEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	voyage := snapshottedVoyage
	for _, tt := range []struct {
		name    string
		entries bool // the flip is in the first entries' block, else in the last artifacts'
		use     func(v *Voyage)
	}{
		{"an entry, read by a view", true, func(v *Voyage) { entriesOf(t, v) }},
		{"an entry, read by a challenge", true, func(v *Voyage) {
			_, err := v.Challenge(ctx, 1, Challenge{Feedback: "no", Reading: "better"}, indexWho)
			require.NoError(t, err)
		}},
		{"an artifact, read by a page of the index", false, func(v *Voyage) {
			_, err := v.artifactsAfter(ctx, "", 2)
			require.NoError(t, err)
		}},
		{"an artifact, read by an observation", false, func(v *Voyage) { observeNote(t, v, "another") }},
		{"an artifact, looked up by a repeated observation", false, func(v *Voyage) { observeNote(t, v, "note 5") }},
		{"an artifact, looked up by the stower once streamed", false, func(v *Voyage) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("streamed text\n"), 0o600))
			m, err := marks.NewFileContents("f.txt")
			require.NoError(t, err)
			_, err = v.Observe(ctx, m, indexWho, &ObserveOptions{Env: &marks.Env{Dir: dir, StreamAbove: 1}})
			require.NoError(t, err)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, id := voyage(t)
			dir := filepath.Join(h.voyagesDir(), id)
			v, err := h.Voyage(ctx, id)
			require.NoError(t, err)
			v.mu.Lock()
			require.NotZero(t, v.snapSeq, "opened from the snapshot")
			require.Equal(t, projection.AllSections, v.st.Pending(), "its head alone")
			v.mu.Unlock()
			start, end := snapshotBody(t, dir)
			if tt.entries {
				flipAt(t, dir, start)
			} else {
				flipAt(t, dir, end-2)
			}
			tt.use(v)
			v.mu.Lock()
			assert.Zero(t, v.snapSeq, "the snapshot was dropped")
			assert.Zero(t, v.st.Pending())
			assert.Nil(t, v.snapFile)
			v.mu.Unlock()
			requireSameAsReplay(t, h, v, tt.name)
			require.NoError(t, v.Close())
		})
	}
}

// A snapshot of the first form (one checksum over the whole file) is
// ignored: the voyage opens by folding every event, and Verify says so.
func TestSnapshotOfTheFirstFormIsIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 3})
	require.NoError(t, err)
	v, err := h.Start(ctx, "old snapshot", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 4 {
		observeNote(t, v, fmt.Sprint("note ", i))
	}
	require.NoError(t, v.Close())
	dir := filepath.Join(h.voyagesDir(), id)
	data, err := os.ReadFile(filepath.Join(dir, snapshotName))
	require.NoError(t, err)
	copy(data, "HELMSNP1")
	require.NoError(t, os.WriteFile(filepath.Join(dir, snapshotName), data, 0o600))

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	assert.Zero(t, v.snapSeq)
	requireSameAsReplay(t, h, v, "a first-form snapshot")
	require.NoError(t, v.Close())
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Contains(t, rep.Snapshot.Ignored, "not a helm snapshot of this version")
}

// Observing and taking a bearing on a voyage opened from its snapshot
// read neither the snapshot's entries nor its failed actions: the
// bearing is numbered after them and handed back as recorded.
func TestBearingAfterTheSnapshotLeavesItsEntriesUnread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 3})
	require.NoError(t, err)
	v, err := h.Start(ctx, "tail", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	for i := range 6 {
		observeNote(t, v, fmt.Sprint("note ", i))
		_, err := v.TakeBearing(ctx, fmt.Sprint("reading ", i), indexWho, nil)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())

	h.opts.snapshotEvery = 1000 // the snapshot stays where it is
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	observeNote(t, v, "after the snapshot")
	e, err := v.TakeBearing(ctx, "a reading after the snapshot", indexWho, nil)
	require.NoError(t, err)
	assert.Equal(t, 7, e.N)
	assert.Equal(t, "a reading after the snapshot", e.Bearing.Reading.Text)
	assert.Equal(t, 7, v.Info().Counts.Entries)
	v.mu.Lock()
	assert.Equal(t, projection.AllSections, v.st.Pending(), "observing looked its artifact up, reading nothing else")
	v.mu.Unlock()
	requireSameAsReplay(t, h, v, "a bearing after the snapshot")
	require.NoError(t, v.Close())

	// Opened again, with that tail after the snapshot (the snapshot is not
	// due yet): folding it reads nothing of the snapshot but its head.
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	v.mu.Lock()
	assert.Less(t, v.snapSeq, v.st.Voyage.Seq, "a tail after the snapshot")
	assert.Equal(t, projection.AllSections, v.st.Pending(), "a stow and a bearing in the tail read nothing")
	v.mu.Unlock()
	assert.Equal(t, LogbookCounts{Entries: 7, Bearings: 7}, v.Info().Counts)
	requireSameAsReplay(t, h, v, "a stow and a bearing after the snapshot")
	require.NoError(t, v.Close())
}

// stowedEvents counts the voyage's artifact-stowed events.
func stowedEvents(t *testing.T, v *Voyage) int {
	t.Helper()
	n := 0
	require.NoError(t, v.segmentLog().Scan(context.Background(), 1, eventsOf(v.id, v.rec.Dir(), func(_ uint64, e *projection.Event) error {
		if e.Type == projection.ArtifactStowed {
			n++
		}
		return nil
	})))
	return n
}

// A sighting observed again on a voyage opened from its snapshot is
// stored once: the stower looks its hash up in the snapshot's index (a
// block of it) without reading the index, and so does a large sighting,
// streamed, looked up once it is written. One jettisoned since is
// stowed anew. The views are the replay's all along.
func TestRepeatedSightingOnASnapshotIsStoredOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: 1})
	require.NoError(t, err)
	v, err := h.Start(ctx, "repeats", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	dir := t.TempDir()
	var big []byte
	for i := 0; len(big) <= streamAbove; i++ {
		big = fmt.Appendf(big, "line %d of a file streamed as it is stored\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), big, 0o600))
	file, err := marks.NewFileContents("big.txt")
	require.NoError(t, err)
	env := &ObserveOptions{Env: &marks.Env{Dir: dir}}
	first := map[string]ArtifactInfo{}
	observe := func(v *Voyage, m marks.Mark) Observed {
		t.Helper()
		o, err := v.Observe(ctx, m, indexWho, env)
		require.NoError(t, err)
		return o
	}
	notes := make([]marks.Mark, 8)
	for i := range notes {
		notes[i], err = marks.NewContext(fmt.Sprint("note ", i))
		require.NoError(t, err)
		o := observe(v, notes[i])
		first[o.Record.Artifact] = o.Artifact
	}
	o := observe(v, file)
	require.Zero(t, o.Artifact.Blob, "the large sighting is in the pack")
	streamed := o.Record.Artifact
	first[streamed] = o.Artifact
	require.NoError(t, v.Close())

	reopen := func() *Voyage {
		t.Helper()
		v, err := h.Voyage(ctx, id)
		require.NoError(t, err)
		v.mu.Lock()
		require.NotZero(t, v.snapSeq, "opened from the snapshot")
		require.NotZero(t, v.st.Pending()&projection.SectionArtifacts, "the index is in the snapshot")
		v.mu.Unlock()
		return v
	}
	v = reopen()
	stowed := stowedEvents(t, v)
	for _, m := range append(notes, file) {
		o := observe(v, m)
		assert.Equal(t, first[o.Record.Artifact], o.Artifact, "%s: the artifact stored first", m)
	}
	assert.Equal(t, stowed, stowedEvents(t, v), "no sighting stored twice")
	v.mu.Lock()
	assert.NotZero(t, v.st.Pending()&projection.SectionArtifacts, "the index was not read")
	v.mu.Unlock()
	requireSameAsReplay(t, h, v, "repeats after the snapshot")

	// A jettisoned one is stowed again, once; the others are not.
	note := observe(v, notes[3]).Record.Artifact
	require.NoError(t, v.Jettison(ctx, note, "stale", indexWho))
	require.NoError(t, v.Jettison(ctx, streamed, "stale", indexWho))
	require.NoError(t, v.Close())
	v = reopen()
	stowed = stowedEvents(t, v)
	for range 2 {
		for _, m := range append(notes, file) {
			observe(v, m)
		}
	}
	assert.Equal(t, stowed+2, stowedEvents(t, v), "the two jettisoned are stowed again, once each")
	for _, h := range []string{note, streamed} {
		a, err := v.ArtifactInfo(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, logbook.ArtifactStowed, a.Status)
	}
	requireSameAsReplay(t, h, v, "jettisoned, then observed again")
	require.NoError(t, v.Close())
}

// A view that finds a section of the snapshot damaged folds every event
// instead; when that fails too (the log is damaged where opening, which
// read the snapshot and the tail, did not look), the view says so, naming
// the voyage and the segment, and yields nothing: never a story or an
// index cut short. The handle then takes no change.
func TestAViewWhoseRefoldFailsReturnsTheDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		entries bool // the flip is in the first entries' block, else in the last artifacts'
		read    func(v *Voyage) (int, error)
	}{
		{"the story", true, func(v *Voyage) (int, error) { return count(v.Entries(ctx, nil)) }},
		{"a page of the story", true, func(v *Voyage) (int, error) { return count(v.Entries(ctx, &EntriesOptions{From: 2})) }},
		{"the artifact index", false, func(v *Voyage) (int, error) { return count(v.Artifacts(ctx, nil)) }},
		{"the undoable entry", true, func(v *Voyage) (int, error) {
			_, err := v.Undoable(ctx, 1)
			return 0, err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, id := snapshottedVoyage(t)
			dir := filepath.Join(h.voyagesDir(), id)
			v, err := h.Voyage(ctx, id)
			require.NoError(t, err)
			defer v.Close()
			v.mu.Lock()
			require.Equal(t, projection.AllSections, v.st.Pending(), "opened from the snapshot's head")
			v.mu.Unlock()

			start, end := snapshotBody(t, dir)
			if tt.entries {
				flipAt(t, dir, start)
			} else {
				flipAt(t, dir, end-2)
			}
			seg := flipFirstRecord(t, filepath.Join(dir, "events"))

			n, err := tt.read(v)
			require.Error(t, err)
			assert.Zero(t, n, "nothing is yielded before the error")
			assert.ErrorIs(t, err, ErrDamaged)
			var de *DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, id, de.Voyage)
			assert.Equal(t, seg, de.File, "the damaged segment is named")
			assert.Contains(t, err.Error(), id)
			assert.Contains(t, err.Error(), filepath.Dir(seg))
			assert.Contains(t, err.Error(), filepath.Base(seg))

			_, err = v.Note(ctx, "after", indexWho)
			require.Error(t, err, "the handle takes no change")
			assert.Equal(t, hint.Reopen, HintOf(err).Kind)
		})
	}
}

// count counts what seq yields up to its first error.
func count[T any](seq iter.Seq2[T, error]) (int, error) {
	n := 0
	for _, err := range seq {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// flipFirstRecord flips a bit of the first record's data in the log dir,
// in place, and returns the path of its segment.
func flipFirstRecord(t *testing.T, dir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	hdr := make([]byte, 12)
	_, err = f.ReadAt(hdr, 0)
	require.NoError(t, err)
	// The file's header (72 bytes in format 2, 104 in format 4, which
	// adds the chain's link), the frame's, into the data.
	at := int64(72 + 24 + 4)
	if binary.LittleEndian.Uint32(hdr[8:]) >= 4 {
		at = 104 + 24 + 4
	}
	b := []byte{0}
	_, err = f.ReadAt(b, at)
	require.NoError(t, err)
	b[0] ^= 0x10
	_, err = f.WriteAt(b, at)
	require.NoError(t, err)
	return segs[0]
}
