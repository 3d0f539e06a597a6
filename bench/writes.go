package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmlog/helm"
)

// The machine is shared and its disk's latency drifts by several times
// within seconds when others run tests. So the write benchmarks interleave
// the contenders in small chunks (raw, SQLite, helm, rotating who goes
// first) within each repetition, and sum each one's time over its chunks:
// every contender sees the same weather.

// side is one contender of an interleaved benchmark: run performs ops
// [from, to) of its stream and reports how many it completed.
type side struct {
	name    string
	run     func(from, to int) (int, error)
	elapsed time.Duration
	done    int
}

// interleave runs every side over n operations, chunk operations at a
// time, rotating the order, and returns the rate of each side.
func interleave(sides []*side, n, chunk int) ([]float64, error) {
	for k, from := 0, 0; from < n; k, from = k+1, from+chunk {
		to := min(from+chunk, n)
		for i := range sides {
			s := sides[(i+k)%len(sides)]
			start := time.Now()
			done, err := s.run(from, to)
			s.elapsed += time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			s.done += done
		}
	}
	rates := make([]float64, len(sides))
	for i, s := range sides {
		rates[i] = float64(s.done) / s.elapsed.Seconds()
	}
	return rates, nil
}

// latencies collects the single writer's per-operation latencies (ms) by
// class of operation.
type latencies map[string][]float64

var opClasses = []string{"observe_new", "observe_repeat", "bearing"}

func (l latencies) add(op Op, d time.Duration) {
	class := "observe_new"
	switch {
	case op.Bearing:
		class = "bearing"
	case op.Repeat:
		class = "observe_repeat"
	}
	l[class] = append(l[class], ms(d))
}

// rawSide appends 256 bytes to a new file in dir per operation, each
// followed by fdatasync: the disk's limit for a log that syncs every
// append.
func rawSide(dir string) (*side, func(), error) {
	path := filepath.Join(dir, "raw-fdatasync.dat")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	rec := make([]byte, 256)
	for i := range rec {
		rec[i] = byte('a' + i%26)
	}
	return &side{name: "raw fdatasync", run: func(from, to int) (int, error) {
			for range to - from {
				if _, err := f.Write(rec); err != nil {
					return 0, err
				}
				if err := fdatasync(f); err != nil {
					return 0, err
				}
			}
			return to - from, nil
		}}, func() {
			f.Close()
			os.Remove(path)
		}, nil
}

