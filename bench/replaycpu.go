package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/helmlog/helm"
)

// replayCPU opens the voyage id of home without its snapshot (every event
// folded) reps times and reports the process CPU time an open takes (user
// and system, both cores: the scan, the fold, and the digests the scan's
// helper computes). On a shared machine the open's wall-clock time
// (replay_events_per_s) swings with the load, as the helper runs only on
// a free core; its CPU time is what a quieter machine divides between
// two cores.
func replayCPU(ctx context.Context, home *helm.Home, id, snapshot string, events uint64, reps int, r *report) (err error) {
	// The snapshot is put back afterwards: what follows opens the voyage
	// as it was.
	snap, err := os.ReadFile(snapshot)
	if err == nil {
		defer func() {
			if werr := os.WriteFile(snapshot, snap, 0o600); werr != nil && err == nil {
				err = werr
			}
		}()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var cpu []float64
	for range reps {
		if rerr := os.Remove(snapshot); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return rerr
		}
		start := cpuTime()
		_, seq, oerr := timeOpen(ctx, home, id)
		if oerr != nil {
			return oerr
		}
		cpu = append(cpu, ms(cpuTime()-start))
		if seq != events {
			return fmt.Errorf("open gave %d events, want %d", seq, events)
		}
	}
	r.put("open_cpu_ms_100k_events", median(cpu)*100_000/float64(events),
		fmt.Sprintf("process CPU of Voyage + Close, no snapshot, scaled from %d events; %s", events, spread(cpu)))
	return nil
}
