package projection

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

// A handoff is an entry of the story and changes the voyage's current
// identity from then on; the identity it started with stays, and so
// does every earlier entry's. A handoff event without its payload does
// not fold.
func TestHandoffFoldsIntoTheCurrentIdentity(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	agent := logbook.Who{Identity: "claude-a", Role: "coder", Method: "claude"}
	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	var st State
	for i, e := range []*Event{
		{Type: VoyageStarted, V: 3, At: at, Who: agent, Voyage: &VoyageInfo{ID: "v", Intent: "i", Kind: "open-waters"}},
		{Type: NoteAdded, V: 1, N: 1, At: at, Who: agent, Note: &logbook.Note{Text: "before"}},
		{Type: IdentityHandedOff, V: 1, N: 2, At: at, Who: ann, Handoff: &logbook.Handoff{From: "claude-a", To: "ann", Why: "w"}},
		{Type: NoteAdded, V: 1, N: 3, At: at, Who: logbook.Who{Identity: "ann", Role: "coder", Method: "claude"}, Note: &logbook.Note{Text: "after"}},
	} {
		require.NoError(t, st.Apply(uint64(i+1), e))
	}
	assert.Equal(t, "claude-a", st.Voyage.Identity)
	assert.Equal(t, "ann", st.Voyage.CurrentIdentity())
	require.Len(t, st.Voyage.Handoffs, 1)
	assert.Equal(t, 2, st.Voyage.Handoffs[0].N)
	assert.Equal(t, logbook.EntryHandoff, st.Entries[1].Kind)
	assert.Equal(t, "claude-a", st.Entries[0].Who.Identity)
	assert.Equal(t, []string{"ann", "claude-a"}, st.Voyage.Crew)
	st.Entries[1].Handoff.To = "changed"
	assert.Equal(t, "ann", st.Voyage.Handoffs[0].Handoff.To, "the view's history shares no memory with the entries")

	err := st.Apply(5, &Event{Type: IdentityHandedOff, V: 1, N: 4, At: at, Who: ann})
	require.ErrorContains(t, err, "no handoff payload")
	assert.Equal(t, "ann", st.Voyage.CurrentIdentity())
}
