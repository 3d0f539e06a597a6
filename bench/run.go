package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/sighting"
)

// report prints figures as "name: value" lines, with the goal (if any)
// after the value.
type report struct {
	out io.Writer
	err error
}

func (r *report) put(name string, value float64, note string) {
	v := formatValue(value)
	if g, ok := goals[name]; ok {
		if note != "" {
			note = "goal " + g + "; " + note
		} else {
			note = "goal " + g
		}
	}
	if note != "" {
		v += " (" + note + ")"
	}
	if _, err := fmt.Fprintf(r.out, "%s: %s\n", name, v); err != nil && r.err == nil {
		r.err = err
	}
}

func formatValue(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1 || v <= -0.1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func spread(xs []float64) string {
	if len(xs) == 0 {
		return ""
	}
	return fmt.Sprintf("median of %d, min %s, max %s", len(xs), formatValue(slices.Min(xs)), formatValue(slices.Max(xs)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func runBench(ctx context.Context, cfg config, dir string, run map[string]bool, out io.Writer) error {
	r := &report{out: out}
	fmt.Fprintf(out, "# helm vs SQLite (ADR 004) in %s; %+v\n", dir, cfg)
	if run["single"] {
		if err := benchSingle(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("single writer: %w", err)
		}
	}
	if run["concurrent"] {
		if err := benchConcurrent(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("concurrent writers: %w", err)
		}
	}
	if run["cpu"] {
		if err := benchCPU(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("CPU per event: %w", err)
		}
	}
	if run["replay"] {
		if err := benchReplay(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	if run["open"] {
		if err := benchOpenGB(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("open with a GB of sightings: %w", err)
		}
	}
	if run["million"] {
		if err := benchMillion(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("a million events: %w", err)
		}
	}
	if run["large"] {
		if err := benchLarge(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("a large sighting: %w", err)
		}
	}
	if run["list"] {
		if err := benchList(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("list: %w", err)
		}
	}
	if run["search"] {
		if err := benchSearch(ctx, cfg, dir, r); err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	if run["cli"] {
		if err := benchCLIStart(ctx, dir, r); err != nil {
			return fmt.Errorf("the CLI's start: %w", err)
		}
	}
	return r.err
}

// buildVoyage fills a new voyage in home with goroutines writers until it
// holds at least events events. It is setup, not measured: the home may be
// opened with NoSync; the bytes are the same.
func buildVoyage(ctx context.Context, home *helm.Home, events uint64, goroutines int) (string, uint64, error) {
	v, err := home.Start(ctx, "bench replay", helm.OpenWaters, who, nil)
	if err != nil {
		return "", 0, err
	}
	defer v.Close()
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := NewWorkload(uint64(7000+g), fmt.Sprintf("g%d/", g))
			for v.Info().Seq < events {
				if _, err := helmDo(ctx, v, w.Next()); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return "", 0, err
	}
	return v.ID(), v.Info().Seq, nil
}

// timeOpen opens (replays) the voyage id and closes it, and returns how
// long that took.
func timeOpen(ctx context.Context, home *helm.Home, id string) (time.Duration, uint64, error) {
	start := time.Now()
	v, err := home.Voyage(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	seq := v.Info().Seq
	if err := v.Close(); err != nil {
		return 0, 0, err
	}
	return time.Since(start), seq, nil
}

func benchReplay(ctx context.Context, cfg config, dir string, r *report) error {
	homeDir := filepath.Join(dir, "replay")
	defer os.RemoveAll(homeDir)
	setup, err := helm.Open(homeDir, &helm.Options{NoSync: true})
	if err != nil {
		return err
	}
	how := "log records (events and the blob records of small sightings), recorded through the API"
	id, events, err := buildVoyage(ctx, setup, uint64(cfg.ReplayEvents), cfg.Goroutines)
	if err != nil {
		return err
	}
	home, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	// Opens with the snapshot the last writer left (as a voyage opens),
	// then replays without it (every event folded), interleaved.
	// (A voyage shorter than the snapshot interval has none.)
	snapshot := filepath.Join(homeDir, "voyages", id, "snapshot")
	snap, err := os.ReadFile(snapshot)
	variants := []bool{false, true}
	if errors.Is(err, fs.ErrNotExist) {
		variants = variants[:1]
	} else if err != nil {
		return err
	}
	if _, _, err := timeOpen(ctx, home, id); err != nil { // warm up
		return err
	}
	var opens, snapOpens []float64
	for range cfg.OpenReps {
		for _, withSnapshot := range variants {
			if withSnapshot {
				err = os.WriteFile(snapshot, snap, 0o600)
			} else if err = os.Remove(snapshot); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			if err != nil {
				return err
			}
			d, seq, err := timeOpen(ctx, home, id)
			if err != nil {
				return err
			}
			if seq != events {
				return fmt.Errorf("open gave %d events, want %d", seq, events)
			}
			if withSnapshot {
				snapOpens = append(snapOpens, ms(d))
			} else {
				opens = append(opens, ms(d))
			}
		}
	}
	if err := replayCPU(ctx, home, id, snapshot, events, cfg.OpenReps, r); err != nil {
		return err
	}
	// The cost of writing to a long voyage: observes and bearings on it,
	// durable as shipped.
	v, err := home.Voyage(ctx, id)
	if err != nil {
		return err
	}
	var obsLat, bearLat []float64
	w := NewWorkload(99, "late/")
	for range 3 {
		for {
			op := w.Next()
			t := time.Now()
			if _, err := helmDo(ctx, v, op); err != nil {
				v.Close()
				return err
			}
			if op.Bearing {
				bearLat = append(bearLat, ms(time.Since(t)))
				break
			}
			obsLat = append(obsLat, ms(time.Since(t)))
		}
	}
	if err := v.Close(); err != nil {
		return err
	}
	cli, err := timeCLIObserve(ctx, homeDir, id, cfg.OpenReps)
	if err != nil {
		return fmt.Errorf("the CLI on a long voyage: %w", err)
	}

	m := median(opens)
	r.put("replay_events_per_s", float64(events)/(m/1000), fmt.Sprintf("no snapshot: %d events, %s", events, how))
	r.put("open_ms_100k_events", m*100_000/float64(events), fmt.Sprintf("Voyage + Close, no snapshot, warm cache, scaled from %d events; %s", events, spread(opens)))
	if len(snapOpens) > 0 {
		r.put("open_ms_100k_events_snapshot", median(snapOpens)*100_000/float64(events), fmt.Sprintf("the same from the snapshot at its last event; %s", spread(snapOpens)))
	}
	r.put("helm_observe_ms_long_voyage", median(obsLat), fmt.Sprintf("Record on the %d-event voyage; %s", events, spread(obsLat)))
	r.put("helm_bearing_ms_long_voyage", median(bearLat), fmt.Sprintf("TakeBearing on the %d-event voyage; %s", events, spread(bearLat)))
	r.put(fmt.Sprintf("cli_observe_context_ms_%dk", events/1000), median(cli), fmt.Sprintf("the built helm observe context, end to end, on the %d-event voyage; %s", events, spread(cli)))
	return nil
}

// buildCLI builds the helm command into dir and returns its path. It is
// built in helm's own module (the bench's go.sum holds only what the
// library needs).
func buildCLI(ctx context.Context, dir string) (string, error) {
	bin, err := filepath.Abs(filepath.Join(dir, "helm-cli"))
	if err != nil {
		return "", err
	}
	where, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/helmlog/helm").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/helmlog/helm: %w", err)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/helm")
	build.Dir = strings.TrimSpace(string(where))
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// benchMillion opens a voyage of cfg.MillionEvents events (the full run
// only): in this process, from the snapshot its writer left, and in the
// built CLI (voyage show), whose peak RSS is the figure.
func benchMillion(ctx context.Context, cfg config, dir string, r *report) error {
	if cfg.MillionEvents == 0 {
		return nil
	}
	homeDir := filepath.Join(dir, "million")
	defer os.RemoveAll(homeDir)
	setup, err := helm.Open(homeDir, &helm.Options{NoSync: true})
	if err != nil {
		return err
	}
	id, events, err := buildVoyage(ctx, setup, uint64(cfg.MillionEvents), cfg.Goroutines)
	if err != nil {
		return err
	}
	home, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	var opens []float64
	for range cfg.OpenReps + 1 {
		d, _, err := timeOpen(ctx, home, id)
		if err != nil {
			return err
		}
		opens = append(opens, ms(d))
	}
	opens = opens[1:] // the first warms the page cache
	bin, err := buildCLI(ctx, dir)
	if err != nil {
		return err
	}
	defer os.Remove(bin)
	var rss []float64
	for range cfg.OpenReps {
		mb, err := peakRSS(ctx, bin, "--home", homeDir, "--voyage", id, "voyage", "show", "--json")
		if err != nil {
			return err
		}
		rss = append(rss, mb)
	}
	scale := 1_000_000 / float64(events)
	r.put("open_ms_1m_events", median(opens)*scale, fmt.Sprintf("Voyage + Close from the snapshot, %d events, scaled; %s", events, spread(opens)))
	if len(rss) > 0 {
		r.put("open_rss_mb_1m_events", median(rss), fmt.Sprintf("peak RSS of helm voyage show --json on it; %s", spread(rss)))
	}
	return nil
}

// peakRSSArg, as the first argument, makes the bench run the command the
// rest names, its output discarded, and print the command's peak RSS in
// KiB (runPeakRSS).
const peakRSSArg = "-peak-rss-of"

// peakRSS runs name with args and returns its peak RSS in MiB. On Linux a
// child's ru_maxrss also counts the memory of the process it was started
// from, up to its exec: started from the bench, which holds a
// million-event voyage's setup in its heap, every command would peak at
// the bench's own RSS. So the command is started from a small helper,
// this program run again with peakRSSArg, which reports the command's.
func peakRSS(ctx context.Context, name string, args ...string) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{peakRSSArg, name}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s %s: %v\n%.500s", name, strings.Join(args, " "), err, stderr.String())
	}
	var kib float64
	if _, err := fmt.Sscan(string(out), &kib); err != nil {
		return 0, fmt.Errorf("%s: the peak RSS helper printed %q", name, out)
	}
	return kib / 1024, nil
}

// runPeakRSS runs the command args names, its output discarded, and
// prints its peak RSS in KiB; it returns the exit status.
func runPeakRSS(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no resource usage for", args[0])
		return 1
	}
	fmt.Println(ru.Maxrss) // KiB on Linux
	return 0
}

// timeCLIObserve builds the helm command and times `helm observe context`
// on voyage id of home, reps times: a process started, the voyage opened,
// one change recorded durably, the process gone.
func timeCLIObserve(ctx context.Context, home, id string, reps int) ([]float64, error) {
	bin, err := buildCLI(ctx, filepath.Dir(home))
	if err != nil {
		return nil, err
	}
	defer os.Remove(bin)
	var out []float64
	for i := range reps + 1 {
		cmd := exec.CommandContext(ctx, bin, "--home", home, "--voyage", id, "--as", "bench", "--role", "coder", "--method", "bench",
			"observe", "context", fmt.Sprintf("the CLI's observation %d", i))
		start := time.Now()
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", cmd, err, msg)
		}
		if i > 0 { // the first warms the page cache for the binary
			out = append(out, ms(time.Since(start)))
		}
	}
	return out, nil
}

// buildSightingVoyage records count observations (three to a bearing), the
// i-th with sighting(i), in a new voyage of home; it returns the voyage id
// and the bytes of sighting JSON recorded.
func buildSightingVoyage(ctx context.Context, home *helm.Home, count int, sightingAt func(int) *benchSighting) (string, int64, error) {
	v, err := home.Start(ctx, "bench open", helm.OpenWaters, who, nil)
	if err != nil {
		return "", 0, err
	}
	defer v.Close()
	var total int64
	for i := range count {
		s := sightingAt(i)
		data, err := sighting.Marshal(s)
		if err != nil {
			return "", 0, err
		}
		total += int64(len(data))
		if _, err := helmDo(ctx, v, Op{Mark: &benchMark{Path: s.Path}, Sighting: s}); err != nil {
			return "", 0, err
		}
		if i%ObservesPerBearing == ObservesPerBearing-1 {
			if _, err := helmDo(ctx, v, Op{Bearing: true, Reading: fmt.Sprintf("reading %d", i)}); err != nil {
				return "", 0, err
			}
		}
	}
	return v.ID(), total, nil
}

func benchOpenGB(ctx context.Context, cfg config, dir string, r *report) error {
	homeDir := filepath.Join(dir, "open-gb")
	defer os.RemoveAll(homeDir)
	setup, err := helm.Open(homeDir, &helm.Options{NoSync: true})
	if err != nil {
		return err
	}
	bigID, bigBytes, err := buildSightingVoyage(ctx, setup, cfg.BigCount, bigSightings(42, cfg.BigSize))
	if err != nil {
		return err
	}
	smallID, _, err := buildSightingVoyage(ctx, setup, cfg.BigCount, func(i int) *benchSighting {
		return &benchSighting{Path: fmt.Sprintf("small/%s/%d.go", nouns[i%len(nouns)], i), Content: fmt.Sprintf("// small sighting %d\n", i)}
	})
	if err != nil {
		return err
	}
	home, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	var big, small []float64
	var bigEvents uint64
	for i := range cfg.OpenReps + 1 {
		db, bs, err := timeOpen(ctx, home, bigID)
		if err != nil {
			return err
		}
		ds, _, err := timeOpen(ctx, home, smallID)
		if err != nil {
			return err
		}
		if i == 0 {
			continue // warm up
		}
		big, small = append(big, ms(db)), append(small, ms(ds))
		bigEvents = bs
	}
	// The same events: the record counts differ only by blob records
	// (tiny sightings are blobs in the log; big ones go to the pack).
	if err := sameStory(ctx, home, bigID, smallID); err != nil {
		return err
	}
	gb := float64(bigBytes) / 1e9
	r.put("open_gb_voyage_ms", median(big), fmt.Sprintf("%d sightings, %.2f GB of sighting JSON in the pack file, %d records; %s", cfg.BigCount, gb, bigEvents, spread(big)))
	r.put("open_small_voyage_ms", median(small), fmt.Sprintf("same events, tiny sightings (blob records in the log); %s", spread(small)))
	r.put("open_extra_ms_per_gb_sightings", (median(big)-median(small))/gb, fmt.Sprintf("scaled from %.2f GB", gb))

	// Small sightings are blob records in the event log: opening reads
	// past them (checksums, no decoding). Measure that cost too, on 2 KiB
	// code-like sightings against the same number of tiny ones.
	const smallSize = 2 << 10
	count := cfg.InlineCount
	inlineID, inlineBytes, err := buildSightingVoyage(ctx, setup, count, bigSightings(43, smallSize))
	if err != nil {
		return err
	}
	tinyID, _, err := buildSightingVoyage(ctx, setup, count, func(i int) *benchSighting {
		return &benchSighting{Path: fmt.Sprintf("tiny/%d.go", i), Content: fmt.Sprintf("// tiny %d\n", i)}
	})
	if err != nil {
		return err
	}
	var inline, tiny []float64
	for i := range cfg.OpenReps + 1 {
		di, _, err := timeOpen(ctx, home, inlineID)
		if err != nil {
			return err
		}
		dt, _, err := timeOpen(ctx, home, tinyID)
		if err != nil {
			return err
		}
		if i > 0 {
			inline, tiny = append(inline, ms(di)), append(tiny, ms(dt))
		}
	}
	igb := float64(inlineBytes) / 1e9
	r.put("open_extra_ms_per_gb_small_sightings", (median(inline)-median(tiny))/igb,
		fmt.Sprintf("%d sightings of 2 KiB in the log, %.3f GB, open %.1f ms vs %.1f ms with tiny ones; scaled", count, igb, median(inline), median(tiny)))
	return nil
}

// sameStory checks that two voyages hold the same number of logbook
// entries and artifacts.
func sameStory(ctx context.Context, home *helm.Home, a, b string) error {
	count := func(id string) (int, int, error) {
		v, err := home.Voyage(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		defer v.Close()
		entries, artifacts := 0, 0
		for _, err := range v.Entries(ctx, nil) {
			if err != nil {
				return 0, 0, err
			}
			entries++
		}
		for _, err := range v.Artifacts(ctx, nil) {
			if err != nil {
				return 0, 0, err
			}
			artifacts++
		}
		return entries, artifacts, nil
	}
	ea, aa, err := count(a)
	if err != nil {
		return err
	}
	eb, ab, err := count(b)
	if err != nil {
		return err
	}
	if ea != eb || aa != ab {
		return fmt.Errorf("the voyages differ: %d entries and %d artifacts, against %d and %d", ea, aa, eb, ab)
	}
	return nil
}

func benchList(ctx context.Context, cfg config, dir string, r *report) error {
	homeDir := filepath.Join(dir, "list")
	defer os.RemoveAll(homeDir)
	setup, err := helm.Open(homeDir, &helm.Options{NoSync: true})
	if err != nil {
		return err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range cfg.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(cfg.ListVoyages) {
				v, err := setup.Start(ctx, "bench list", helm.OpenWaters, who, nil)
				if err == nil {
					err = v.Close()
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	home, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	timeList := func() (float64, error) {
		start := time.Now()
		got, err := home.List(ctx, nil)
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if len(got) != cfg.ListVoyages {
			return 0, fmt.Errorf("listed %d voyages, want %d", len(got), cfg.ListVoyages)
		}
		return ms(d), nil
	}
	cold, err := timeList()
	if err != nil {
		return err
	}
	var warm, cpu []float64
	for range cfg.OpenReps {
		cpu0 := cpuTime()
		d, err := timeList()
		if err != nil {
			return err
		}
		warm = append(warm, d)
		cpu = append(cpu, ms(cpuTime()-cpu0))
	}
	name := fmt.Sprintf("list_%d_voyages", cfg.ListVoyages)
	if cfg.ListVoyages%1000 == 0 {
		name = fmt.Sprintf("list_%dk_voyages", cfg.ListVoyages/1000)
	}
	r.put(name+"_ms", median(warm), fmt.Sprintf("warm; %s", spread(warm)))
	r.put(name+"_cold_ms", cold, "first List after the voyages were made")
	r.put(name+"_cpu_ms", median(cpu), "process CPU (user+system) per warm List, all cores: on a shared machine the wall time waits for CPU")
	return benchListStamps(cfg, homeDir, r)
}
