package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

// withEndings adds to a random voyage what randomVoyage does not make: a
// reduced and a jettisoned artifact, and the completion.
func withEndings(events []*Event) []*Event {
	var stowed []string
	for _, e := range events {
		if e.Type == ArtifactStowed {
			stowed = append(stowed, e.Artifact.Hash)
		}
	}
	last := events[len(events)-1]
	ev := func(t Type) *Event {
		return &Event{Type: t, V: currentVersion[t], At: last.At.Add(1), Who: last.Who}
	}
	if len(stowed) >= 2 {
		r := ev(ArtifactReduced)
		r.Artifact = &ArtifactRef{Hash: "summary-of-" + stowed[0], Size: 10, StoredSize: 9, Blob: 3, DerivedFrom: stowed[0], Method: "human"}
		j := ev(ArtifactJettisoned)
		j.Artifact = &ArtifactRef{Hash: stowed[1], Reason: "stale"}
		events = append(events, r, j)
	}
	c := ev(VoyageCompleted)
	c.Completion = &Completion{Outcome: "completed", Summary: "done"}
	return append(events, c)
}

func fold(t testing.TB, events []*Event, st *State, from int) {
	t.Helper()
	for i := from; i < len(events); i++ {
		require.NoError(t, st.Apply(uint64(i+1), events[i]))
	}
}

// smallBlock is the block size of the snapshots the tests encode: a few
// hundred bytes, so that sections span several.
const smallBlock = 300

// encode encodes st in blocks of smallBlock bytes.
func encode(t testing.TB, st *State) []byte {
	t.Helper()
	snap, err := st.encodeSnapshot(smallBlock)
	require.NoError(t, err)
	return snap
}

// For random voyages, the views opened from a snapshot taken after any
// event, with the rest folded on top, are the views of folding every
// event from scratch; and a snapshot decodes to the state it encoded.
func TestSnapshotThenTailIsTheFoldFromScratch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 40 {
		events := withEndings(randomVoyage(r, 5+r.IntN(150)))
		numbered(t, events, r.IntN(len(events)+1))
		events = withUndos(t, r, events)
		var whole State
		fold(t, events, &whole, 0)

		cut := 1 + r.IntN(len(events))
		var head State
		fold(t, events[:cut], &head, 0)
		snap := encode(t, &head)
		loaded, err := DecodeSnapshot(snap)
		require.NoError(t, err, "round %d", round)
		require.Equal(t, &head, loaded, "round %d: the snapshot after event %d decodes to its state", round, cut)
		fold(t, events, loaded, cut)
		require.Equal(t, &whole, loaded, "round %d: snapshot after event %d, then the tail", round, cut)
	}
}

