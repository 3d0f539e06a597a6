package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGroupCommitHandOffWithCancellationsIsRaceFreeAndExact stresses the
// group-commit queue: many goroutines commit while some of their contexts
// are canceled at random moments, so leadership is handed over, taken
// requests are canceled mid-group and queued ones are withdrawn, all at the
// same time. Run under -race it catches any access to the queue state
// (request.lead/taken, Log.queue) outside qmu, like the unlocked read of
// request.lead after a wake that TestConcurrentGoroutinesLoseNothing in the
// root package once reported. Every Commit that returned a seq must find
// its record there; every one that returned an error must have written
// nothing.
func TestGroupCommitHandOffWithCancellationsIsRaceFreeAndExact(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{SegmentSize: 16 << 10, NoSync: true})
	const workers, each = 16, 150
	type ack struct {
		seq  uint64
		data string
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []ack
		fails int
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				data := fmt.Sprintf("w%d-%d", w, i)
				cctx, cancel := context.WithCancel(ctx)
				if (w+i)%3 == 0 {
					d := time.Duration((w*7+i*13)%50) * time.Microsecond
					go func() { time.Sleep(d); cancel() }()
				}
				first, err := l.Commit(cctx, func(tx *Tx) ([][]byte, error) {
					if (w+i)%11 == 0 {
						return nil, errors.New("declined")
					}
					return [][]byte{[]byte(data)}, nil
				})
				cancel()
				mu.Lock()
				if err == nil {
					acked = append(acked, ack{first, data})
				} else {
					fails++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	recs := readAll(t, l)
	require.Len(t, recs, len(acked), "exactly the acknowledged records are in the log")
	for _, a := range acked {
		require.Equal(t, a.data, string(recs[a.seq-1].Data))
	}
	assert.Equal(t, workers*each, len(acked)+fails)
	assert.Equal(t, uint64(len(recs)), l.Last())
	l.qmu.Lock()
	assert.Empty(t, l.queue)
	assert.False(t, l.leading, "leadership released when idle")
	l.qmu.Unlock()
	_, err := Verify(ctx, l.Dir(), nil)
	require.NoError(t, err)
}
