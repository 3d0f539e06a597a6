package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
)

// TestAttackAFileOfEventsLinkedElsewhereIsNotWrittenThrough: the agent
// replaces a file in a voyage's events/ (not events/ itself: its segment,
// its WATERMARK) by a link to a copy of it kept outside the home. Helm
// must not append the voyage's record to the file outside, nor read the
// voyage from it: the voyage is damage, and the copy is left as it was.
func TestAttackAFileOfEventsLinkedElsewhereIsNotWrittenThrough(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		glob string
	}{
		{name: "its segment", glob: "*.seg"},
		{name: "its watermark", glob: "WATERMARK"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Open(t.TempDir(), nil)
			require.NoError(t, err)
			v, err := h.Start(ctx, "the voyage whose file of events is linked", OpenWaters, indexWho, nil)
			require.NoError(t, err)
			observeNote(t, v, "a note")
			id := v.ID()
			require.NoError(t, v.Close())

			events := filepath.Join(h.voyagesDir(), id, "events")
			files, err := filepath.Glob(filepath.Join(events, tt.glob))
			require.NoError(t, err)
			require.NotEmpty(t, files, "a file to link")
			outside := t.TempDir()
			for _, file := range files {
				copyTo := filepath.Join(outside, filepath.Base(file))
				data, err := os.ReadFile(file)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(copyTo, data, 0o600))
				require.NoError(t, os.Remove(file))
				require.NoError(t, os.Symlink(copyTo, file))
			}
			before := dirBytes(t, outside)

			_, err = h.Voyage(ctx, id)
			require.Error(t, err, "a voyage with a linked file of events does not open")
			_, ok := errors.AsType[*DamageError](err)
			require.True(t, ok, "damage, not a failure to retry: %v", err)
			assert.Contains(t, err.Error(), "symbolic link")
			assert.NotEmpty(t, HintOf(err).Text, "says what to do")
			assert.Equal(t, before, dirBytes(t, outside), "nothing is written through the link")
			_, _ = h.List(ctx, nil)
			assert.Equal(t, before, dirBytes(t, outside), "nothing is written through the link by a list")
		})
	}
}

// TestAttackEventsSwappedForALinkWhileOpenIsNotWrittenThrough: the check
// that events/ is the voyage's own directory is made when the voyage
// opens; the agent swaps it for a link afterwards (its directory renamed
// aside, a link to a copy outside the home in its place) while helm
// holds the voyage open and records. What helm records goes to the files
// it opened (in the home, under the name the agent gave them), not
// through the link; and the next open finds the link.
func TestAttackEventsSwappedForALinkWhileOpenIsNotWrittenThrough(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	for _, tt := range []struct {
		name string
		size int64
		hole string
	}{
		{name: "records into the open segment"},
		{name: "a new segment for each record", size: 1, hole: "KNOWN HOLE: a segment the Log creates after the swap " +
			"is created by its path, through the link, outside the home (the next open reports the link as damage); " +
			"closing it needs the Log to create its files relative to the directory it opened (openat on a directory fd)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hole != "" {
				t.Skip(tt.hole)
			}
			swapEventsWhileOpen(t, tt.size)
		})
	}
}

func swapEventsWhileOpen(t *testing.T, segmentSize int64) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{SegmentSize: segmentSize})
	require.NoError(t, err)
	v, err := h.Start(ctx, "the voyage swapped while open", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	observeNote(t, v, "before the swap")
	id := v.ID()

	events := filepath.Join(h.voyagesDir(), id, "events")
	outside := filepath.Join(t.TempDir(), "events")
	require.NoError(t, os.CopyFS(outside, os.DirFS(events)))
	require.NoError(t, os.Rename(events, events+".aside"))
	require.NoError(t, os.Symlink(outside, events))
	before := dirBytes(t, outside)

	for i := range 20 {
		m, err := marks.NewContext(fmt.Sprint("after the swap ", i))
		require.NoError(t, err)
		_, err = v.Observe(ctx, m, indexWho, nil)
		if err != nil {
			t.Logf("observe %d: %v", i, err)
			break
		}
	}
	_ = v.Close()
	assert.Equal(t, before, dirBytes(t, outside), "nothing is written through the link")

	_, err = h.Voyage(ctx, id)
	require.Error(t, err, "the next open finds the link")
	_, ok := errors.AsType[*DamageError](err)
	assert.True(t, ok, "damage: %v", err)
}
