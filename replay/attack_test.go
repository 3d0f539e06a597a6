package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/replay"
)

// The agent hands a replay an archive or a recording with a line far
// longer than any event helm writes (70 MiB of one JSON string): the
// replay refuses it naming the line, after reading no more than the
// bound of one line, instead of reading it whole into memory.
func TestAttackReplayRefusesAHugeLineNamingIt(t *testing.T) {
	x := exportEveryForm(t, false)
	huge := `{"type":"note-added","note":{"text":"` + strings.Repeat("a", 70<<20) + `"}}` + "\n"
	for _, tc := range []struct {
		name string
		from string
		line string // the line the error names
	}{
		{"export archive", x.archive, "line 2"},
		{"recording", x.recording, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.from)
			require.NoError(t, err)
			first, rest, ok := bytes.Cut(data, []byte("\n"))
			require.True(t, ok)
			path := filepath.Join(t.TempDir(), "forged")
			forged := append(append(append([]byte{}, first...), '\n'), huge...)
			require.NoError(t, os.WriteFile(path, append(forged, rest...), 0o600))
			_, err = replay.Open(context.Background(), path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.line)
			assert.Contains(t, err.Error(), path)
			t.Logf("refused: %v", err)
		})
	}
}