// The same through the lazy path: a snapshot opened by its head, its
// views read in a random order, with random sections loaded and the
// tail folded in between (Apply loads what an event needs), gives the
// views of the fold from scratch; and a snapshot re-encoded while
// sections are still pending (copied block by block) opens to the same.
func TestLazySnapshotIsTheFoldFromScratch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 14))
	for round := range 60 {
		events := withEndings(randomVoyage(r, 5+r.IntN(200)))
		numbered(t, events, r.IntN(len(events)+1))
		events = withUndos(t, r, events)
		var whole State
		fold(t, events, &whole, 0)
		cut := 1 + r.IntN(len(events))
		var head State
		fold(t, events[:cut], &head, 0)
		snap := encode(t, &head)

		st, err := OpenSnapshot(bytes.NewReader(snap), int64(len(snap)))
		require.NoError(t, err, "round %d", round)
		require.Equal(t, AllSections, st.Pending())
		assert.Equal(t, head.Counts(), st.Counts(), "round %d: counts from the head", round)
		if r.IntN(2) == 0 { // a snapshot written from a partly read one
			require.NoError(t, st.Load(Sections(r.IntN(8))))
			again := encode(t, st)
			assert.Equal(t, snap, again, "round %d: re-encoded with sections pending %b", round, st.Pending())
			st, err = OpenSnapshot(bytes.NewReader(again), int64(len(again)))
			require.NoError(t, err)
		}
		// Page the artifact index from the blocks while it is pending.
		pages(t, r, st, &head, fmt.Sprintf("round %d, the snapshot's index", round))
		lookups(t, st, &head, fmt.Sprintf("round %d, the snapshot's index", round))

		// The tail, in random steps, with random loads between.
		for i := cut; i < len(events); {
			if r.IntN(3) == 0 {
				require.NoError(t, st.Load(Sections(1<<r.IntN(3))))
			}
			step := min(len(events), i+1+r.IntN(5))
			fold(t, events[:step], st, i)
			i = step
			if r.IntN(4) == 0 {
				var upTo State
				fold(t, events[:step], &upTo, 0)
				pages(t, r, st, &upTo, fmt.Sprintf("round %d, the index after event %d", round, step))
				lookups(t, st, &upTo, fmt.Sprintf("round %d, the index after event %d", round, step))
			}
		}
		if r.IntN(2) == 0 { // a snapshot of it, written with sections pending
			again, err := DecodeSnapshot(encode(t, st))
			require.NoError(t, err)
			require.Equal(t, &whole, again, "round %d: the snapshot of a partly read state", round)
		}
		assert.Equal(t, whole.Counts(), st.Counts(), "round %d: counts", round)
		assert.Equal(t, whole.SlateList(), st.SlateList(), "round %d: slate", round)
		require.NoError(t, st.Load(AllSections))
		require.Zero(t, st.Pending())
		require.Equal(t, &whole, st, "round %d: lazy snapshot after event %d, then the tail", round, cut)
	}
}

// Bearings and actions recorded after the snapshot, and the challenges
// and outcomes of those, are folded without reading the snapshot's
// entries; reading them then gives the fold's story.
func TestTailOfTheLogbookLeavesTheEntriesUnread(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	events := randomVoyage(r, 120)
	var head State
	fold(t, events, &head, 0)
	snap := encode(t, &head)
	st, err := OpenSnapshot(bytes.NewReader(snap), int64(len(snap)))
	require.NoError(t, err)

	last := events[len(events)-1]
	ev := func(ty Type) *Event {
		return &Event{Type: ty, V: currentVersion[ty], At: last.At.Add(1), Who: last.Who}
	}
	obs := ev(Observed)
	obs.Obs = &logbook.ObservationRecord{Key: "tail", Mark: json.RawMessage(`{"kind":"context"}`), Label: "tail", Artifact: "h0"}
	b := ev(BearingTaken)
	b.Bearing = &logbook.Bearing{Reading: logbook.Reading{Text: "tail reading"}}
	in := ev(ActionIntended)
	in.Action = &logbook.ActionRecord{ID: "tail-action", Kind: "commit"}
	seq := uint64(len(events))
	c := ev(ReadingChallenged)
	c.Challenge = &Challenge{Bearing: seq + 2, Feedback: "no", Text: "better", Source: logbook.SourceUser}
	done := ev(ActionPerformed)
	done.Action = &logbook.ActionRecord{ID: "tail-action", Kind: "commit", Result: &logbook.ActionResult{SHA: "abc"}}
	tail := []*Event{obs, b, in, c, done}
	all := append(append([]*Event{}, events...), tail...)
	var whole State
	fold(t, all, &whole, 0)

	fold(t, all, st, len(events))
	assert.NotZero(t, st.Pending()&SectionEntries, "the snapshot's entries are not read")
	assert.Equal(t, whole.Counts(), st.Counts())
	n := whole.Counts().Entries
	bs, ok := st.BearingSeq(n - 1)
	assert.True(t, ok)
	assert.Equal(t, seq+2, bs)
	e, ok := st.EntryBySeq(seq + 3)
	require.True(t, ok)
	assert.Equal(t, n, e.N)
	assert.True(t, st.HasAction("tail-action") == whole.HasAction("tail-action"))
	again, err := st.encodeSnapshot(smallBlock) // the pending entries copied, the tail's encoded after them
	require.NoError(t, err)
	require.NoError(t, st.Load(AllSections))
	require.Equal(t, &whole, st)
	reopened, err := DecodeSnapshot(again)
	require.NoError(t, err)
	require.Equal(t, &whole, reopened)
}

