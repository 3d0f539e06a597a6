package artifact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helmlog/helm/internal/testfs"
)

// TestFullDiskPackFrameIsTruncatedBack: on a real full disk, a pack frame
// that does not fit is cut off again, the error says where, the frames
// before it still load, and once space is freed the frame is written
// where the failed one began.
func TestFullDiskPackFrameIsTruncatedBack(t *testing.T) {
	t.Parallel()
	mnt := testfs.Tmpfs(t, 256<<10)
	fill := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(fill, make([]byte, 64<<10), 0o600))
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPack(mnt, nil)
	defer p.Close()
	var stowed []Ref
	end := int64(len(packMagic))
	var failed *Encoded
	var err error
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the disk never filled")
		a := packArtifact(t, rng, InlineMax+8<<10)
		ref, serr := p.Stow(a)
		if serr != nil {
			failed, err = a, serr
			break
		}
		require.Equal(t, end, ref.Offset, "frames follow each other")
		stowed = append(stowed, ref)
		end = fileSizeT(t, p.Path())
	}
	require.NotEmpty(t, stowed)
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(mnt, &st))
	free := int64(st.Bavail) * int64(st.Bsize)
	t.Logf("%d frames stowed (%d bytes), then ENOSPC with %d bytes free for a frame of %d", len(stowed), end, free, frameHead+len(failed.Compressed))
	assert.Less(t, free, int64(frameHead+len(failed.Compressed)), "the frame fitted")
	assert.ErrorIs(t, err, syscall.ENOSPC)
	for _, want := range []string{p.Path(), fmt.Sprintf("offset %d", end), fmt.Sprintf("truncated back to %d bytes", end), "not stored"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, end, fileSizeT(t, p.Path()), "no partial frame after the pack's end")
	for _, ref := range stowed {
		_, err := p.Load(ref)
		assert.NoError(t, err)
	}

	require.NoError(t, os.Remove(fill))
	ref := stowT(t, p, failed)
	assert.Equal(t, end, ref.Offset, "written where the failed frame began")
	got, err := p.Load(ref)
	require.NoError(t, err)
	assert.Equal(t, failed.Hash, Hash(got))
}
