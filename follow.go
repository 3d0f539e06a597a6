package helm

import (
	"context"
	"errors"
	"iter"

	"github.com/helmlog/helm/projection"
)

// Follow yields the voyage's events from sequence number from (0 and 1
// mean from the first), in order, as Events does, and then each event
// appended afterwards, by this handle, another one or another process,
// as it is appended: a viewer follows a voyage being recorded. It waits
// for new events until ctx is done, and then yields ctx.Err() and ends;
// the caller may stop earlier by leaving its loop. Any other error is
// yielded last, as Events yields it.
//
// Following reads: it takes no lock and writes nothing. It polls the end
// of the log (segment.FollowInterval) while nothing is new.
func (v *Voyage) Follow(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	events := v.eventSeq("follow", func(fn func(uint64, *projection.Event) error) error {
		return v.followEvents(ctx, from, fn)
	})
	return func(yield func(Event, error) bool) {
		for e, err := range events {
			if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				err = ctx.Err() // ended by the caller's ctx: say so unwrapped
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// followEvents calls fn with each event of the voyage from seq from, and
// with those appended later as they are, until ctx is done: the one call
// by which following reaches the log.
func (v *Voyage) followEvents(ctx context.Context, from uint64, fn func(seq uint64, e *projection.Event) error) error {
	return v.rec.Follow(ctx, from, eventsOf(v.id, v.rec.Dir(), fn))
}
