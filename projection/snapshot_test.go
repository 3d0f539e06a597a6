package projection

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func fold(t *testing.T, events []*Event, st *State, from int) {
	t.Helper()
	for i := from; i < len(events); i++ {
		require.NoError(t, st.Apply(uint64(i+1), events[i]))
	}
}

// For random voyages, the views opened from a snapshot taken after any
// event, with the rest folded on top, are the views of folding every
// event from scratch; and a snapshot decodes to the state it encoded.
func TestSnapshotThenTailIsTheFoldFromScratch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 40 {
		events := withEndings(randomVoyage(r, 5+r.IntN(150)))
		var whole State
		fold(t, events, &whole, 0)

		cut := 1 + r.IntN(len(events))
		var head State
		fold(t, events[:cut], &head, 0)
		snap := head.EncodeSnapshot()
		loaded, err := DecodeSnapshot(snap)
		require.NoError(t, err, "round %d", round)
		require.Equal(t, &head, loaded, "round %d: the snapshot after event %d decodes to its state", round, cut)
		fold(t, events, loaded, cut)
		require.Equal(t, &whole, loaded, "round %d: snapshot after event %d, then the tail", round, cut)
	}
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var st State
	fold(t, randomVoyage(r, 60), &st, 0)
	snap := st.EncodeSnapshot()
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
}

func FuzzDecodeSnapshot(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 3 {
		var st State
		for i, e := range randomVoyage(r, 10+20*n) {
			if err := st.Apply(uint64(i+1), e); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(st.EncodeSnapshot())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		again, err := DecodeSnapshot(st.EncodeSnapshot())
		if err != nil {
			t.Fatalf("a decoded snapshot does not decode once encoded again: %v", err)
		}
		if fmt.Sprint(again.Voyage) != fmt.Sprint(st.Voyage) || len(again.Entries) != len(st.Entries) {
			t.Fatalf("snapshot round trip changed the state")
		}
	})
}
