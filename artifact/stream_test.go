package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCRC32CombineIsTheCRCOfTheWhole(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		a := make([]byte, rng.IntN(100))
		b := make([]byte, rng.IntN(5000))
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.Checksum(append(append([]byte(nil), a...), b...), castagnoli)
		got := crc32Combine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b)))
		require.Equal(t, want, got, "len(a)=%d len(b)=%d", len(a), len(b))
	}
}

// textOf returns n bytes of text that compresses somewhat, as source does.
func textOf(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 5))
	words := []string{"func", "return", "err", "nil", "if", "for", "range", "voyage", "bearing", "{\n", "}\n", "\t"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		fmt.Fprintf(&b, " %x ", rng.Uint32()>>20)
	}
	return b.Bytes()[:n]
}

// streamOf is a streamed artifact writing data in pieces of random sizes.
func streamOf(data []byte) *Encoded {
	return Stream(func(w io.Writer) error {
		rng := rand.New(rand.NewPCG(uint64(len(data)), 6))
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(200<<10))
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
}

func readAllT(t *testing.T, p *Pack, ref Ref) ([]byte, error) {
	t.Helper()
	r, err := p.Open(ref)
	require.NoError(t, err)
	defer r.Close()
	return io.ReadAll(r)
}

func TestStowStreamWritesAFrameThatLoadsAndStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := NewPack(dir, nil)
	defer p.Close()
	small := packArtifact(t, rand.New(rand.NewPCG(1, 1)), 2*InlineMax)
	ref0 := stowT(t, p, small)
	data := textOf(1, 5<<20)
	e := streamOf(data)
	ref, stored, err := p.StowStream(e, func(string) bool { return false })
	require.NoError(t, err)
	require.True(t, stored)
	assert.Equal(t, Hash(data), ref.Hash)
	assert.Equal(t, Hash(data), e.Hash)
	assert.Equal(t, int64(len(data)), ref.Size)
	assert.Equal(t, ref0.Offset+frameHead+ref0.StoredSize, ref.Offset, "after the frame before it")
	assert.Equal(t, ref.Offset+frameHead+ref.StoredSize, fileSizeT(t, p.Path()))
	assert.Less(t, ref.StoredSize, ref.Size/2, "compressed")

	// Whole (Load, which checks the crc before decompressing) and
	// streamed (Open) reads give the bytes back.
	got, err := p.Load(ref)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
	got, err = readAllT(t, p, ref)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))

	// The same bytes again, held: written, then truncated away.
	end := fileSizeT(t, p.Path())
	var asked string
	ref2, stored, err := p.StowStream(streamOf(data), func(h string) bool { asked = h; return true })
	require.NoError(t, err)
	assert.False(t, stored)
	assert.Equal(t, ref.Hash, asked)
	assert.Equal(t, ref.Hash, ref2.Hash)
	assert.Equal(t, end, fileSizeT(t, p.Path()), "nothing left of the repeat")

	// The next frame goes where the repeat was.
	ref3 := stowT(t, p, packArtifact(t, rand.New(rand.NewPCG(2, 2)), 2*InlineMax))
	assert.Equal(t, end, ref3.Offset)
}

func TestStowStreamRestartsWhenAsked(t *testing.T) {
	t.Parallel()
	p := NewPack(t.TempDir(), nil)
	defer p.Close()
	first, second := textOf(2, 3<<20), textOf(3, 1<<20)
	runs := 0
	e := Stream(func(w io.Writer) error {
		runs++
		if runs == 1 {
			w.Write(first)
			return fmt.Errorf("file changed: %w", ErrRestart)
		}
		_, err := w.Write(second)
		return err
	})
	ref, stored, err := p.StowStream(e, nil)
	require.NoError(t, err)
	require.True(t, stored)
	assert.Equal(t, 2, runs)
	assert.Equal(t, Hash(second), ref.Hash)
	assert.Equal(t, ref.Offset+frameHead+ref.StoredSize, fileSizeT(t, p.Path()), "nothing of the first run is left")
	got, err := readAllT(t, p, ref)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(second, got))
}

func TestFailedStreamIsTruncatedBack(t *testing.T) {
	t.Parallel()
	boom := errors.New("the source failed")
	tests := []struct {
		name  string
		arm   func(*faultFS)
		fail  error // the encode function's own error
		cause error
	}{
		{"disk full mid-frame", func(f *faultFS) { f.failWrite, f.shortBy = syscall.ENOSPC, 4096 }, nil, syscall.ENOSPC},
		{"failed fdatasync", func(f *faultFS) { f.failSync = syscall.EIO }, nil, syscall.EIO},
		{"the source fails", func(*faultFS) {}, boom, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ffs := newFaultFS()
			p := NewPack(t.TempDir(), &PackOptions{FS: ffs})
			defer p.Close()
			ref1 := stowT(t, p, packArtifact(t, rand.New(rand.NewPCG(5, 5)), 3*InlineMax))
			end := fileSizeT(t, p.Path())
			tt.arm(ffs)
			data := textOf(4, 4<<20)
			e := Stream(func(w io.Writer) error {
				if _, err := w.Write(data); err != nil {
					return err
				}
				return tt.fail
			})
			_, _, err := p.StowStream(e, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.cause)
			for _, want := range []string{p.Path(), fmt.Sprintf("offset %d", end), fmt.Sprintf("truncated back to %d bytes", end)} {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, end, fileSizeT(t, p.Path()))
			_, err = p.Load(ref1)
			require.NoError(t, err, "the frame before still loads")
		})
	}
}

func TestOpenReportsDamageAtTheEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := NewPack(dir, nil)
	data := textOf(6, 2<<20)
	ref, _, err := p.StowStream(streamOf(data), nil)
	require.NoError(t, err)
	require.NoError(t, p.Close())

	wrong := ref
	wrong.Hash = Hash([]byte("other"))
	tests := []struct {
		name   string
		ref    Ref
		damage func(t *testing.T)
		reason string
	}{
		{"another address", wrong, func(*testing.T) {}, "BLAKE3 of the content is " + ref.Hash},
		{"a flipped byte", ref, func(t *testing.T) { flipByte(t, p.Path(), ref.Offset+frameHead+ref.StoredSize-1) }, ""},
		{"a short pack", ref, func(t *testing.T) { require.NoError(t, os.Truncate(p.Path(), ref.Offset+frameHead+100)) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.damage(t)
			p := NewPack(dir, nil)
			defer p.Close()
			_, err := readAllT(t, p, tt.ref)
			var de *DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, p.Path(), de.File)
			assert.Equal(t, ref.Offset, de.Offset)
			assert.Contains(t, de.Reason, tt.reason)
		})
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := []byte{0}
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x40
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

func TestCheckFindsDamageInAFrameOfAnySize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2 * InlineMax, 3 * checkWhole} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			p := NewPack(t.TempDir(), nil)
			defer p.Close()
			// Random bytes, so that the frame is as large as the source.
			ref, _, err := p.StowStream(Stream(func(w io.Writer) error {
				b := make([]byte, n)
				rand.NewChaCha8([32]byte{byte(n)}).Read(b)
				_, err := w.Write(b)
				return err
			}), nil)
			require.NoError(t, err)
			require.NoError(t, p.Check(ref))
			flipByte(t, p.Path(), ref.Offset+frameHead+ref.StoredSize/2)
			var de *DamageError
			require.ErrorAs(t, p.Check(ref), &de)
			assert.Equal(t, ref.Offset, de.Offset)
		})
	}
}
