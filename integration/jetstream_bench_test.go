package integration

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/jetstream"
)

// TestStoreThroughput prints the durable units per second of each store,
// for one writer and for sixteen, and their ratios to the segment store's,
// when HELM_STORE_BENCH=1 (a figure to read, not a pass or fail; skipped
// otherwise): HELM_STORE_BENCH=1 go test -v -run TestStoreThroughput . A unit is one AppendIf of one 300-byte record, on the tail
// the writer knows (no conflicts). Sixteen writers are sixteen clients
// (a Dir each, or a connection each) appending to sixteen voyages of one
// home, as sixteen agents would. Each configuration runs for
// HELM_STORE_BENCH_SECONDS (default 2) per round, the rounds interleave
// the stores (HELM_STORE_BENCH_ROUNDS, default 3), and the table gives
// each figure's median.
//
// The stores:
//   - dir: store.Dir, fsync on (fdatasync per unit, as a home on disk);
//   - js-r1: one server, file storage, its default sync (every 2 minutes):
//     acknowledged means written, not synced — not durable against a
//     power cut, shown for comparison;
//   - js-r1-sync: one server with sync_interval: always: durable;
//   - js-r3: three servers, replicas 3, default sync: acknowledged means
//     on a quorum of two (DESIGN's "acknowledged means durable" on a
//     cluster). On one machine the three share its disk and cores.
func TestStoreThroughput(t *testing.T) {
	if os.Getenv("HELM_STORE_BENCH") != "1" {
		t.Skip("HELM_STORE_BENCH=1 prints the stores' throughput")
	}
	seconds := envInt("HELM_STORE_BENCH_SECONDS", 2)
	rounds := envInt("HELM_STORE_BENCH_ROUNDS", 3)
	dur := time.Duration(seconds) * time.Second

	r1 := startServer(t, "bench-r1", nil)
	r1sync := startServer(t, "bench-r1-sync", func(o *server.Options) { o.SyncAlways = true })
	cluster := startCluster(t, nil)
	clusterHome := newHome()
	openClustered(t, urls(cluster), clusterHome).Close()
	dirRoot := t.TempDir()

	type target struct {
		name string
		open func() store.Store
	}
	jsOpen := func(url, home string, replicas int) func() store.Store {
		return func() store.Store {
			return openStore(t, url, jetstream.Options{Home: home, Replicas: replicas})
		}
	}
	targets := []target{
		{"dir (fsync)", func() store.Store { return store.OpenDir(dirRoot, nil) }},
		{"js-r1 (not synced)", jsOpen(r1.ClientURL(), newHome(), 1)},
		{"js-r1-sync (sync_interval always)", jsOpen(r1sync.ClientURL(), newHome(), 1)},
		{"js-r3 (3 nodes, quorum)", jsOpen(urls(cluster), clusterHome, 3)},
	}
	writerCounts := []int{1, 16}
	results := map[string][]float64{}
	for round := range rounds {
		for _, w := range writerCounts {
			for _, tg := range targets {
				rate := measure(t, tg.open, w, dur, fmt.Sprintf("r%d-w%d-%s", round, w, strings.Fields(tg.name)[0]))
				key := fmt.Sprintf("%s|%d", tg.name, w)
				results[key] = append(results[key], rate)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "durable units/s (one 300-byte record per AppendIf), median of %d rounds of %v each; GOMAXPROCS %d on a shared machine\n", rounds, dur, runtimeProcs())
	fmt.Fprintf(&b, "%-36s %14s %8s %14s %8s\n", "store", "1 writer", "ratio", "16 writers", "ratio")
	base := map[int]float64{}
	for _, w := range writerCounts {
		base[w] = median(results[fmt.Sprintf("%s|%d", targets[0].name, w)])
	}
	for _, tg := range targets {
		fmt.Fprintf(&b, "%-36s", tg.name)
		for _, w := range writerCounts {
			m := median(results[fmt.Sprintf("%s|%d", tg.name, w)])
			fmt.Fprintf(&b, " %14.0f %7.2fx", m, m/base[w])
		}
		b.WriteString("\n")
	}
	for _, tg := range targets {
		for _, w := range writerCounts {
			fmt.Fprintf(&b, "  %s, %d writers, every round: %v\n", tg.name, w, rounded(results[fmt.Sprintf("%s|%d", tg.name, w)]))
		}
	}
	fmt.Print(b.String())
}

// measure runs writers clients, each appending units to a voyage of its
// own for dur, and returns the units acknowledged per second.
func measure(t *testing.T, open func() store.Store, writers int, dur time.Duration, tag string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
	defer cancel()
	record := make([]byte, 300)
	_, err := rand.Read(record)
	require.NoError(t, err)
	logs := make([]store.Log, writers)
	for i := range logs {
		s := open()
		defer s.Close()
		l, err := s.Create(ctx, fmt.Sprintf("%s-%d", tag, i))
		require.NoError(t, err)
		defer l.Close()
		logs[i] = l
	}
	var wg sync.WaitGroup
	counts := make([]int, writers)
	errs := make([]error, writers)
	start := time.Now()
	deadline := start.Add(dur)
	for i, l := range logs {
		wg.Go(func() {
			var last uint64
			for time.Now().Before(deadline) {
				if _, err := l.AppendIf(ctx, last, record); err != nil {
					errs[i] = err
					return
				}
				last++
				counts[i]++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		require.NoError(t, err, tag)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	return float64(total) / elapsed.Seconds()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
