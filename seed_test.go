package helm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

func TestSeed(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	const id = "5eed0000-0000-4000-8000-000000000001"
	start := projection.Event{Type: projection.VoyageStarted, Who: who, Voyage: &projection.VoyageInfo{ID: id, Intent: "seeded", Kind: "open-waters"}}
	note := projection.Event{Type: projection.NoteAdded, Who: who, N: 1, Note: &logbook.Note{Text: "token ghp_0123456789abcdefghijABCDEFGHIJ012345"}}

	for name, events := range map[string][]projection.Event{
		"empty":       nil,
		"no start":    {note},
		"not a uuid":  {{Type: projection.VoyageStarted, Who: who, Voyage: &projection.VoyageInfo{ID: "x"}}},
		"an artifact": {start, {Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: "h"}}},
		"out of turn": {start, {Type: projection.NoteAdded, Who: who, N: 3, Note: &logbook.Note{Text: "x"}}},
		"no bearing":  {start, {Type: projection.ReadingChallenged, Challenge: &projection.Challenge{Bearing: 9}}},
	} {
		_, err := h.Seed(ctx, events)
		assert.ErrorIs(t, err, helm.ErrInvalid, name)
	}
	_, err = h.Resolve(ctx, id)
	assert.ErrorIs(t, err, helm.ErrNoVoyage, "a refused history writes nothing")

	v, err := h.Seed(ctx, []projection.Event{start, note})
	require.NoError(t, err)
	defer v.Close()
	entries := entriesOf(t, v)
	require.Len(t, entries, 1)
	assert.Equal(t, "token [REDACTED:github-token]", entries[0].Note.Text, "a history is redacted as any text")
	assert.Contains(t, note.Note.Text, "ghp_", "the caller's events are left as they were")
	rep, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	_, err = h.Seed(ctx, []projection.Event{start})
	assert.ErrorIs(t, err, helm.ErrInvalid, "the home holds it already")
}
