package helm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// appendRaw appends events to the voyage's log as they are, entry
// numbers included (0: as helm wrote them before numbers were stored),
// and returns the sequence number of each.
func appendRaw(t *testing.T, v *Voyage, events ...*projection.Event) []uint64 {
	t.Helper()
	var seqs []uint64
	_, err := v.segmentLog().Commit(context.Background(), func(tx *segment.Tx) ([][]byte, error) {
		var recs [][]byte
		seq := tx.Last()
		for _, e := range events {
			rec, err := projection.Encode(e)
			if err != nil {
				return nil, err
			}
			seq++
			seqs = append(seqs, seq)
			recs = append(recs, rec)
		}
		return recs, nil
	})
	require.NoError(t, err)
	return seqs
}

// TestTranscriptLegacyNumbersAsTheStoryShows: in a voyage written before
// entry numbers were stored, an action that failed while a bearing was
// taken meanwhile (two agents at once) took the bearing's number when it
// failed, as helm then renumbered. The transcript numbers the bearing,
// and links to it, as the story shows it, not as it was numbered
// before the failure was folded.
func TestTranscriptLegacyNumbersAsTheStoryShows(t *testing.T) {
	ctx := context.Background()
	who := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Start(ctx, "legacy", OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ev := func(e projection.Event) *projection.Event {
		at = at.Add(time.Minute)
		e.At, e.Who = at, who
		return &e
	}
	seqs := appendRaw(t, v,
		ev(projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "one"}}}),
		ev(projection.Event{Type: projection.ActionIntended, Action: &logbook.ActionRecord{ID: "a", Kind: "push"}}),
		ev(projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "two"}}}),
		ev(projection.Event{Type: projection.ActionFailed, Action: &logbook.ActionRecord{ID: "a", Kind: "push", Error: "rejected"}}),
	)
	bearing2 := seqs[2]
	appendRaw(t, v,
		ev(projection.Event{Type: projection.ReadingChallenged, Challenge: &projection.Challenge{Bearing: bearing2, Feedback: "f", Text: "two, again"}}),
		ev(projection.Event{Type: projection.ActionIntended, Action: &logbook.ActionRecord{ID: "b", Kind: "commit"}}),
	)
	require.NoError(t, v.Close())

	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	story := entriesOf(t, v)
	require.NoError(t, v.Close())
	require.Len(t, story, 3)
	require.Equal(t, bearing2, story[1].Seq)
	require.Equal(t, 2, story[1].N, "the story numbers the second bearing 2, as helm did then")

	lines, err := h.Transcript(ctx, []string{id}, TranscriptOptions{})
	require.NoError(t, err)
	for _, l := range lines {
		switch {
		case l.Seq == bearing2:
			assert.Equal(t, 2, l.N, "the bearing's line")
		case l.Type == projection.ReadingChallenged:
			require.Len(t, l.Links, 1)
			assert.Equal(t, 2, l.Links[0].Entry, "the challenge's link")
		case l.Type == projection.ActionIntended && l.Action.ID == "b":
			assert.Equal(t, 3, l.N, "the last action's line")
			require.Len(t, l.Links, 1)
			assert.Equal(t, Link{Rel: LinkFollowed, Seq: bearing2, Entry: 2}, l.Links[0], "the last action's link")
		}
	}
}
