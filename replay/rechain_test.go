package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/replay"
)

// A voyage an older helm wrote, rechained by this one, replays to the
// views it opens to: the rechain entry included.
func TestReplayFoldsARechainedVoyage(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.CopyFS(home, os.DirFS(filepath.Join("..", "testdata", "voyages", "v0.5-2026-11-27"))))
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	const id = "c0a9b5e1-0000-4000-8000-000000000003"
	_, err = h.Rechain(ctx, id, logbook.Who{Identity: "ann", Role: "maintainer", Method: "human"}, "witness it")
	require.NoError(t, err)
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()

	var buf bytes.Buffer
	require.NoError(t, replay.WriteEvents(ctx, &buf, v))
	events, err := replay.ReadEvents(&buf)
	require.NoError(t, err)
	views, err := replay.Fold(events)
	require.NoError(t, err)
	var entries []logbook.Entry
	for e, err := range v.Entries(ctx, nil) {
		require.NoError(t, err)
		entries = append(entries, e)
	}
	assert.Equal(t, entries, views.Logbook)
	last := views.Logbook[len(views.Logbook)-1]
	require.Equal(t, logbook.EntryRechain, last.Kind)
	assert.Equal(t, "witness it", last.Rechain.Why)
	assert.Equal(t, v.Info(), views.Info)
}
