package artifact

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCopyStoredChecksTheBytesAgainstTheAddress(t *testing.T) {
	t.Parallel()
	a := Encode([]byte(`{"text":"hello, widget"}`))
	ref := Ref{Hash: a.Hash, Size: a.Size, StoredSize: int64(len(a.Compressed))}
	var out bytes.Buffer
	require.NoError(t, CopyStored(&out, ref, bytes.NewReader(a.Compressed)))
	assert.Equal(t, a.Compressed, out.Bytes(), "the stored bytes, as they are")

	for name, c := range map[string]struct {
		ref    Ref
		stored []byte
	}{
		"another hash":     {Ref{Hash: Hash([]byte("other")), Size: ref.Size, StoredSize: ref.StoredSize}, a.Compressed},
		"another size":     {Ref{Hash: ref.Hash, Size: ref.Size - 1, StoredSize: ref.StoredSize}, a.Compressed},
		"fewer bytes":      {ref, a.Compressed[:len(a.Compressed)-1]},
		"more bytes":       {ref, append(bytes.Clone(a.Compressed), 0)},
		"not zstd":         {ref, bytes.Repeat([]byte{'x'}, len(a.Compressed))},
		"a flipped bit":    {ref, flip(a.Compressed, len(a.Compressed)/2)},
		"a negative size":  {Ref{Hash: ref.Hash, Size: -1, StoredSize: ref.StoredSize}, a.Compressed},
		"stored too short": {Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: ref.StoredSize + 1}, a.Compressed},
	} {
		t.Run(name, func(t *testing.T) {
			err := CopyStored(io.Discard, c.ref, bytes.NewReader(c.stored))
			assert.ErrorIs(t, err, ErrDamaged)
		})
	}
	// A reader's own error is not the bytes' fault.
	boom := errors.New("boom")
	err := CopyStored(io.Discard, ref, io.MultiReader(bytes.NewReader(a.Compressed[:3]), errReader{boom}))
	assert.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, ErrDamaged)
	// Nor is the writer's.
	err = CopyStored(failWriter{boom}, ref, bytes.NewReader(a.Compressed))
	assert.ErrorIs(t, err, boom)
}

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x20
	return b
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestStowStoredKeepsTheStoredBytes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	src := NewPack(dir+"/src", nil)
	require.NoError(t, os.MkdirAll(dir+"/src", 0o700))
	a := packArtifact(t, rng, 3*InlineMax)
	ref := stowT(t, src, a)
	defer src.Close()

	r, err := src.OpenStored(ref)
	require.NoError(t, err)
	dst := NewPack(dir, nil)
	defer dst.Close()
	// A jettisoned artifact's frame first: reclaimed, as Reclaim leaves one.
	gone := packArtifact(t, rng, 2*InlineMax)
	goneRef, err := dst.StowReclaimed(Ref{Hash: gone.Hash, Size: gone.Size, StoredSize: int64(len(gone.Compressed))})
	require.NoError(t, err)
	assert.Equal(t, int64(len(packMagic)), goneRef.Offset)
	_, err = dst.Load(goneRef)
	assert.ErrorIs(t, err, ErrDamaged, "its bytes are gone")
	frames, n, err := dst.Reclaim([]Ref{goneRef})
	require.NoError(t, err)
	assert.Zero(t, frames, "reclaimed already")
	assert.Zero(t, n)

	got, err := dst.StowStored(Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: ref.StoredSize}, r)
	require.NoError(t, err)
	assert.Equal(t, ref.StoredSize, got.StoredSize)
	assert.Equal(t, goneRef.Offset+frameHead+goneRef.StoredSize, got.Offset, "after the reclaimed frame's place")
	data, err := dst.Load(got)
	require.NoError(t, err)
	assert.Equal(t, Hash(data), a.Hash)
	require.NoError(t, dst.Check(got))

	// Bytes that do not check out are not stored.
	end := fileSizeT(t, dst.Path())
	_, err = dst.StowStored(Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: ref.StoredSize}, bytes.NewReader(flip(a.Compressed, 100)))
	assert.ErrorIs(t, err, ErrDamaged)
	assert.Equal(t, end, fileSizeT(t, dst.Path()), "truncated away")
}

func TestOpenStoredChecksTheFrame(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPack(t.TempDir(), nil)
	a := packArtifact(t, rng, 3*InlineMax)
	ref := stowT(t, p, a)
	require.NoError(t, p.Close())
	data, err := os.ReadFile(p.Path())
	require.NoError(t, err)
	data[ref.Offset+frameHead+10] ^= 1
	require.NoError(t, os.WriteFile(p.Path(), data, 0o600))
	p = NewPack(p.dir, nil)
	defer p.Close()
	r, err := p.OpenStored(ref)
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	var de *DamageError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "checksum")
}
