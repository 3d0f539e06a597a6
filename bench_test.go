package helm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// buildVoyage writes a voyage of about n events (3 observes : 1 bearing)
// without fsync — the setup is not what is measured.
func buildVoyage(b *testing.B, n int) (*helm.Home, string) {
	ctx := context.Background()
	h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
	require.NoError(b, err)
	v, err := h.Start(ctx, "bench", helm.OpenWaters, who, nil)
	require.NoError(b, err)
	defer v.Close()
	var wg sync.WaitGroup
	per := n / 4 / 8
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				for j := 0; j < 3; j++ {
					_, err := v.Observe(ctx, &note{Topic: fmt.Sprint(g, "-", j), Text: fmt.Sprint("sighting ", g, i, j)}, who, nil)
					require.NoError(b, err)
				}
				_, err := v.TakeBearing(ctx, fmt.Sprint("reading ", g, i), who, nil)
				if err != nil {
					require.ErrorIs(b, err, helm.ErrEmptySlate)
				}
			}
		}()
	}
	wg.Wait()
	return h, v.ID()
}

// BenchmarkOpen100kEvents opens (replays) a voyage of 100k events into
// fresh views. Reports events/s and ms per open.
func BenchmarkOpen100kEvents(b *testing.B) {
	ctx := context.Background()
	h, id := buildVoyage(b, 100_000)
	var events uint64
	b.ResetTimer()
	for b.Loop() {
		v, err := h.Voyage(ctx, id)
		require.NoError(b, err)
		events = v.Info().Seq
		v.Close()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}

// BenchmarkList10k lists a home of 10,000 voyages whose summaries are
// current: the cost of checking each against its log's tail.
func BenchmarkList10k(b *testing.B) {
	ctx := context.Background()
	h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
	require.NoError(b, err)
	for i := range 10_000 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), helm.OpenWaters, who, nil)
		require.NoError(b, err)
		_, err = v.Observe(ctx, &note{Topic: "t", Text: "x"}, who, nil)
		require.NoError(b, err)
		v.Close()
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := h.List(ctx, nil)
		require.NoError(b, err)
		require.Len(b, list, 10_000)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
}

// BenchmarkRecordConcurrent16 is 16 goroutines recording 2 KiB sightings
// (a third of them repeats) and taking bearings on one voyage, durably:
// the commit pipeline under load. records/sync is the grouping.
func BenchmarkRecordConcurrent16(b *testing.B) {
	ctx := context.Background()
	h, err := helm.Open(b.TempDir(), nil)
	require.NoError(b, err)
	v, err := h.Start(ctx, "bench", helm.OpenWaters, who, nil)
	require.NoError(b, err)
	defer v.Close()
	text := strings.Repeat("func (l *Log) Commit(ctx context.Context) error { return nil }\n", 32)
	const workers = 16
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range workers {
		n := b.N / workers
		if g < b.N%workers {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				var err error
				switch {
				case i%4 == 3:
					_, err = v.TakeBearing(ctx, fmt.Sprint("reading ", g, i), who, nil)
					if errors.Is(err, helm.ErrEmptySlate) {
						err = nil
					}
				case i%3 == 2: // a repeat
					_, err = v.Observe(ctx, &note{Topic: fmt.Sprint(g), Text: fmt.Sprint(g, text)}, who, nil)
				default:
					_, err = v.Observe(ctx, &note{Topic: fmt.Sprint(g, "-", i%8), Text: fmt.Sprint(g, i, text)}, who, nil)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := v.Storage().Writes
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(st.Records)/float64(st.Syncs), "records/sync")
}

// BenchmarkFirstHead measures the first Head of a handle on a voyage of
// 1k, 10k and 100k events: it reads the chain from the genesis over every
// record and compares it with the stored head (a head handed out is the
// records', never a stored link alone). Opening is not measured; later
// Heads of the handle read only what was appended since.
func BenchmarkFirstHead(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n/1000, "k"), func(b *testing.B) {
			h, id := buildVoyage(b, n)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				v, err := h.Voyage(ctx, id)
				require.NoError(b, err)
				b.StartTimer()
				_, err = v.Head(ctx)
				require.NoError(b, err)
				b.StopTimer()
				v.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/head")
		})
	}
}
