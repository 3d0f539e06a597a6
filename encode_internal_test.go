package helm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/sighting"
)

// A sighting the voyage holds already is hashed, not compressed; one it
// jettisoned between the look and the commit is compressed under the lock
// and stowed again, readable.
func TestRepeatedSightingIsNotCompressed(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	who := logbook.Who{Identity: "enc-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "compress once", OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()

	m, err := marks.NewContext("the build is green")
	require.NoError(t, err)
	first, err := v.Observe(ctx, m, who, nil)
	require.NoError(t, err)
	data, err := sighting.Marshal(first.Observation.Sighting)
	require.NoError(t, err)

	held := v.prepare(ctx, data)
	assert.Equal(t, first.Record.Artifact, held.Hash)
	assert.Nil(t, held.Compressed, "the voyage holds these bytes: no compression")
	fresh := v.prepare(ctx, []byte(`{"kind":"context","text":"something new"}`))
	assert.NotNil(t, fresh.Compressed, "new bytes are compressed before the lock")

	// Prepared while held, jettisoned before its commit.
	red, err := h.redactor()
	require.NoError(t, err)
	enc, err := v.encodeObservation(context.Background(), red, first.Observation)
	require.NoError(t, err)
	require.Nil(t, enc.art.Compressed)
	require.NoError(t, v.Jettison(ctx, held.Hash, "stale", who))
	_, err = v.commit(ctx, "observe again", func(st *projection.State, stow stower) ([]*projection.Event, error) {
		var events []*projection.Event
		rec, err := v.sealObservation(enc, stow, &events)
		if err != nil {
			return nil, err
		}
		return append(events, &projection.Event{Type: projection.Observed, Who: who, Obs: &rec}), nil
	})
	require.NoError(t, err)
	got, err := readArtifact(ctx, v, held.Hash)
	require.NoError(t, err, "stowed again, compressed under the lock")
	assert.Equal(t, data, got)
}
