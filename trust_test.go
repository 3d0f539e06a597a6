package helm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/segment"
)

// readHome returns every file under dir with its contents.
func readHome(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[rel] = string(b)
		return nil
	}))
	return out
}

// A voyage whose log is another voyage's (copied over it, WATERMARK and
// all) is refused: it never shows the other voyage's id and intent, the
// listing names it as unreadable and shows the other voyage once, verify
// reports it, and nothing is written.
func TestVoyageHoldingAnotherVoyagesLogIsRefused(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), fixedOptions())
	require.NoError(t, err)
	a := script(t, h)
	require.NoError(t, a.Close())
	b, err := h.Start(ctx, "another voyage", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, b.Close())

	aEvents := filepath.Join(a.Storage().Dir, "events")
	require.NoError(t, os.RemoveAll(aEvents))
	require.NoError(t, os.CopyFS(aEvents, os.DirFS(filepath.Join(b.Storage().Dir, "events"))))
	before := readHome(t, h.Dir())

	_, err = h.Voyage(ctx, a.ID())
	var ce *segment.CorruptionError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, "another log")

	list, err := h.List(ctx, nil)
	var le *helm.ListError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, []string{a.ID()}, le.Voyages)
	require.Len(t, list, 1)
	assert.Equal(t, b.ID(), list[0].ID)

	rep, err := h.Verify(ctx, a.ID(), nil)
	require.NoError(t, err)
	assert.False(t, rep.OK())
	assert.Equal(t, before, readHome(t, h.Dir()), "reading a damaged voyage wrote to the home")
}

// A format-1 log (no identity in its headers) of another voyage is caught
// by the voyage-started event's id.
func TestFormat1LogOfAnotherVoyageIsRefusedByItsStartEvent(t *testing.T) {
	ctx := context.Background()
	home := copyTree(t, filepath.Join("testdata", "voyages", "v0-2026-11-23"))
	vdir := filepath.Join(home, "voyages")
	a, b := "c0a9b5e1-0000-4000-8000-000000000001", "c0a9b5e1-0000-4000-8000-000000000003"
	require.NoError(t, os.RemoveAll(filepath.Join(vdir, a, "events")))
	require.NoError(t, os.CopyFS(filepath.Join(vdir, a, "events"), os.DirFS(filepath.Join(vdir, b, "events"))))
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	_, err = h.Voyage(ctx, a)
	require.ErrorIs(t, err, segment.ErrCorrupt)
	assert.Contains(t, err.Error(), "holds another voyage's events")
}

// Opening and reading never write: not the home, not a voyage's log, not
// a cache. An absent home lists empty and is not created.
func TestReadingWritesNothing(t *testing.T) {
	ctx := context.Background()
	absent := filepath.Join(t.TempDir(), "no-home")
	h, err := helm.Open(absent, nil)
	require.NoError(t, err)
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, list)
	_, err = os.Stat(absent)
	assert.True(t, errors.Is(err, os.ErrNotExist), "listing created the home")

	// A format-1 home (no WATERMARK, old summaries) read through every
	// read of the library.
	home := copyTree(t, filepath.Join("testdata", "voyages", "v0-2026-11-23"))
	for _, f := range []string{"c0a9b5e1-0000-4000-8000-000000000001", "c0a9b5e1-0000-4000-8000-000000000003"} {
		require.NoError(t, os.Remove(filepath.Join(home, "voyages", f, "summary.json"))) // stale caches are not mended by reads
	}
	before := readHome(t, home)
	h, err = helm.Open(home, nil)
	require.NoError(t, err)
	list, err = h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, info := range list {
		v, err := h.Voyage(ctx, info.ID)
		require.NoError(t, err)
		_ = entriesOf(t, v)
		_ = v.Slate()
		for _, art := range artifactsOf(t, v) {
			_, err := readArtifact(ctx, v, art.Hash)
			require.NoError(t, err)
		}
		for _, err := range v.Events(ctx, 1) {
			require.NoError(t, err)
		}
		require.NoError(t, v.Close())
		rep, err := h.Verify(ctx, info.ID, nil)
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%v", rep.Problems)
	}
	assert.Equal(t, before, readHome(t, home), "reads wrote to the home")

	// The first write mends the cache and upgrades the log.
	v, err := h.Voyage(ctx, "c0a9b5e1-0000-4000-8000-000000000003")
	require.NoError(t, err)
	require.NoError(t, v.Wipe(ctx, who))
	require.NoError(t, v.Close())
	after := readHome(t, home)
	assert.Contains(t, after, filepath.Join("voyages", "c0a9b5e1-0000-4000-8000-000000000003", "summary.json"))
	assert.Contains(t, after, filepath.Join("voyages", "c0a9b5e1-0000-4000-8000-000000000003", "events", "WATERMARK"))
	v, err = h.Voyage(ctx, "c0a9b5e1-0000-4000-8000-000000000003")
	require.NoError(t, err)
	assert.Empty(t, v.Slate())
	assert.Equal(t, logbook.StatusActive, v.Info().Status)
	require.NoError(t, v.Close())
}

// A start that fails leaves nothing in the home.
func TestFailedStartLeavesNoDirectory(t *testing.T) {
	ctx := context.Background()
	opts := fixedOptions()
	dir := t.TempDir()
	h, err := helm.Open(dir, opts)
	require.NoError(t, err)
	v, err := h.Start(ctx, "first", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	// The next id is taken already (a directory in its place): the start
	// fails after writing its events, and must leave nothing behind.
	next := "a3b0fc12-0000-4000-8000-000000000002"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "voyages", next, "x"), 0o700))
	_, err = h.Start(ctx, "second", helm.OpenWaters, who, nil)
	require.Error(t, err)
	entries, err := os.ReadDir(filepath.Join(dir, "voyages"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{v.ID(), next}, names)
}
