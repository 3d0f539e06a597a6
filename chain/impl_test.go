package chain_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/chain"
)

// Digest and Next hash inputs up to one chunk with another BLAKE3 than
// longer ones (chain.go): both must be the BLAKE3 the chain was defined
// with, zeebo/blake3's, on every length around the block and chunk
// boundaries and on random contents, or a voyage written before the
// switch would no longer check.
func TestDigestIsTheSameBLAKE3EitherWay(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n <= 3*1024+65; n++ {
		b := buf[r.IntN(len(buf)-n+1):][:n]
		if !assert.Equal(t, chain.Hash(blake3.Sum256(b)), chain.Digest(b), "a record of %d bytes", n) {
			return
		}
	}
	for i := range 2000 {
		prev, digest := chain.Digest(buf[i:i+7]), chain.Digest(buf[i+7:i+40])
		seq, n := r.Uint64(), r.IntN(1<<31)
		var in [32 + 16 + 32]byte
		copy(in[:], prev[:])
		binary.LittleEndian.PutUint64(in[32:], seq)
		binary.LittleEndian.PutUint64(in[40:], uint64(n))
		copy(in[48:], digest[:])
		if !assert.Equal(t, chain.Hash(blake3.Sum256(in[:])), chain.Next(prev, seq, n, digest), fmt.Sprint("link ", i)) {
			return
		}
	}
}

// BenchmarkDigest hashes records of the sizes a replay sees (events of
// 100–400 bytes, blob records of ~900, a link's 80 bytes) and larger.
func BenchmarkDigest(b *testing.B) {
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, n := range []int{80, 200, 400, 900, 1024, 2048, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				chain.Digest(buf[:n])
			}
		})
	}
}
