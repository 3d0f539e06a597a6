package logbook

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCloneSharesNoMemoryWithTheEntries(t *testing.T) {
	t.Parallel()
	in := []Entry{
		{N: 1, Kind: EntryBearing, Bearing: &Bearing{
			Observations: []ObservationRecord{{Label: "a"}},
			Reading:      Reading{Text: "r", History: []ReadingAttempt{{Text: "old"}}},
		}},
		{N: 2, Kind: EntryAction, Action: &ActionRecord{Kind: "commit", Inverse: &Inverse{Kind: "revert"}}},
		{N: 3, Kind: EntryNote, Note: &Note{Text: "n"}},
		{N: 4, Kind: EntryJudgement, Judgement: &Judgement{Evidence: []int{1}}},
	}
	out := Clone(in)
	assert.Equal(t, in, out)

	in[0].Bearing.Observations[0].Label = "changed"
	in[0].Bearing.Reading.History[0].Text = "changed"
	in[1].Action.Inverse.Kind = "changed"
	in[2].Note.Text = "changed"
	in[3].Judgement.Evidence[0] = 9
	assert.Equal(t, "a", out[0].Bearing.Observations[0].Label)
	assert.Equal(t, "old", out[0].Bearing.Reading.History[0].Text)
	assert.Equal(t, "revert", out[1].Action.Inverse.Kind)
	assert.Equal(t, "n", out[2].Note.Text)
	assert.Equal(t, []int{1}, out[3].Judgement.Evidence)
}
