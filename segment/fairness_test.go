package segment

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two Logs of one directory (two processes, as far as the writer lock
// goes): while one commits back to back from many goroutines — durably,
// so that it always has a unit written and not yet durable, and with
// NoSync, so that it releases the lock after each group and takes it again
// at once — the other still gets the lock and appends, long before the
// busy one runs out of work. A Log that held the lock for as long as its
// pipeline was busy let the other in only once the busy one stopped (main
// before this test: 16000 of 16000 commits first).
func TestAnotherLogGetsTheLockWhileOneLogCommitsBackToBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noSync bool
	}{
		{name: "durable", noSync: false},
		{name: "NoSync", noSync: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := &Options{NoSync: tc.noSync}
			busy := openT(t, dir, opts)
			other := openT(t, dir, opts)
			_, err := busy.Append(ctx, []byte("start"))
			require.NoError(t, err)

			const workers, each = 8, 20000
			var done atomic.Int64 // the busy Log's acknowledged commits
			var stop atomic.Bool  // the other Log appended: the busy one may stop
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						if stop.Load() {
							return
						}
						if _, err := busy.Append(context.Background(), []byte("busy")); !assert.NoError(t, err) {
							return
						}
						done.Add(1)
					}
				}()
			}
			waitWritten(t, busy, 2) // the busy Log is at work
			seq, err := other.Append(context.Background(), []byte("other"))
			require.NoError(t, err)
			atDone := done.Load()
			stop.Store(true)
			wg.Wait()
			assert.Less(t, atDone, int64(workers*each), "the other Log appended only once the busy one had nothing left to do")
			assert.Greater(t, seq, uint64(1))
		})
	}
}
