package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/helmlog/helm"
)

// The CPU section measures what one event costs the process in CPU time
// (user + system, getrusage: cpuTime), not in wall-clock time: on a shared machine
// whose disk drifts, CPU per event is what the commit path itself spends.
// Each kind of event is measured with fsync on (the home as shipped) and
// off (Options.NoSync: no fsync or fdatasync at all), interleaved in
// chunks like the write benchmarks.
//
// And the 16-writer figure against helm's own fsync-free throughput: 16
// goroutines on one voyage, durable, over the same 16 goroutines on a
// NoSync home: 1.0 would be a commit path whose fdatasyncs cost nothing
// to throughput (group commit hides them entirely).

// cpuKinds are the events measured, in the order they are reported.
var cpuKinds = []string{"note", "observation", "bearing"}

// cpuSide is one home (synced or not) and one voyage on it, with the CPU
// time each kind of event took there.
type cpuSide struct {
	home   *helm.Home
	v      *helm.Voyage
	n      map[string]int
	cpu    map[string]time.Duration
	smalls int // small observations recorded, for distinct contents
}

func newCPUSide(ctx context.Context, dir string, noSync bool) (*cpuSide, error) {
	home, err := helm.Open(dir, &helm.Options{NoSync: noSync})
	if err != nil {
		return nil, err
	}
	v, err := home.Start(ctx, "bench cpu per event", helm.OpenWaters, who, nil)
	if err != nil {
		return nil, err
	}
	return &cpuSide{home: home, v: v, n: map[string]int{}, cpu: map[string]time.Duration{}}, nil
}

// observeSmall records a small observation: a new ~120-byte sighting at
// one of Paths paths (an artifact stowed in the log, the slate upserted).
func (s *cpuSide) observeSmall(ctx context.Context) error {
	s.smalls++
	path := fmt.Sprintf("cpu/file%d.go", s.smalls%Paths)
	content := fmt.Sprintf("package cpu\n\n// Version %d of this file.\nfunc F%d() int { return %d }\n", s.smalls, s.smalls, s.smalls*7)
	_, err := s.v.Record(ctx, helm.Observation{Mark: &benchMark{Path: path}, Sighting: &benchSighting{Path: path, Content: content}, ObservedAt: time.Now()}, who)
	return err
}

