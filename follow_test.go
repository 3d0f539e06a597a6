package helm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// TestFollowSeesWhatAnotherHandleAppends: a follower gets the lines from
// the sequence number it asked for, then the events another handle (of
// another Home, as another process would) appends, with their entry
// numbers and links, until its context ends.
func TestFollowSeesWhatAnotherHandleAppends(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, fixedOptions())
	_, err := v.Observe(ctx, &note{Topic: "crash", Text: "nil config"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "A nil config.", who, nil)
	require.NoError(t, err)
	from := v.Info().Seq + 1

	reader, err := helm.Open(h.Dir(), nil)
	require.NoError(t, err)
	rv, err := reader.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer rv.Close()

	fctx, cancel := context.WithCancel(ctx)
	lines := make(chan helm.Line, 16)
	done := make(chan error, 1)
	go func() {
		done <- rv.Follow(fctx, from, func(l helm.Line) error { lines <- l; return nil })
	}()

	writer, err := helm.Open(h.Dir(), nil)
	require.NoError(t, err)
	wv, err := writer.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer wv.Close()
	_, err = wv.Challenge(ctx, 1, helm.Challenge{Feedback: "not nil: empty", Reading: "An empty config."}, who)
	require.NoError(t, err)
	_, err = wv.Note(ctx, "Writing the test.", who)
	require.NoError(t, err)

	challenge := <-lines
	assert.Equal(t, from, challenge.Seq, "nothing before from")
	assert.Equal(t, v.ID(), challenge.VoyageID)
	assert.Equal(t, "challenged bearing 1 (not nil: empty): An empty config.", challenge.Describe())
	note := <-lines
	assert.Equal(t, "Note 2: Writing the test.", note.Describe())

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// TestFollowReturnsTheCallersError: an error from fn ends Follow and is
// returned as it is.
func TestFollowReturnsTheCallersError(t *testing.T) {
	_, v := newVoyage(t, fixedOptions())
	stop := errors.New("seen enough")
	var seen []string
	err := v.Follow(context.Background(), 0, func(l helm.Line) error {
		seen = append(seen, l.Describe())
		return stop
	})
	assert.Same(t, stop, err)
	assert.Equal(t, []string{"started: Resolve #42: fix widget crash"}, seen)
}