// pages pages the artifact index of st while it is pending (from its
// blocks and the artifacts stowed since), and checks it against want's.
func pages(t *testing.T, r *rand.Rand, st, want *State, msg string) {
	t.Helper()
	if st.Pending()&SectionArtifacts == 0 {
		return
	}
	var got []string
	for after := ""; ; {
		page, served, err := st.ArtifactsAfter(after, 1+r.IntN(4))
		require.NoError(t, err, msg)
		require.True(t, served, msg)
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			assert.Equal(t, *want.Artifacts[a.Hash], a, msg)
			got = append(got, a.Hash)
		}
		after = page[len(page)-1].Hash
	}
	assert.Equal(t, append([]string{}, slices.Sorted(maps.Keys(want.Artifacts))...), append([]string{}, got...), "%s: the index, page by page", msg)
}

// lookups looks up every artifact of want's index in st by its hash, and
// hashes it does not hold (before the first, between two, after the
// last), and checks that st answers as want does and that a pending index
// stays pending: a point lookup reads a block, not the index.
func lookups(t *testing.T, st, want *State, msg string) {
	t.Helper()
	pending := st.Pending()
	absent := []string{"", "0", "h", "h1x", "h20", "h99", "summary-of-", "summary-of-h", "zz"}
	for _, h := range slices.Sorted(maps.Keys(want.Artifacts)) {
		got, err := st.Artifact(h)
		require.NoError(t, err, msg)
		require.NotNil(t, got, "%s: %s", msg, h)
		assert.Equal(t, *want.Artifacts[h], *got, "%s: %s", msg, h)
		absent = append(absent, h+"0", h[:len(h)-1])
	}
	for _, h := range absent {
		if want.Artifacts[h] != nil {
			continue
		}
		got, err := st.Artifact(h)
		require.NoError(t, err, msg)
		assert.Nil(t, got, "%s: %q is not in the index", msg, h)
	}
	assert.Equal(t, pending, st.Pending(), "%s: looking up read no section", msg)
}

