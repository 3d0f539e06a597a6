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
