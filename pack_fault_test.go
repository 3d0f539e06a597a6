package helm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/projection"
)

// packArtifact returns an artifact of about n bytes that compresses to
// about as many (random bytes, hex-encoded, in JSON), large enough for the
// pack when n exceeds inlineMax by half.
func packArtifact(t testing.TB, n int) *artifact {
	t.Helper()
	b := make([]byte, n/2)
	for i := range b {
		b[i] = byte(packRand.Uint32())
	}
	return newArtifact(fmt.Appendf(nil, `{"text":"%x"}`, b))
}

var packRand = rand.New(rand.NewPCG(5, 6))

func stowT(t testing.TB, p *pack, a *artifact) *projection.ArtifactRef {
	t.Helper()
	ref, err := p.stow(a.hash, a.size, a.compressed)
	require.NoError(t, err)
	return ref
}

func fileSizeT(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// TestFailedPackFdatasyncTruncatesTheFrameBack: a frame whose fdatasync
// fails is cut off again, so the pack ends where it ended before, and the
// error names the file, the offset and what to do.
func TestFailedPackFdatasyncTruncatesTheFrameBack(t *testing.T) {
	tests := []struct {
		name string
		err  error
		fix  string
	}{
		{"I/O error", syscall.EIO, "not stored: retry"},
		{"disk full", syscall.ENOSPC, "not stored: free disk space, then retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := newPack(dir, false)
			defer p.close()
			first := packArtifact(t, 3*inlineMax)
			ref1 := stowT(t, p, first)
			end := fileSizeT(t, p.path)

			fails := 0
			p.datasync = func(f *os.File) error {
				fails++
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: tt.err}
			}
			second := packArtifact(t, 3*inlineMax)
			_, err := p.stow(second.hash, second.size, second.compressed)
			require.Error(t, err)
			assert.Equal(t, 1, fails)
			assert.ErrorIs(t, err, tt.err)
			for _, want := range []string{p.path, fmt.Sprintf("offset %d", end), fmt.Sprintf("truncated back to %d bytes", end), tt.fix} {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, end, fileSizeT(t, p.path), "no partial frame after the pack's end")

			p.datasync = fdatasync
			ref2 := stowT(t, p, second)
			assert.Equal(t, end, ref2.Offset, "the retry is written where the failed frame was")
			for _, c := range []struct {
				ref *projection.ArtifactRef
				a   *artifact
			}{{ref1, first}, {ref2, second}} {
				got, err := p.load(c.ref)
				require.NoError(t, err)
				assert.Equal(t, c.a.hash, hashArtifact(got))
			}
		})
	}
}