// The counts kept as events fold are the logbook's.
func TestCountsAreTheLogbooks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var st State
	fold(t, numbered(t, withEndings(randomVoyage(r, 400)), 0), &st, 0)
	var want LogbookCounts
	want.Entries = len(st.Entries)
	for _, e := range st.Entries {
		switch {
		case e.Bearing != nil:
			want.Bearings++
		case e.Note != nil:
			want.Notes++
		case e.Judgement != nil:
			want.Judgements++
		case e.Step != nil:
			want.Steps++
		case e.Action.Status == logbook.ActionRefused:
			want.Refused++
		default:
			want.Actions++
			switch e.Action.Status {
			case logbook.ActionOutcomeUnknown:
				want.OutcomeUnknown++
			case logbook.ActionFailed:
				want.Failed++
			}
		}
	}
	require.NotZero(t, want.Actions)
	require.NotZero(t, want.Failed)
	require.NotZero(t, want.Steps)
	assert.Equal(t, want, st.Counts())
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var st State
	fold(t, randomVoyage(r, 60), &st, 0)
	snap := encode(t, &st)
	for _, cut := range []int{0, 1, 2, len(snap) / 2, len(snap) - 1} {
		_, err := DecodeSnapshot(snap[:cut])
		assert.Error(t, err, "cut at %d", cut)
	}
	other := append([]byte(nil), snap...)
	other[1] = SnapshotVersion + 1
	_, err := DecodeSnapshot(other)
	assert.ErrorContains(t, err, "version")
	_, err = DecodeSnapshot(append(snap, 0))
	assert.ErrorContains(t, err, "trailing")

	// A flipped bit in a block is found when the block is read: the head
	// opens, the section fails with ErrSnapshotSection and the state is
	// as it was.
	headEnd := 1 + 1 + 4 + int(binary.LittleEndian.Uint32(snap[2:])) + 4
	require.Less(t, headEnd, len(snap))
	for _, at := range []int{headEnd, (headEnd + len(snap)) / 2, len(snap) - 1} {
		bad := append([]byte(nil), snap...)
		bad[at] ^= 0x10
		lazy, err := OpenSnapshot(bytes.NewReader(bad), int64(len(bad)))
		require.NoError(t, err, "a flip at %d is past the head", at)
		before := lazy.Voyage
		err = lazy.Load(AllSections)
		require.ErrorIs(t, err, ErrSnapshotSection, "flip at %d", at)
		assert.Equal(t, AllSections, lazy.Pending(), "flip at %d: nothing was loaded", at)
		assert.Equal(t, before, lazy.Voyage)
		_, err = lazy.encodeSnapshot(smallBlock)
		assert.ErrorIs(t, err, ErrSnapshotSection, "flip at %d: not copied into a new snapshot", at)
	}
	// A point lookup reads the block that can hold its hash: damage there
	// is found, damage elsewhere is not read.
	arts := slices.Sorted(maps.Keys(st.Artifacts))
	require.NotEmpty(t, arts)
	bad, err := st.encodeSnapshot(60) // a few artifacts a block
	require.NoError(t, err)
	bad[len(bad)-1] ^= 0x10 // the last block: the index's, holding the last hash
	lazy, err := OpenSnapshot(bytes.NewReader(bad), int64(len(bad)))
	require.NoError(t, err)
	blocks := lazy.lazy.sections[bit(SectionArtifacts)].blocks
	_, err = lazy.Artifact(arts[len(arts)-1])
	require.ErrorIs(t, err, ErrSnapshotSection, "the damaged block")
	_, err = lazy.Artifact(arts[len(arts)-1] + "0")
	require.ErrorIs(t, err, ErrSnapshotSection, "a hash absent, in the damaged block's span")
	assert.Equal(t, AllSections, lazy.Pending(), "nothing was loaded")
	require.Greater(t, len(blocks), 1, "the index spans blocks")
	a, err := lazy.Artifact(arts[0])
	require.NoError(t, err, "another block")
	assert.Equal(t, *st.Artifacts[arts[0]], *a)
	// In the head: refused at open.
	bad = append([]byte(nil), snap...)
	bad[8] ^= 0x10
	_, err = OpenSnapshot(bytes.NewReader(bad), int64(len(bad)))
	assert.ErrorContains(t, err, "checksum")
}

// A snapshot of version 1 (one block, no head of its own) is not read.
func TestOldSnapshotVersionIsRefused(t *testing.T) {
	t.Parallel()
	v1 := []byte{snapshotFormat, 1, 1, 'v'}
	_, err := OpenSnapshot(bytes.NewReader(v1), int64(len(v1)))
	assert.ErrorContains(t, err, "version 1, this helm reads 9")
}

func FuzzDecodeSnapshot(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 3 {
		var st State
		events := withEndings(randomVoyage(r, 10+20*n))
		numbered(f, events, 0)
		for i, e := range withUndos(f, r, events) {
			if err := st.Apply(uint64(i+1), e); err != nil {
				f.Fatal(err)
			}
		}
		snap, err := st.encodeSnapshot(200)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(snap)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The lazy path: the head, a page of the index, every section.
		if lazy, err := OpenSnapshot(bytes.NewReader(data), int64(len(data))); err == nil {
			lazy.Counts()
			if _, _, err := lazy.ArtifactsAfter("", 3); err == nil {
				lazy.ArtifactsAfter("h", 3)
			}
			for _, s := range []Sections{SectionArtifacts, SectionFailed, SectionEntries} {
				lazy.Load(s)
			}
		}
		st, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		snap, err := st.EncodeSnapshot()
		if err != nil {
			t.Fatalf("a decoded snapshot does not encode: %v", err)
		}
		again, err := DecodeSnapshot(snap)
		if err != nil {
			t.Fatalf("a decoded snapshot does not decode once encoded again: %v", err)
		}
		if fmt.Sprint(again.Voyage) != fmt.Sprint(st.Voyage) || len(again.Entries) != len(st.Entries) || len(again.Artifacts) != len(st.Artifacts) {
			t.Fatalf("snapshot round trip changed the state")
		}
	})
}
