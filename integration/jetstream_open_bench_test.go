package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/store/natsstore"
)

// TestSharedOpenSpeed prints how long opening a long shared voyage takes
// (helm.Home.Voyage, then Close) on a JetStream server, from the snapshot
// its last writer put in the store and without it (every event folded, as
// every open did before shared snapshots), interleaved, when
// HELM_STORE_BENCH=1: HELM_STORE_BENCH=1 go test -v -run TestSharedOpenSpeed .
// The voyage (HELM_STORE_BENCH_EVENTS notes, default 100,000) is written
// on disk and copied to the store (Home.Copy); a writer then records one
// note there and closes, which puts the snapshot. Rounds:
// HELM_STORE_BENCH_ROUNDS (default 5).
func TestSharedOpenSpeed(t *testing.T) {
	if testing.Short() || os.Getenv("HELM_STORE_BENCH") != "1" {
		t.Skip("HELM_STORE_BENCH=1 prints the time to open a long shared voyage")
	}
	events := envInt("HELM_STORE_BENCH_EVENTS", 100_000)
	rounds := envInt("HELM_STORE_BENCH_ROUNDS", 5)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	who := logbook.Who{Identity: "bench", Role: "coder", Method: "human"}

	disk, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	v, err := disk.Start(ctx, "a long voyage", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	for i := range events - 1 {
		_, err := v.Note(ctx, fmt.Sprintf("note %d of a long voyage, as an agent records one", i), who)
		require.NoError(t, err)
	}
	id := v.ID()
	require.NoError(t, v.Close())

	srv := startServer(t, "open-bench", func(o *server.Options) { o.SyncAlways = true })
	home := newHome()
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer st.Close()
	shared, err := helm.OpenStore(filepath.Join(t.TempDir(), "local"), st, "bench", nil)
	require.NoError(t, err)
	_, err = disk.Copy(ctx, id, shared)
	require.NoError(t, err)
	w, err := shared.Voyage(ctx, id)
	require.NoError(t, err)
	_, err = w.Note(ctx, "the last note, whose writer puts the snapshot", who)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	obs, err := rawJS(t, srv).ObjectStore(ctx, "HELM_"+home+"_artifacts")
	require.NoError(t, err)
	snapshot, err := obs.GetBytes(ctx, id+"/snapshot")
	require.NoError(t, err, "the writer's Close put a snapshot")

	open := func() (time.Duration, uint64) {
		// A new client each time, as a new helm process opens it.
		c := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
		defer c.Close()
		h, err := helm.OpenStore(filepath.Join(t.TempDir(), "local"), c, "bench", nil)
		require.NoError(t, err)
		start := time.Now()
		v, err := h.Voyage(ctx, id)
		require.NoError(t, err)
		seq := v.Info().Seq
		require.NoError(t, v.Close())
		return time.Since(start), seq
	}
	var with, without []float64
	for range rounds {
		for _, snap := range []bool{true, false} {
			if snap {
				_, err = obs.PutBytes(ctx, id+"/snapshot", snapshot)
			} else {
				err = obs.Delete(ctx, id+"/snapshot")
				if errors.Is(err, njs.ErrObjectNotFound) {
					err = nil
				}
			}
			require.NoError(t, err)
			d, seq := open()
			require.Equal(t, uint64(events+1), seq)
			ms := float64(d.Microseconds()) / 1000
			if snap {
				with = append(with, ms)
			} else {
				without = append(without, ms)
			}
		}
	}
	sorted := func(xs []float64) []float64 { s := slices.Clone(xs); slices.Sort(s); return s }
	fmt.Printf("shared_open_ms_%dk_events: %.1f (from the snapshot, new client, R1 sync_interval always; goal < 100; rounds %v; snapshot %d bytes)\n",
		events/1000, median(with), sorted(with), len(snapshot))
	fmt.Printf("shared_open_ms_%dk_events_no_snapshot: %.1f (every event folded, as before; rounds %v)\n", events/1000, median(without), sorted(without))
}