// twoFilesSide appends 256 bytes to each of two files per operation and
// fdatasyncs both, one after the other or at the same time: what an
// artifact pack beside an event log costs when both are synced per commit.
func twoFilesSide(dir string, parallel bool) (*side, func(), error) {
	var fs [2]*os.File
	cleanup := func() {
		for _, f := range fs {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}
	for i := range fs {
		path := filepath.Join(dir, fmt.Sprintf("raw-two-%t-%d.dat", parallel, i))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		fs[i] = f
	}
	rec := make([]byte, 256)
	sync1 := func(f *os.File) error {
		if _, err := f.Write(rec); err != nil {
			return err
		}
		return fdatasync(f)
	}
	name := "two files, serial"
	if parallel {
		name = "two files, parallel"
	}
	return &side{name: name, run: func(from, to int) (int, error) {
		for range to - from {
			if !parallel {
				for _, f := range fs {
					if err := sync1(f); err != nil {
						return 0, err
					}
				}
				continue
			}
			errc := make(chan error, 1)
			go func() { errc <- sync1(fs[1]) }()
			err0 := sync1(fs[0])
			if err1 := <-errc; err0 == nil {
				err0 = err1
			}
			if err0 != nil {
				return 0, err0
			}
		}
		return to - from, nil
	}}, cleanup, nil
}

// overwriteSide writes 256 bytes per operation into a file whose blocks
// were written (zeros) and synced beforehand, each write followed by
// fdatasync: the same work as rawSide without growing the file, which is
// how SQLite's WAL is written once it wraps. It shows what preallocated,
// zero-filled segments would save per sync.
func overwriteSide(dir string, n int) (*side, func(), error) {
	path := filepath.Join(dir, "raw-overwrite.dat")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		f.Close()
		os.Remove(path)
	}
	if _, err = f.Write(make([]byte, (n+1)*256)); err == nil {
		err = f.Sync()
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	rec := make([]byte, 256)
	for i := range rec {
		rec[i] = byte('a' + i%26)
	}
	off := int64(0)
	return &side{name: "overwrite fdatasync", run: func(from, to int) (int, error) {
		for range to - from {
			if _, err := f.WriteAt(rec, off); err != nil {
				return 0, err
			}
			off += int64(len(rec))
			if err := fdatasync(f); err != nil {
				return 0, err
			}
		}
		return to - from, nil
	}}, cleanup, nil
}

func benchSingle(ctx context.Context, cfg config, dir string, r *report) error {
	var raw, sq, hm, two, twoPar, over, sqBytes, hmBytes, ratio, ratioRaw, ratioOver []float64
	sqLat, hmLat := latencies{}, latencies{}
	for rep := range cfg.Reps {
		repDir := filepath.Join(dir, fmt.Sprintf("single-%d", rep))
		if err := os.MkdirAll(repDir, 0o700); err != nil {
			return err
		}
		ops := NewWorkload(uint64(rep+1), "").Ops(cfg.SingleOps)

		rs, closeRaw, err := rawSide(repDir)
		if err != nil {
			return err
		}
		ow, closeOW, err := overwriteSide(repDir, cfg.SingleOps)
		if err != nil {
			closeRaw()
			return err
		}
		sv, err := createSQLiteVoyage(filepath.Join(repDir, "voyage.sqlite"), 1)
		if err != nil {
			closeRaw()
			closeOW()
			return err
		}
		home, err := helm.Open(filepath.Join(repDir, "helm"), nil)
		if err != nil {
			return err
		}
		hv, err := home.Start(ctx, "bench single writer", helm.OpenWaters, who, nil)
		if err != nil {
			return err
		}
		sides := []*side{
			// The raw sides run as many syncs as the others run operations.
			rs,
			ow,
			{name: "sqlite", run: func(from, to int) (int, error) {
				for _, op := range ops[from:to] {
					t := time.Now()
					if err := sv.do(ctx, op); err != nil {
						return 0, err
					}
					sqLat.add(op, time.Since(t))
				}
				return to - from, nil
			}},
			{name: "helm", run: func(from, to int) (int, error) {
				done := 0
				for _, op := range ops[from:to] {
					t := time.Now()
					ok, err := helmDo(ctx, hv, op)
					if err != nil {
						return 0, err
					}
					hmLat.add(op, time.Since(t))
					if ok {
						done++
					}
				}
				return done, nil
			}},
		}
		rates, err := interleave(sides, cfg.SingleOps, cfg.Chunk)
		closeRaw()
		closeOW()
		if err != nil {
			sv.close()
			hv.Close()
			return err
		}
		raw, over, sq, hm = append(raw, rates[0]), append(over, rates[1]), append(sq, rates[2]), append(hm, rates[3])
		ratio, ratioRaw = append(ratio, rates[3]/rates[2]), append(ratioRaw, rates[3]/rates[0])
		ratioOver = append(ratioOver, rates[3]/rates[1])

		if err := sv.checkpoint(); err != nil {
			return err
		}
		sqBytes = append(sqBytes, float64(sv.bytes()))
		if err := sv.close(); err != nil {
			return err
		}
		if err := hv.Close(); err != nil {
			return err
		}
		hmBytes = append(hmBytes, float64(dirBytes(hv.Storage().Dir)))

		// Two files synced per operation, serially and in parallel
		// (interleaved with each other).
		ts, closeTS, err := twoFilesSide(repDir, false)
		if err != nil {
			return err
		}
		tp, closeTP, err := twoFilesSide(repDir, true)
		if err != nil {
			closeTS()
			return err
		}
		rates, err = interleave([]*side{ts, tp}, cfg.RawOps, cfg.Chunk)
		closeTS()
		closeTP()
		if err != nil {
			return err
		}
		two, twoPar = append(two, rates[0]), append(twoPar, rates[1])
		os.RemoveAll(repDir)
	}
	r.put("raw_fdatasync_per_s", median(raw), spread(raw))
	r.put("sqlite_events_per_s", median(sq), spread(sq))
	r.put("helm_events_per_s", median(hm), spread(hm))
	r.put("helm_vs_sqlite", median(ratio), "median of per-rep ratios; "+spread(ratio))
	r.put("helm_vs_raw", median(ratioRaw), "median of per-rep ratios; "+spread(ratioRaw))
	r.put("helm_vs_raw_overwrite", median(ratioOver), "helm's records/s over raw 256 B overwrites + fdatasync on a preallocated file; median of per-rep ratios; "+spread(ratioOver))
	for _, class := range opClasses {
		r.put("sqlite_"+class+"_ms", median(sqLat[class]), fmt.Sprintf("median latency of %d ops", len(sqLat[class])))
		r.put("helm_"+class+"_ms", median(hmLat[class]), fmt.Sprintf("median latency of %d ops", len(hmLat[class])))
	}
	r.put("raw_fdatasync_overwrite_per_s", median(over), "256 B + fdatasync into already written blocks (no file growth); "+spread(over))
	r.put("raw_two_files_serial_per_s", median(two), "append 256 B to two files, fdatasync one then the other; "+spread(two))
	r.put("raw_two_files_parallel_per_s", median(twoPar), "the same, both fdatasyncs at once; "+spread(twoPar))
	r.put("sqlite_bytes", median(sqBytes), fmt.Sprintf("%d ops, after wal_checkpoint(TRUNCATE)", cfg.SingleOps))
	r.put("helm_bytes", median(hmBytes), "the voyage directory")
	r.put("bytes_on_disk_vs_sqlite", median(hmBytes)/median(sqBytes), "helm / SQLite, lower is smaller")
	return nil
}

// concurrently runs ops[g] on goroutine g, all released at once, and
// returns the number of operations done.
func concurrently(ops [][]Op, do func(Op) (bool, error)) (int, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	gate := make(chan struct{})
	for _, mine := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			for _, op := range mine {
				ok, err := do(op)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if ok {
					done.Add(1)
				}
			}
		}()
	}
	close(gate)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return int(done.Load()), nil
}

