package helm

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// TestAttackAListHeldWhileOthersRunKeepsItsOwnViews: a list decodes the
// index's views into slabs (the crew, the lifecycle, the handoffs). A
// caller that holds one list's result while other lists run, and appends
// to one voyage's slices, sees its result unchanged, and no voyage's
// slices change another's.
func TestAttackAListHeldWhileOthersRunKeepsItsOwnViews(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	for i := range 40 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		for j := range i % 4 {
			who := logbook.Who{Identity: fmt.Sprintf("crew-%d-%d", i, j), Role: "coder", Method: "human"}
			m, err := marks.NewContext(fmt.Sprint("note ", j))
			require.NoError(t, err)
			_, err = v.Observe(ctx, m, who, nil)
			require.NoError(t, err)
		}
		if i%3 == 0 {
			require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, fmt.Sprint("done ", i), indexWho))
		}
		require.NoError(t, v.Close())
	}
	held, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, held, 40)
	want := deepInfos(held)

	// Appending to one voyage's slices writes past its end, into the
	// slab's next elements, unless each slice's capacity ends with it.
	for i := range held {
		held[i].Crew = append(held[i].Crew, "appended")
		held[i].Lifecycle = append(held[i].Lifecycle, Transition{Reason: "appended"})
		held[i].Handoffs = append(held[i].Handoffs, logbook.Entry{})
	}
	for i := range held {
		n := len(held[i].Crew)
		held[i].Crew = held[i].Crew[:n-1]
		held[i].Lifecycle = held[i].Lifecycle[:len(held[i].Lifecycle)-1]
		held[i].Handoffs = held[i].Handoffs[:len(held[i].Handoffs)-1]
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				_, err := h.List(ctx, nil)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, want, deepInfos(held), "the held list is as it was")
}

// deepInfos copies infos, every slice and string of them.
func deepInfos(infos []VoyageInfo) []VoyageInfo {
	out := make([]VoyageInfo, len(infos))
	for i, in := range infos {
		c := in
		c.ID, c.Intent, c.Summary = string([]byte(in.ID)), string([]byte(in.Intent)), string([]byte(in.Summary))
		c.Crew = nil
		for _, s := range in.Crew {
			c.Crew = append(c.Crew, string([]byte(s)))
		}
		c.Lifecycle = append([]Transition(nil), in.Lifecycle...)
		for j := range c.Lifecycle {
			c.Lifecycle[j].Reason = string([]byte(c.Lifecycle[j].Reason))
			c.Lifecycle[j].Who.Identity = string([]byte(c.Lifecycle[j].Who.Identity))
		}
		c.Handoffs = append([]logbook.Entry(nil), in.Handoffs...)
		out[i] = c
	}
	return out
}
