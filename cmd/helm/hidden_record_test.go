package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// An event record turned into a stub that no artifact names (issue 31,
// item 3: a hidden record) makes `helm log` refuse, exit 1, instead of
// telling the story without it; verify says so too.
func TestLogRefusesAStubNoArtifactNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("nothing hidden")
	// Small segments, so that the first ones are sealed (only a sealed
	// segment holds stubs).
	small := func(args ...string) {
		t.Helper()
		m := h.main()
		m.Options.SegmentSize = 4 << 10
		var stdout, stderr bytes.Buffer
		err := m.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		require.Equal(t, 0, ReportError(&stderr, err), "%s", stderr.String())
	}
	for i := range 30 {
		small("--voyage", id, "observe", "context", fmt.Sprint("a look ", i, " with some words to fill a segment sooner"))
	}
	h.ok("--voyage", id, "log")

	events := filepath.Join(h.Home, "voyages", id, "events")
	log, err := segment.Open(context.Background(), events, &segment.Options{Identity: id, NoSync: true})
	require.NoError(t, err)
	var observed []uint64
	require.NoError(t, log.Scan(context.Background(), 1, func(r segment.Record) error {
		if e, err := projection.Decode(r.Data); err == nil && e.Type == projection.Observed {
			observed = append(observed, r.Seq)
		}
		return nil
	}))
	require.Len(t, observed, 30)
	rec, err := log.Reclaim(context.Background(), func(r segment.Record) bool { return r.Seq == observed[1] })
	require.NoError(t, log.Close())
	require.NoError(t, err)
	require.Equal(t, 1, rec.Records, "the observation's record is a stub")

	r := h.fails(1, "--voyage", id, "log")
	assert.Contains(t, r.Stderr, fmt.Sprintf("record %d was reclaimed, but no artifact was stored in it", observed[1]))
	assert.Contains(t, r.Stderr, "\nTry: ")
	assert.Empty(t, r.Stdout)
	r = h.fails(1, "--voyage", id, "voyage", "verify")
	assert.Contains(t, r.Stdout, fmt.Sprintf("record %d was reclaimed", observed[1]))
}