// chunk records n events of kind and adds the CPU time they took. A
// bearing needs a slate to seal: each is preceded by a small observation,
// outside the measured time.
func (s *cpuSide) chunk(ctx context.Context, kind string, n int) error {
	for i := range n {
		var err error
		switch kind {
		case "note":
			start := cpuTime()
			_, err = s.v.Note(ctx, fmt.Sprintf("Note %d: the parser keeps its state in the scanner; the lock is taken before the flush.", s.n[kind]+i), who)
			s.cpu[kind] += cpuTime() - start
		case "observation":
			start := cpuTime()
			err = s.observeSmall(ctx)
			s.cpu[kind] += cpuTime() - start
		case "bearing":
			if err = s.observeSmall(ctx); err != nil {
				break
			}
			start := cpuTime()
			_, err = s.v.TakeBearing(ctx, fmt.Sprintf("Reading %d: the scanner holds the lock until the flush.", s.n[kind]+i), who, nil)
			s.cpu[kind] += cpuTime() - start
		}
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	s.n[kind] += n
	return nil
}

func (s *cpuSide) close() error {
	return s.v.Close()
}

func benchCPU(ctx context.Context, cfg config, dir string, r *report) error {
	per := map[string][]float64{} // figure name -> per-rep µs per event
	var conc, concSync, concFree []float64
	concCPU := make([][]float64, 2) // durable, NoSync
	n := max(cfg.SingleOps/4, 8)
	chunk := max(cfg.Chunk/2, 4)
	for rep := range cfg.Reps {
		repDir := filepath.Join(dir, fmt.Sprintf("cpu-%d", rep))
		sides := make([]*cpuSide, 2) // [0] fsync on, [1] NoSync
		for i := range sides {
			s, err := newCPUSide(ctx, filepath.Join(repDir, fmt.Sprintf("home%d", i)), i == 1)
			if err != nil {
				return err
			}
			// Warm up: the first events of a handle open its log.
			if err := s.chunk(ctx, "note", 8); err != nil {
				return err
			}
			clear(s.n)
			clear(s.cpu)
			sides[i] = s
		}
		raw, err := newRawCPU(filepath.Join(repDir, "raw.dat"), n)
		if err != nil {
			return err
		}
		for k, from := 0, 0; from < n; k, from = k+1, from+chunk {
			m := min(chunk, n-from)
			for _, kind := range cpuKinds {
				for j := range sides {
					if err := sides[(j+k+rep)%2].chunk(ctx, kind, m); err != nil {
						raw.f.Close()
						return err
					}
				}
			}
			if err := raw.chunk(m); err != nil {
				raw.f.Close()
				return err
			}
		}
		raw.f.Close()
		per["cpu_us_per_raw_fdatasync"] = append(per["cpu_us_per_raw_fdatasync"], float64(raw.cpu.Microseconds())/float64(raw.n))
		for i, s := range sides {
			suffix := ""
			if i == 1 {
				suffix = "_nosync"
			}
			for _, kind := range cpuKinds {
				name := "cpu_us_per_" + kind + suffix
				per[name] = append(per[name], float64(s.cpu[kind].Microseconds())/float64(s.n[kind]))
			}
			if err := s.close(); err != nil {
				return err
			}
		}

		cpuPer := make([]float64, 2)
		ratio, synced, free, err := concurrentVsFree(ctx, cfg, repDir, rep, cpuPer)
		if err != nil {
			return err
		}
		concCPU[0], concCPU[1] = append(concCPU[0], cpuPer[0]), append(concCPU[1], cpuPer[1])
		conc, concSync, concFree = append(conc, ratio), append(concSync, synced), append(concFree, free)
		os.RemoveAll(repDir)
	}
	for _, suffix := range []string{"", "_nosync"} {
		for _, kind := range cpuKinds {
			name := "cpu_us_per_" + kind + suffix
			how := "fsync on"
			if suffix != "" {
				how = "Options.NoSync: no fsync"
			}
			r.put(name, median(per[name]), fmt.Sprintf("process CPU µs (user+system) per %s, one writer, %s; %s", kind, how, spread(per[name])))
		}
	}
	r.put("cpu_us_per_raw_fdatasync", median(per["cpu_us_per_raw_fdatasync"]), "process CPU µs per 144-byte overwrite + fdatasync of a preallocated file beside the homes, interleaved with them: what the kernel's fdatasync costs alone, a floor under the figures with fsync on; "+spread(per["cpu_us_per_raw_fdatasync"]))
	g := cfg.Goroutines
	r.put(fmt.Sprintf("helm_concurrent%d_fsyncfree_events_per_s", g), median(concFree), fmt.Sprintf("%d goroutines on one voyage, Options.NoSync; %s", g, spread(concFree)))
	r.put(fmt.Sprintf("helm_concurrent%d_synced_events_per_s", g), median(concSync), fmt.Sprintf("the same, fsync on, interleaved with it; %s", spread(concSync)))
	r.put(fmt.Sprintf("concurrent%d_vs_fsyncfree", g), median(conc), "median of per-rep ratios; "+spread(conc))
	r.put(fmt.Sprintf("cpu_us_per_event_concurrent%d", g), median(concCPU[0]), fmt.Sprintf("process CPU µs per operation over the durable side's chunks, %d goroutines on one voyage, fsync on; %s", g, spread(concCPU[0])))
	r.put(fmt.Sprintf("cpu_us_per_event_concurrent%d_nosync", g), median(concCPU[1]), fmt.Sprintf("the same, Options.NoSync; %s", spread(concCPU[1])))
	return nil
}

// concurrentVsFree runs cfg.Goroutines writers on one voyage of a durable
// home and of a NoSync one, interleaved in chunks, and returns the ratio
// of their rates and the rates; cpuPer gets the process CPU µs per event
// of each (durable, NoSync).
func concurrentVsFree(ctx context.Context, cfg config, repDir string, rep int, cpuPer []float64) (ratio, synced, free float64, err error) {
	ops := make([][]Op, cfg.Goroutines)
	for g := range ops {
		ops[g] = NewWorkload(uint64(5000*(rep+1)+g), fmt.Sprintf("g%d/", g)).Ops(cfg.ConcOps)
	}
	slice := func(from, to int) [][]Op {
		out := make([][]Op, len(ops))
		for g := range ops {
			out[g] = ops[g][from:to]
		}
		return out
	}
	var sides []*side
	cpu := make([]time.Duration, 2)
	for i, noSync := range []bool{false, true} {
		home, err := helm.Open(filepath.Join(repDir, fmt.Sprintf("conc%d", i)), &helm.Options{NoSync: noSync})
		if err != nil {
			return 0, 0, 0, err
		}
		v, err := home.Start(ctx, "bench concurrent cpu", helm.OpenWaters, who, nil)
		if err != nil {
			return 0, 0, 0, err
		}
		defer v.Close()
		sides = append(sides, &side{name: fmt.Sprintf("helm NoSync=%v", noSync), run: func(from, to int) (int, error) {
			start := cpuTime()
			defer func() { cpu[i] += cpuTime() - start }()
			return concurrently(slice(from, to), func(op Op) (bool, error) { return helmDo(ctx, v, op) })
		}})
	}
	order := slices.Clone(sides)
	if rep%2 == 1 {
		slices.Reverse(order)
	}
	if _, err := interleave(order, cfg.ConcOps, max(1, cfg.Chunk/4)); err != nil {
		return 0, 0, 0, err
	}
	synced = float64(sides[0].done) / sides[0].elapsed.Seconds()
	free = float64(sides[1].done) / sides[1].elapsed.Seconds()
	for i := range cpuPer {
		cpuPer[i] = float64(cpu[i].Microseconds()) / float64(sides[i].done)
	}
	return synced / free, synced, free, nil
}

// rawCPU measures the CPU time of what the disk alone asks for one
// durable event: a 144-byte overwrite (a note's record, framed) and an
// fdatasync, in a file written and synced beforehand.
type rawCPU struct {
	f   *os.File
	off int64
	n   int
	cpu time.Duration
}

func newRawCPU(path string, n int) (*rawCPU, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(make([]byte, 144*(n+1)), 0); err != nil {
		f.Close()
		return nil, err
	}
	if err := fdatasync(f); err != nil {
		f.Close()
		return nil, err
	}
	return &rawCPU{f: f}, nil
}

func (r *rawCPU) chunk(m int) error {
	rec := make([]byte, 144)
	for range m {
		rec[0]++
		start := cpuTime()
		if _, err := r.f.WriteAt(rec, r.off); err != nil {
			return err
		}
		if err := fdatasync(r.f); err != nil {
			return err
		}
		r.cpu += cpuTime() - start
		r.off += 144
		r.n++
	}
	return nil
}
