package artifact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packArtifact returns an artifact of about n bytes that compresses to
// about as many (random bytes, hex-encoded, in JSON), large enough for the
// pack when n exceeds InlineMax by half.
func packArtifact(t testing.TB, rng *rand.Rand, n int) *Encoded {
	t.Helper()
	b := make([]byte, n/2)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return Encode(fmt.Appendf(nil, `{"text":"%x"}`, b))
}

func stowT(t testing.TB, p *Pack, e *Encoded) Ref {
	t.Helper()
	ref, err := p.Stow(e)
	require.NoError(t, err)
	return ref
}

func fileSizeT(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

func TestPackStowsFramesAfterEachOtherAndLoadsThem(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	p := NewPack(dir, nil)
	assert.NoFileExists(t, p.Path(), "a pack costs no file until something is stowed")
	var refs []Ref
	var arts []*Encoded
	end := int64(len(packMagic))
	for range 3 {
		a := packArtifact(t, rng, 2*InlineMax)
		ref := stowT(t, p, a)
		assert.Equal(t, end, ref.Offset, "frames follow each other")
		assert.Equal(t, int64(len(a.Compressed)), ref.StoredSize)
		end = fileSizeT(t, p.Path())
		refs, arts = append(refs, ref), append(arts, a)
	}
	require.NoError(t, p.Close())

	// A fresh Pack (another process) reads them and appends after them.
	p = NewPack(dir, nil)
	defer p.Close()
	for i, ref := range refs {
		got, err := p.Load(ref)
		require.NoError(t, err)
		assert.Equal(t, arts[i].Hash, Hash(got))
	}
	ref := stowT(t, p, packArtifact(t, rng, 2*InlineMax))
	assert.Equal(t, end, ref.Offset)
}

// TestPackFramesVerifyThemselves: whatever is wrong with a frame, Load
// says which artifact, where, and why.
func TestPackFramesVerifyThemselves(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	p := NewPack(dir, nil)
	a := packArtifact(t, rng, 2*InlineMax)
	ref := stowT(t, p, a)
	require.NoError(t, p.Close())
	pristine, err := os.ReadFile(p.Path())
	require.NoError(t, err)

	tests := []struct {
		name   string
		damage func(data []byte) []byte
		ref    Ref
		want   string
	}{
		{"a flipped content byte", func(d []byte) []byte { d[len(d)-3] ^= 0x40; return d }, ref, "frame checksum mismatch"},
		{"a flipped size", func(d []byte) []byte { d[ref.Offset] ^= 0x01; return d }, ref, "frame size"},
		{"truncated", func(d []byte) []byte { return d[:len(d)-10] }, ref, "ends before the artifact does"},
		{"other bytes at the address", func(d []byte) []byte { return d }, Ref{Hash: Hash([]byte("other")), Size: ref.Size, StoredSize: ref.StoredSize, Offset: ref.Offset}, "BLAKE3"},
		{"an impossible offset", func(d []byte) []byte { return d }, Ref{Hash: ref.Hash, StoredSize: ref.StoredSize, Offset: 2}, "no frame"},
		{"a header cut short", func(d []byte) []byte { return d[:4] }, ref, "ends inside its header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(p.Path(), tt.damage(append([]byte(nil), pristine...)), 0o600))
			p := NewPack(dir, nil)
			defer p.Close()
			_, err := p.Load(tt.ref)
			require.ErrorIs(t, err, ErrDamaged)
			var de *DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.ref.Hash, de.Hash)
			assert.Equal(t, p.Path(), de.File)
			assert.Equal(t, tt.ref.Offset, de.Offset)
			assert.Contains(t, de.Reason, tt.want)
			assert.Contains(t, err.Error(), fmt.Sprintf("offset %d", tt.ref.Offset))
		})
	}

	t.Run("a missing pack", func(t *testing.T) {
		p := NewPack(t.TempDir(), nil)
		_, err := p.Load(ref)
		require.ErrorIs(t, err, ErrDamaged)
		assert.Contains(t, err.Error(), "missing")
	})
	t.Run("another program's file", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, PackName), []byte("NOTAPACKFILE"), 0o600))
		p := NewPack(dir, nil)
		defer p.Close()
		_, err := p.Load(ref)
		assert.ErrorContains(t, err, "not a helm pack file")
		_, err = p.Stow(a)
		assert.ErrorContains(t, err, "not a helm pack file", "nothing is appended to a file that is not a pack")
	})
}
