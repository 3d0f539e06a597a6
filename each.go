package helm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// readEach calls read for each id, a few at once (workers), and returns
// what each read in ids' order, nil where it failed. A voyage removed
// since it was listed (ErrNoVoyage) is skipped; the others that fail are
// named in the *ListError (nil when none did). A cancelled ctx stops it
// with ctx's error.
func readEach[T any](ctx context.Context, ids []string, workers int, read func(id string) (T, error)) ([]*T, *ListError, error) {
	type result struct {
		v   T
		err error
	}
	results := make([]result, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(ids), workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				results[i].v, results[i].err = read(ids[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out := make([]*T, len(ids))
	var unreadable ListError
	for i := range results {
		r := &results[i]
		switch {
		case r.err == nil:
			out[i] = &r.v
		case errors.Is(r.err, ErrNoVoyage): // removed since it was listed
		default:
			unreadable.Voyages = append(unreadable.Voyages, ids[i])
			unreadable.Errs = append(unreadable.Errs, r.err)
		}
	}
	if len(unreadable.Voyages) == 0 {
		return out, nil, nil
	}
	return out, &unreadable, nil
}
