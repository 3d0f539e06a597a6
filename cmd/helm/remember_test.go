package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// rememberedWho finds what an identity last recorded however far back
// it lies: on its start, or on an entry pages before the end of a long
// voyage; and never what another identity recorded.
func TestRememberedWhoReadsBackThroughALongVoyage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true, Clock: func() time.Time { at = at.Add(time.Second); return at }})
	require.NoError(t, err)
	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	bob := logbook.Who{Identity: "bob", Role: "coder", Method: "claude"}
	v, err := h.Start(ctx, "long", helm.OpenWaters, ann, nil)
	require.NoError(t, err)
	defer v.Close()
	note := func(who logbook.Who, n int) {
		for range n {
			_, err := v.Note(ctx, "n", who)
			require.NoError(t, err)
		}
	}
	for _, tc := range []struct {
		name     string
		record   func()
		identity string
		want     logbook.Who
	}{
		{"the start, before a page of another's entries", func() { note(bob, 300) }, "ann", ann},
		{"an entry pages back, after its start", func() {
			note(logbook.Who{Identity: "ann", Role: "reviewer", Method: "human"}, 1)
			note(bob, 600)
		}, "ann", logbook.Who{Identity: "ann", Role: "reviewer", Method: "human"}},
		{"the latest entry", func() {}, "bob", bob},
		{"nothing for an identity that recorded nothing", func() {}, "carol", logbook.Who{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.record()
			got, err := rememberedWho(ctx, v, tc.identity)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
