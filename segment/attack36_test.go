package segment

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackAKillAroundWriterTurnsKeepsEveryAcknowledgedRecord: processes
// that commit back to back from several goroutines each (their pipeline
// never drains, so each gives the writer lock up every holdTurn, leaves it
// free for turnGap, and catches up on what the others appended in the
// gap), beside ones that commit one at a time and one that reclaims, are
// killed at random moments, over windows longer than a turn. After every
// round the log reopens gap-free, with every acknowledged record at its
// seq, none twice.
func TestAttackAKillAroundWriterTurnsKeepsEveryAcknowledgedRecord(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process stress")
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "log")
	seed := *crashSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay its choices with -segment.crashseed=%d)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	acked := map[uint64][]byte{}
	const rounds = 6
	for round := range rounds {
		kinds := []int{crashBusy, crashBusy + 1, 0, 1, crashReclaimer}
		cmds := startCrashChildren(t, dir, logDir, round, kinds, rng)
		// Longer than holdTurn, so the busy children give turns; each
		// killed at its own moment, maybe in a gap or a catch-up.
		time.Sleep(time.Duration(300+rng.Intn(600)) * time.Millisecond)
		for _, cmd := range cmds {
			time.Sleep(time.Duration(rng.Intn(int(holdTurn/time.Millisecond))) * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		}
		counts := map[int]int{}
		for i, cmd := range cmds {
			err := cmd.Wait()
			require.Error(t, err, "child %d exited on its own: it failed", i)
			before := len(acked)
			collectAcks(t, filepath.Join(dir, fmt.Sprintf("ack-%d-%d", round, kinds[i])), acked)
			counts[i] = len(acked) - before
		}
		t.Logf("round %d: acknowledged per child %v", round, counts)

		checkAfterKills(t, logDir, acked, round)
	}
	rep, err := Verify(ctx, logDir, nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rep.Records, uint64(len(acked)))
	t.Logf("%d rounds, %d acknowledged records, %d in log", rounds, len(acked), rep.Records)
}

// TestAttackAnEditAtAChunkBoundaryFailsTheChainAtOpen: the chain's digest
// is computed by one implementation up to one BLAKE3 chunk (1,024 bytes)
// and another above it. Records one byte either side of a block (64) and
// of one and two chunks, among enough others that a helper computes
// digests ahead, are edited at their first and last byte and at either
// side of the chunk boundary, the length kept, the CRCs and WATERMARK's
// sums recomputed but not the chain's link: every open fails the chain.
func TestAttackAnEditAtAChunkBoundaryFailsTheChainAtOpen(t *testing.T) {
	const id = "voyage-attack36-chunk"
	rng := rand.New(rand.NewSource(36))
	sizes := []int{63, 64, 65, 1023, 1024, 1025, 1026, 2047, 2048, 2049}
	var recs [][]byte
	targets := map[int]int{} // seq: size
	for i := 1; i <= 160; i++ {
		n := 700 + rng.Intn(600)
		if i%16 == 0 {
			n = sizes[(i/16-1)%len(sizes)]
			targets[i] = n
		}
		r := make([]byte, n)
		rng.Read(r)
		recs = append(recs, r)
	}
	require.Len(t, targets, len(sizes))
	src := t.TempDir()
	l := openT(t, src, &Options{Identity: id, NoSync: true})
	for _, r := range recs {
		_, err := l.Append(ctx, r)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	head := chainOf(id, recs)

	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, p := range []int{max(procs, 2), 1} {
		runtime.GOMAXPROCS(p)
		for seq, n := range targets {
			for _, at := range []int{0, n - 1, 1023, 1024} {
				if at >= n {
					continue
				}
				t.Run(fmt.Sprintf("GOMAXPROCS=%d record of %d bytes at byte %d", p, n, at), func(t *testing.T) {
					dir := t.TempDir()
					for _, name := range []string{segmentName(1), watermarkName} {
						require.NoError(t, os.WriteFile(filepath.Join(dir, name), mustRead(t, filepath.Join(src, name)), 0o600))
					}
					edited := append([][]byte(nil), recs...)
					r := append([]byte(nil), recs[seq-1]...)
					r[at] ^= 0x01
					edited[seq-1] = r
					forge(t, dir, edited, head.Hash)

					_, err := Open(ctx, dir, &Options{Identity: id})
					var ce *CorruptionError
					require.ErrorAs(t, err, &ce, "open checks the link from the watermark")
					assert.Contains(t, ce.Reason, fmt.Sprintf("the WATERMARK's chain link at seq %d does not match the log", len(recs)))
				})
			}
		}
	}
}
