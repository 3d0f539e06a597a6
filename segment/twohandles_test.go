package segment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two Logs on one directory (two processes' handles), each with writers
// that read the log's end with Scan and append on it with AppendIf, as
// helm's shared journal does: a conflict never says the log ends before a
// record that Scan yielded, or that an append acknowledged, before the
// AppendIf was called (the writer's catch-up sees everything a reader
// without the lock saw). SEGMENT_RACE_ROUNDS raises the rounds for a soak.
func TestAppendIfNeverEndsBeforeWhatScanSaw(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rounds := 200
	if s := os.Getenv("SEGMENT_RACE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	opts := &Options{NoSync: true, Identity: "race"}
	open := func() *Log {
		l, err := Open(ctx, dir, opts)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return l
	}
	first := open()
	_, err := first.Append(ctx, []byte("start"))
	require.NoError(t, err)
	logs := []*Log{first, open()}
	var wg sync.WaitGroup
	for li, l := range logs {
		var mu sync.Mutex // one commit per handle at a time, as helm's journal
		seen := uint64(0) // the last record this handle's views hold (mu)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					mu.Lock()
					err := l.Scan(ctx, seen+1, func(rec Record) error { seen = rec.Seq; return nil })
					if !assert.NoError(t, err) {
						mu.Unlock()
						return
					}
					recs := make([][]byte, 1+r%3)
					for i := range recs {
						recs[i] = []byte(fmt.Sprint(li, w, r, i))
					}
					expect := seen
					got, err := l.AppendIf(ctx, expect, recs...)
					if err == nil {
						seen = got + uint64(len(recs)) - 1 // what the views fold of their own commit
					}
					mu.Unlock()
					var ce *ConflictError
					if errors.As(err, &ce) {
						if !assert.GreaterOrEqual(t, ce.Actual, expect, "log %d writer %d round %d: the log ends before what Scan yielded", li, w, r) {
							return
						}
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}
