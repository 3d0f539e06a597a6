package helm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackAVoyagesEventsLinkedElsewhereIsRefused: the agent replaces a
// voyage's events/ with a link, to another voyage's log in the home or to
// a log it keeps outside the home. Helm must neither read that log as the
// voyage's nor append to it: opening the voyage is damage, and nothing
// is written through the link.
func TestAttackAVoyagesEventsLinkedElsewhereIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// target returns the directory the link points to, given the
		// home and the other voyage's id.
		target func(t *testing.T, h *Home, other string) string
	}{
		{"another voyage of the home", func(t *testing.T, h *Home, other string) string {
			return filepath.Join(h.voyagesDir(), other, "events")
		}},
		{"a log outside the home", func(t *testing.T, h *Home, other string) string {
			outside := filepath.Join(t.TempDir(), "events")
			require.NoError(t, os.CopyFS(outside, os.DirFS(filepath.Join(h.voyagesDir(), other, "events"))))
			return outside
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Open(t.TempDir(), nil)
			require.NoError(t, err)
			a, err := h.Start(ctx, "the voyage linked away", OpenWaters, indexWho, nil)
			require.NoError(t, err)
			id := a.ID()
			require.NoError(t, a.Close())
			b, err := h.Start(ctx, "the voyage linked to", OpenWaters, indexWho, nil)
			require.NoError(t, err)
			observeNote(t, b, "b's note")
			other := b.ID()
			require.NoError(t, b.Close())

			target := tc.target(t, h, other)
			events := filepath.Join(h.voyagesDir(), id, "events")
			require.NoError(t, os.RemoveAll(events))
			require.NoError(t, os.Symlink(target, events))
			before := dirBytes(t, target)

			_, err = h.Voyage(ctx, id)
			require.Error(t, err, "a voyage whose events/ is a link does not open")
			de, ok := errors.AsType[*DamageError](err)
			require.True(t, ok, "damage, not a missing voyage: %v", err)
			assert.Equal(t, events, de.File)
			assert.Contains(t, err.Error(), "events")
			assert.Equal(t, before, dirBytes(t, target), "nothing is written through the link")

			// A list does not show it healthy: it names it among those it
			// could not read.
			infos, err := h.List(ctx, nil)
			le, ok := errors.AsType[*ListError](err)
			require.True(t, ok, "the list reports the voyage: %v", err)
			assert.Equal(t, []string{id}, le.Voyages)
			for _, in := range infos {
				assert.NotEqual(t, id, in.ID, "not listed as a voyage it can read")
			}
			assert.Equal(t, before, dirBytes(t, target), "nothing is written through the link")
		})
	}
}

// dirBytes is every file of dir with its contents.
func dirBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}
