package integration

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
	"github.com/helmlog/helm/store/storetest"
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
//   - dir: storetest.Dir, fsync on (fdatasync per unit, as a home on disk);
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
			return openStore(t, url, natsstore.Options{Home: home, Replicas: replicas})
		}
	}
	targets := []target{
		{"dir (fsync)", func() store.Store { return storetest.OpenDir(dirRoot, nil) }},
		{"js-r1 (not synced)", jsOpen(r1.ClientURL(), newHome(), 1)},
		{"js-r1-sync (sync_interval always)", jsOpen(r1sync.ClientURL(), newHome(), 1)},
		{"js-r3 (3 nodes, quorum)", jsOpen(urls(cluster), clusterHome, 3)},
	}
	names := make([]string, len(targets))
	for i, tg := range targets {
		names[i] = tg.name
	}
	fmt.Print(benchTable(fmt.Sprintf("durable units/s (one 300-byte record per AppendIf), median of %d rounds of %v each", rounds, dur),
		"store", names, "16 writers", rounds, func(i, round, w int) float64 {
			return measure(t, targets[i].open, w, dur, fmt.Sprintf("r%d-w%d-%s", round, w, strings.Fields(targets[i].name)[0]))
		}))
}

// benchTable runs measure for every round, for one writer and for
// sixteen, on every target (interleaved), and tables each figure's
// median and its ratio to the first target's.
func benchTable(title, column string, targets []string, sixteen string, rounds int, measure func(target, round, writers int) float64) string {
	writerCounts := []int{1, 16}
	results := map[string][]float64{}
	for round := range rounds {
		for _, w := range writerCounts {
			for i, tg := range targets {
				key := fmt.Sprintf("%s|%d", tg, w)
				results[key] = append(results[key], measure(i, round, w))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s; GOMAXPROCS %d on a shared machine\n", title, runtimeProcs())
	fmt.Fprintf(&b, "%-36s %14s %8s %20s %8s\n", column, "1 writer", "ratio", sixteen, "ratio")
	base := map[int]float64{}
	for _, w := range writerCounts {
		base[w] = median(results[fmt.Sprintf("%s|%d", targets[0], w)])
	}
	for _, tg := range targets {
		fmt.Fprintf(&b, "%-36s", tg)
		for i, w := range writerCounts {
			m := median(results[fmt.Sprintf("%s|%d", tg, w)])
			fmt.Fprintf(&b, " %*.0f %7.2fx", []int{14, 20}[i], m, m/base[w])
		}
		b.WriteString("\n")
	}
	for _, tg := range targets {
		for _, w := range writerCounts {
			fmt.Fprintf(&b, "  %s, %d writers, every round: %v\n", tg, w, rounded(results[fmt.Sprintf("%s|%d", tg, w)]))
		}
	}
	return b.String()
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

// TestFacadeThroughput prints notes recorded per second through the
// facade, when HELM_STORE_BENCH=1: one writer, and sixteen clients (a
// Home and a connection each, as sixteen agents on sixteen machines)
// recording on one voyage, each change deciding on the tail it read and
// deciding again when another came first. The homes: on disk (helm.Open:
// the segment log's own path, group commit); the shared path on the
// segment store (helm.OpenStore on a storetest.Dir: what the seam costs);
// JetStream R1 with sync_interval always; JetStream R3.
// HELM_STORE_BENCH_ONLY=js-r1 keeps the homes whose name holds it (and
// the disk home, which the ratios are to).
func TestFacadeThroughput(t *testing.T) {
	if os.Getenv("HELM_STORE_BENCH") != "1" {
		t.Skip("HELM_STORE_BENCH=1 prints the facade's throughput on each store")
	}
	seconds := envInt("HELM_STORE_BENCH_SECONDS", 2)
	rounds := envInt("HELM_STORE_BENCH_ROUNDS", 3)
	dur := time.Duration(seconds) * time.Second
	r1sync := startServer(t, "fbench-r1-sync", func(o *server.Options) { o.SyncAlways = true })
	cluster := startCluster(t, nil)
	diskRoot, dirStore := t.TempDir(), t.TempDir()
	type target struct {
		name string
		home func(t *testing.T, name string) *helm.Home
	}
	shared := func(open func(name string) store.Store) func(t *testing.T, name string) *helm.Home {
		return func(t *testing.T, name string) *helm.Home {
			st := open(name)
			t.Cleanup(func() { st.Close() })
			h, err := helm.OpenStore(t.TempDir(), st, name, nil)
			require.NoError(t, err)
			return h
		}
	}
	targets := []target{
		{"disk home (helm.Open)", func(t *testing.T, name string) *helm.Home {
			h, err := helm.Open(filepath.Join(diskRoot, name), nil)
			require.NoError(t, err)
			return h
		}},
		{"shared path on storetest.Dir", shared(func(name string) store.Store { return storetest.OpenDir(filepath.Join(dirStore, name), nil) })},
		{"js-r1-sync", shared(func(name string) store.Store {
			return openStore(t, r1sync.ClientURL(), natsstore.Options{Home: name})
		})},
		{"js-r3", shared(func(name string) store.Store {
			return openStore(t, urls(cluster), natsstore.Options{Home: name, Replicas: 3})
		})},
	}
	if only := os.Getenv("HELM_STORE_BENCH_ONLY"); only != "" {
		// The disk home stays first: the ratios are to it.
		targets = slices.DeleteFunc(targets, func(tg target) bool {
			return tg.name != targets[0].name && !strings.Contains(tg.name, only)
		})
	}
	names := make([]string, len(targets))
	for i, tg := range targets {
		names[i] = tg.name
	}
	fmt.Print(benchTable(fmt.Sprintf("notes/s through the facade, median of %d rounds of %v each", rounds, dur),
		"home", names, "16 clients, 1 voyage", rounds, func(i, round, w int) float64 {
			name := fmt.Sprintf("f%dr%dw%d", i, round, w)
			return measureNotes(t, func() *helm.Home { return targets[i].home(t, name) }, w, dur)
		}))
}

// measureNotes starts a voyage in a home open makes, then has writers
// homes (from open, each its own client) record notes on it for dur, and
// returns the notes recorded per second.
func measureNotes(t *testing.T, open func() *helm.Home, writers int, dur time.Duration) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), dur+2*time.Minute)
	defer cancel()
	who := logbook.Who{Identity: "bench", Role: "coder", Method: "human"}
	first := open()
	v, err := first.Start(ctx, "throughput", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	handles := []*helm.Voyage{v}
	for range writers - 1 {
		w, err := open().Voyage(ctx, v.ID())
		require.NoError(t, err)
		defer w.Close()
		handles = append(handles, w)
	}
	var wg sync.WaitGroup
	counts := make([]int, writers)
	errs := make([]error, writers)
	start := time.Now()
	deadline := start.Add(dur)
	for i, h := range handles {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := h.Note(ctx, "a note of a few words, as an agent records one", who); err != nil {
					errs[i] = err
					return
				}
				counts[i]++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		require.NoError(t, err)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	return float64(total) / elapsed.Seconds()
}
