package helm

import (
	"context"
	"errors"

	"github.com/helmlog/helm/projection"
)

// Follow calls fn with each event of the voyage whose sequence number is
// from or more (0 and 1 mean every event), in order, as a transcript line
// (Line: with its entry number and links), and then with each event
// appended afterwards, by this handle, another one or another process, as
// it is appended: a viewer follows a voyage being recorded. It ends when
// ctx does, returning ctx.Err(), or when fn returns an error, which it
// returns unchanged. Like Transcript, it leaves out artifacts' storage
// events.
//
// Following reads: it takes no lock and writes nothing. It polls the end
// of the log (segment.FollowInterval) while nothing is new. The lines of a
// voyage written before entry numbers were stored number an action that
// failed later as it was numbered when recorded; Transcript, which sees
// the whole voyage, numbers it as the story does in the end.
func (v *Voyage) Follow(ctx context.Context, from uint64, fn func(Line) error) error {
	f := newLineFolder(v.Info())
	err := v.rec.Follow(ctx, 1, eventsOf(v.id, v.rec.Dir(), func(seq uint64, e *projection.Event) error {
		l, ok, err := f.fold(seq, e)
		if err != nil || !ok || seq < from {
			return err
		}
		if err := fn(l); err != nil {
			return &callerError{err}
		}
		return nil
	}))
	var ce *callerError
	switch {
	case errors.As(err, &ce):
		return ce.err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return ctx.Err()
	case err != nil:
		return v.fail("follow", err, Hint{})
	}
	return nil
}

// callerError carries an error of the caller's function through a scan,
// to be returned unchanged.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
