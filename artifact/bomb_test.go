package artifact

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zstd bombs, as a hostile archive or a planted pack frame would hold
// them: every reader refuses them, naming the limit, having held little
// more than the size declared.

// bomb compresses size zero bytes with a window of window bytes (as a
// stream: the frame declares its window, not its size).
func bomb(t *testing.T, size int64, window int) []byte {
	t.Helper()
	var b bytes.Buffer
	z, err := zstd.NewWriter(&b, zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	_, err = io.Copy(z, io.LimitReader(zeros{}, size))
	require.NoError(t, err)
	require.NoError(t, z.Close())
	return b.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// allocated runs f and returns how many bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Not parallel: allocated counts the whole process's allocations, so it
// runs before the parallel tests start, alone.
func TestZstdBombsAreRefusedNamingTheLimit(t *testing.T) {
	big := bomb(t, 256<<20, 8<<20)        // 256 MiB of zeros in a few kilobytes
	wide := bomb(t, 1<<20, 256<<20)       // a window helm never writes
	honest := Hash(make([]byte, 256<<20)) // the zeros' address
	for _, c := range []struct {
		name   string
		ref    Ref
		stored []byte
		want   string
	}{
		{"a frame that expands beyond its declared size", Ref{Hash: honest, Size: 4096, StoredSize: int64(len(big))}, big, "more than the 4096 bytes its event declares"},
		{"a frame that declares a window beyond helm's", Ref{Hash: Hash(make([]byte, 1<<20)), Size: 1 << 20, StoredSize: int64(len(wide))}, wide, "beyond helm's limit of 8388608 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			readers := []struct {
				name string
				read func() error
			}{
				{"expanded whole (a blob, Load)", func() error {
					_, err := Expand(c.ref, c.stored, "the store")
					return err
				}},
				{"copied as stored (an import)", func() error { return CopyStored(io.Discard, c.ref, bytes.NewReader(c.stored)) }},
				{"streamed from the pack (Open, Check)", func() error {
					p := NewPack(t.TempDir(), &PackOptions{NoSync: true})
					defer p.Close()
					ref, err := p.Stow(&Encoded{Hash: c.ref.Hash, Size: c.ref.Size, Compressed: c.stored})
					require.NoError(t, err)
					r, err := p.Open(ref)
					require.NoError(t, err)
					defer r.Close()
					_, err = io.Copy(io.Discard, r)
					require.Error(t, err)
					assert.ErrorIs(t, p.Check(ref), ErrDamaged, "Check")
					return err
				}},
			}
			for _, r := range readers {
				var err error
				n := allocated(func() { err = r.read() })
				assert.ErrorIs(t, err, ErrDamaged, r.name)
				assert.ErrorContains(t, err, c.want, r.name)
				assert.Less(t, n, uint64(64<<20), "%s: bytes allocated refusing it", r.name)
			}
		})
	}
}
