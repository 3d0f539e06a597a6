package segment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeLegacyLog makes dir an empty log as a build that wrote format 2
// left it: an empty format-2 segment at seq 1 and a WATERMARK of
// format-2 slots. The writer then goes on in format 2.
func writeLegacyLog(t *testing.T, dir, identity string) {
	t.Helper()
	id := idOf(identity)
	h := encodeFileHeader(fileHeader{version: legacyVersion, first: 1, seed: genesis(legacyVersion, id), id: id})
	require.Len(t, h, fileHeaderSizeV2)
	wm := make([]byte, watermarkSize)
	copy(wm, encodeWatermark(watermark{}))
	copy(wm[watermarkSlot:], encodeWatermark(watermark{}))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), wm, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(1)), h, 0o600))
}
