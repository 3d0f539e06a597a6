package helm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/hometest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// TestEventsYieldsTheLogInOrder: Events yields every event of the log
// from the seq asked, each with its seq, decoded; artifacts' bytes are
// no event, their storage events are; from 0 and 1 mean the first.
func TestEventsYieldsTheLogInOrder(t *testing.T) {
	ctx := context.Background()
	for _, home := range hometest.Homes(t) {
		t.Run(home.Name, func(t *testing.T) {
			v, err := home.Home().Start(ctx, "Resolve #42", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			defer v.Close()
			_, err = v.Observe(ctx, &note{Topic: "crash", Text: "nil config"}, who, nil)
			require.NoError(t, err)
			_, err = v.TakeBearing(ctx, "A nil config.", who, nil)
			require.NoError(t, err)
			_, err = v.Note(ctx, "Writing the test.", who)
			require.NoError(t, err)

			var seqs []uint64
			var types []projection.Type
			for e, err := range v.Events(ctx, 0) {
				require.NoError(t, err)
				seqs = append(seqs, e.Seq)
				types = append(types, e.Type)
			}
			assert.Equal(t, []projection.Type{projection.VoyageStarted, projection.ArtifactStowed, projection.Observed,
				projection.BearingTaken, projection.NoteAdded}, types)
			for i := 1; i < len(seqs); i++ {
				assert.Greater(t, seqs[i], seqs[i-1], "in the log's order")
			}
			assert.Equal(t, v.Info().Seq, seqs[len(seqs)-1], "to the end of the log")

			var from1 []uint64
			for e, err := range v.Events(ctx, 1) {
				require.NoError(t, err)
				from1 = append(from1, e.Seq)
			}
			assert.Equal(t, seqs, from1, "from 1 is from the first")

			var later []helm.Event
			for e, err := range v.Events(ctx, seqs[3]) {
				require.NoError(t, err)
				later = append(later, e)
			}
			require.Len(t, later, 2)
			assert.Equal(t, seqs[3], later[0].Seq)
			assert.Equal(t, "A nil config.", later[0].Bearing.Reading.Text)
			assert.Equal(t, 1, later[0].N, "the entry's number")
			assert.Equal(t, "Writing the test.", later[1].Note.Text)
		})
	}
}

// TestEventsStopsWhenTheCallerDoes: leaving the loop ends the scan, and
// nothing more is yielded.
func TestEventsStopsWhenTheCallerDoes(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	for range 3 {
		_, err := v.Note(ctx, "one more", who)
		require.NoError(t, err)
	}
	n := 0
	for _, err := range v.Events(ctx, 0) {
		require.NoError(t, err)
		n++
		if n == 2 {
			break
		}
	}
	assert.Equal(t, 2, n)
}

// TestEventsNamesTheDamage: a record damaged in the log ends the events
// with one error that names the voyage and is damage; the events before
// it were yielded.
func TestEventsNamesTheDamage(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	for _, text := range []string{"one", "two", "three", "four"} {
		_, err := v.Note(ctx, text, who)
		require.NoError(t, err)
	}
	id := v.ID()
	require.NoError(t, v.Close())
	v, err := h.Voyage(ctx, id) // opened before the damage
	require.NoError(t, err)
	defer v.Close()
	segs, err := filepath.Glob(filepath.Join(h.Dir(), "voyages", id, "events", "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	data, err := os.ReadFile(segs[len(segs)-1])
	require.NoError(t, err)
	data[len(data)/2] ^= 0x40 // inside a unit before the last: damage, not a write in progress
	require.NoError(t, os.WriteFile(segs[len(segs)-1], data, 0o600))

	var seen []projection.Type
	var errs []error
	for e, err := range v.Events(ctx, 0) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen = append(seen, e.Type)
	}
	require.Len(t, errs, 1, "one error, last")
	assert.ErrorIs(t, errs[0], helm.ErrDamaged)
	var ve *helm.VoyageError
	require.ErrorAs(t, errs[0], &ve)
	assert.Equal(t, id, ve.Voyage)
	assert.Contains(t, seen, projection.VoyageStarted, "the events before the damage")
}

// TestFollowSeesWhatAnotherHomeAppends: a follower gets the events from
// the seq it asked for, then those another handle (of another home
// opened on the same voyages, as another process would) appends, as they
// are appended, until its context ends: then ctx's error, last.
func TestFollowSeesWhatAnotherHomeAppends(t *testing.T) {
	ctx := context.Background()
	for _, home := range hometest.Homes(t) {
		t.Run(home.Name, func(t *testing.T) {
			h := home.Home()
			v, err := h.Start(ctx, "Resolve #42", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			defer v.Close()
			_, err = v.Note(ctx, "before", who)
			require.NoError(t, err)
			from := v.Info().Seq + 1

			fctx, cancel := context.WithCancel(ctx)
			events := make(chan helm.Event, 16)
			done := make(chan error, 1)
			go func() {
				for e, err := range v.Follow(fctx, from) {
					if err != nil {
						done <- err
						return
					}
					events <- e
				}
				done <- nil
			}()

			wv, err := home.Other().Voyage(ctx, v.ID())
			require.NoError(t, err)
			defer wv.Close()
			_, err = wv.Note(ctx, "appended by another", who)
			require.NoError(t, err)
			_, err = wv.Note(ctx, "and another", who)
			require.NoError(t, err)

			first := <-events
			assert.Equal(t, from, first.Seq, "nothing before from")
			assert.Equal(t, "appended by another", first.Note.Text)
			assert.Equal(t, 2, first.N)
			second := <-events
			assert.Equal(t, "and another", second.Note.Text)

			cancel()
			err = <-done
			assert.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, context.Canceled, err, "ctx's error as it is")
		})
	}
}

// TestFollowStopsWhenTheCallerDoes: leaving the loop ends following
// without waiting for ctx.
func TestFollowStopsWhenTheCallerDoes(t *testing.T) {
	_, v := newVoyage(t, nil)
	var seen []projection.Type
	for e, err := range v.Follow(context.Background(), 0) {
		require.NoError(t, err)
		seen = append(seen, e.Type)
		break
	}
	assert.Equal(t, []projection.Type{projection.VoyageStarted}, seen)
}

// writeStory writes v's story as package story's WriteText does (the
// root's tests import no package built on the root): the header from
// Info, the entries from Entries, rendered by package logbook. An error
// reading the entries is returned, never a story cut short.
func writeStory(ctx context.Context, v *helm.Voyage, w io.Writer) error {
	info := v.Info()
	h := logbook.Header{Intent: info.Intent, Identity: info.Identity, Created: info.Created, Status: info.Status,
		CompletedAt: info.CompletedAt, Outcome: info.Outcome, Summary: info.Summary}
	for _, t := range info.Lifecycle {
		h.Lifecycle = append(h.Lifecycle, logbook.Change(t))
	}
	var entries []logbook.Entry
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	return logbook.WriteStory(w, h, entries)
}

// exportEvents writes v's events as JSON lines, as package replay's
// WriteEvents does: each event as the read path yields it.
func exportEvents(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return err
		}
		data, err := json.Marshal(&e)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(data, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// deterministic returns options under which a scripted voyage records
// the same bytes on every run, as package replay's Deterministic does: a
// clock from start moving step at every reading, ids made of prefix and
// a counter from 1.
func deterministic(start time.Time, step time.Duration, prefix string) *helm.Options {
	var mu sync.Mutex
	t, n := start.UTC(), 0
	return &helm.Options{
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			t = t.Add(step)
			return t
		},
		NewID: func() uuid.UUID {
			mu.Lock()
			defer mu.Unlock()
			n++
			return uuid.MustParse(fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, n))
		},
	}
}