func benchConcurrent(ctx context.Context, cfg config, dir string, r *report) error {
	var sq, hm, ratio, group []float64
	for rep := range cfg.Reps {
		repDir := filepath.Join(dir, fmt.Sprintf("concurrent-%d", rep))
		if err := os.MkdirAll(repDir, 0o700); err != nil {
			return err
		}
		ops := make([][]Op, cfg.Goroutines)
		for g := range ops {
			ops[g] = NewWorkload(uint64(1000*(rep+1)+g), fmt.Sprintf("g%d/", g)).Ops(cfg.ConcOps)
		}
		slice := func(from, to int) [][]Op {
			out := make([][]Op, len(ops))
			for g := range ops {
				out[g] = ops[g][from:to]
			}
			return out
		}
		sv, err := createSQLiteVoyage(filepath.Join(repDir, "voyage.sqlite"), cfg.Goroutines)
		if err != nil {
			return err
		}
		home, err := helm.Open(filepath.Join(repDir, "helm"), nil)
		if err != nil {
			sv.close()
			return err
		}
		hv, err := home.Start(ctx, "bench concurrent writers", helm.OpenWaters, who, nil)
		if err != nil {
			sv.close()
			return err
		}
		sides := []*side{
			{name: "sqlite", run: func(from, to int) (int, error) {
				return concurrently(slice(from, to), func(op Op) (bool, error) { return true, sv.do(ctx, op) })
			}},
			{name: "helm", run: func(from, to int) (int, error) {
				return concurrently(slice(from, to), func(op Op) (bool, error) { return helmDo(ctx, hv, op) })
			}},
		}
		if rep%2 == 1 {
			slices.Reverse(sides)
		}
		rates, err := interleave(sides, cfg.ConcOps, max(1, cfg.Chunk/4))
		if st := hv.Storage().Writes; st.Syncs > 0 {
			group = append(group, float64(st.Records)/float64(st.Syncs))
		}
		sv.close()
		hv.Close()
		if err != nil {
			return err
		}
		if rep%2 == 1 {
			slices.Reverse(rates)
		}
		sq, hm = append(sq, rates[0]), append(hm, rates[1])
		ratio = append(ratio, rates[1]/rates[0])
		os.RemoveAll(repDir)
	}
	note := fmt.Sprintf("%d goroutines on one voyage; %%s", cfg.Goroutines)
	r.put(fmt.Sprintf("sqlite_concurrent%d_events_per_s", cfg.Goroutines), median(sq), fmt.Sprintf(note, spread(sq)))
	r.put(fmt.Sprintf("helm_concurrent%d_events_per_s", cfg.Goroutines), median(hm), fmt.Sprintf(note, spread(hm)))
	r.put(fmt.Sprintf("concurrent%d_vs_sqlite", cfg.Goroutines), median(ratio), "median of per-rep ratios; "+spread(ratio))
	r.put(fmt.Sprintf("group_size_%d", cfg.Goroutines), median(group), "log records per fdatasync, helm's writers; "+spread(group))
	return nil
}
