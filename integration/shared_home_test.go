package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// Two clients of one JetStream home record on one voyage at once, each
// deciding on the tail it read: every change is recorded once, the
// entries are numbered without a gap, and both read the same voyage. A
// large sighting goes to the object store and reads back whole. The
// voyage copies to a home on disk and reads the same there.
func TestSharedHomeTwoClientsOneVoyage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "shared", nil)
	name := newHome()
	a, b := jsHome(t, srv.ClientURL(), name), jsHome(t, srv.ClientURL(), name)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	va, err := a.Start(ctx, "Two clients", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer va.Close()

	big := make([]byte, 300<<10)
	rand.Read(big)
	file := filepath.Join(t.TempDir(), "big.txt")
	require.NoError(t, os.WriteFile(file, []byte(hex.EncodeToString(big)), 0o644))
	_, err = va.Observe(ctx, &marks.FileContents{Paths: []string{file}}, who, nil)
	require.NoError(t, err)
	_, err = va.TakeBearing(ctx, "a large context", who, nil)
	require.NoError(t, err)

	vb, err := b.Voyage(ctx, va.ID()[:8])
	require.NoError(t, err)
	defer vb.Close()
	const each = 25
	var wg sync.WaitGroup
	for i, v := range []*helm.Voyage{va, vb} {
		for g := range 2 {
			wg.Go(func() {
				for n := range each {
					_, err := v.Note(ctx, fmt.Sprintf("client %d goroutine %d note %d", i, g, n), who)
					assert.NoError(t, err)
				}
			})
		}
	}
	wg.Wait()
	require.NoError(t, va.Refresh(ctx))
	require.NoError(t, vb.Refresh(ctx))
	entries := entriesOf(t, va)
	require.Len(t, entries, 1+4*each)
	seen := map[string]bool{}
	for i, e := range entries {
		assert.Equal(t, i+1, e.N, "entries are numbered without a gap")
		if e.Kind == logbook.EntryNote {
			assert.False(t, seen[e.Note.Text], "recorded once: %s", e.Note.Text)
			seen[e.Note.Text] = true
		}
	}
	assert.Equal(t, storyOf(t, va), storyOf(t, vb))

	list, err := b.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, va.Info().Seq, list[0].Seq)
	rep, err := b.Verify(ctx, va.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 1, rep.Artifacts)
	arts := artifactsOf(t, vb)
	require.Len(t, arts, 1)
	fromA, err := readArtifact(ctx, va, arts[0].Hash)
	require.NoError(t, err)
	fromB, err := readArtifact(ctx, vb, arts[0].Hash)
	require.NoError(t, err)
	assert.Equal(t, fromA, fromB)
	assert.Contains(t, string(fromB), hex.EncodeToString(big[:64]))

	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	cr, err := b.Copy(ctx, va.ID(), disk)
	require.NoError(t, err)
	assert.True(t, cr.Created)
	dv, err := disk.Voyage(ctx, va.ID())
	require.NoError(t, err)
	defer dv.Close()
	assert.Equal(t, storyOf(t, va), storyOf(t, dv))
	onDisk, err := readArtifact(ctx, dv, arts[0].Hash)
	require.NoError(t, err)
	assert.Equal(t, fromA, onDisk)
	drep, err := disk.Verify(ctx, va.ID(), nil)
	require.NoError(t, err)
	assert.True(t, drep.OK(), "%v", drep.Problems)
}

// Sixteen clients, as sixteen agents, record on one voyage at once: each
// change that finds another came first decides again, and none gives up.
func TestSharedHomeSixteenClientsOneVoyage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "sixteen", nil)
	name := newHome()
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := jsHome(t, srv.ClientURL(), name).Start(ctx, "Sixteen clients", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	const clients, each = 16, 10
	var wg sync.WaitGroup
	for c := range clients {
		h := jsHome(t, srv.ClientURL(), name)
		w, err := h.Voyage(ctx, v.ID())
		require.NoError(t, err)
		defer w.Close()
		wg.Go(func() {
			for n := range each {
				_, err := w.Note(ctx, fmt.Sprintf("client %d note %d", c, n), who)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, v.Refresh(ctx))
	entries := entriesOf(t, v)
	require.Len(t, entries, clients*each)
	for i, e := range entries {
		assert.Equal(t, i+1, e.N)
	}
}
