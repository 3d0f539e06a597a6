// Command bench compares helm's storage with the SQLite design of ADR 004
// (seed 001) on this machine, and measures replay, open and list costs.
//
//	cd bench && go run . -quick
//
// It prints one "name: value" line per figure; a goal, where there is one,
// follows the value in parentheses. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
)

// config sizes a run.
type config struct {
	Reps         int // repetitions of the write benchmarks
	SingleOps    int // operations per single-writer repetition
	Goroutines   int // writers sharing one voyage in the concurrent case
	ConcOps      int // operations per goroutine per concurrent repetition
	RawOps       int // appends + fdatasync per repetition
	ReplayEvents int // events in the replayed voyage
	OpenReps     int // timed opens (replay, GB) and lists
	BigCount     int // big sightings in the GB voyage
	BigSize      int // bytes of each big sighting's content
	ListVoyages  int // voyages in the listed home
	Chunk        int // operations per interleaved chunk of the write benchmarks
	InlineCount  int // 2 KiB sightings in the voyage that measures blob records at open
	// MillionEvents is the size of the voyage the full run opens (0: the
	// section is skipped).
	MillionEvents int
	// LargeSighting is the size of the file the full run observes (0: the
	// section is skipped).
	LargeSighting int
	// SearchVoyages and SearchBytes size the synthetic content index;
	// SearchHomeVoyages and SearchHomeBytes the home searched end to end;
	// SearchReps the timed queries of each kind.
	SearchVoyages     int
	SearchBytes       int64
	SearchHomeVoyages int
	SearchHomeBytes   int64
	SearchReps        int
}

var (
	quickConfig = config{Reps: 5, SingleOps: 1200, Goroutines: 16, ConcOps: 80, RawOps: 600, Chunk: 40,
		ReplayEvents: 100_000, OpenReps: 5, BigCount: 256, BigSize: 1 << 20, ListVoyages: 10_000, InlineCount: 32_768,
		SearchVoyages: 10_000, SearchBytes: 200 << 20, SearchHomeVoyages: 2_000, SearchHomeBytes: 16 << 20, SearchReps: 100}
	fullConfig = config{Reps: 9, SingleOps: 4000, Goroutines: 16, ConcOps: 240, RawOps: 2000, Chunk: 40,
		ReplayEvents: 100_000, OpenReps: 9, BigCount: 1000, BigSize: 1 << 20, ListVoyages: 100_000, InlineCount: 65_536, MillionEvents: 1_000_000, LargeSighting: 1 << 30,
		SearchVoyages: 20_000, SearchBytes: 1 << 30, SearchHomeVoyages: 10_000, SearchHomeBytes: 100 << 20, SearchReps: 200}
	// searchBig is -search-big: the scale, 100k voyages and 10 GB
	// of sightings (the index part; the home part 100k voyages, 1 GB).
	searchBig = struct {
		Voyages, HomeVoyages int
		Bytes, HomeBytes     int64
	}{100_000, 100_000, 10 << 30, 1 << 30}
)

// goals are the targets of issues 7 and 14, printed next to their figures.
var goals = map[string]string{
	"helm_vs_sqlite":                 ">= 1.8",
	"helm_vs_raw":                    ">= 0.85",
	"helm_vs_raw_overwrite":          ">= 0.75",
	"concurrent16_vs_sqlite":         ">= 20",
	"cpu_us_per_note_nosync":         "<= 25",
	"concurrent16_vs_fsyncfree":      ">= 0.8",
	"group_size_16":                  ">= 12",
	"replay_events_per_s":            ">= 2000000",
	"cli_observe_context_ms_100k":    "< 15",
	"list_100k_voyages_ms":           "< 200",
	"open_ms_1m_events":              "< 50",
	"open_rss_mb_1m_events":          "< 64",
	"sighting_1gb_peak_rss_mb":       "<= 256",
	"sighting_1gb_s_vs_zstd":         "<= 1.5",
	"open_ms_100k_events":            "< 150",
	"open_extra_ms_per_gb_sightings": "< 10",
	"list_10k_voyages_ms":            "< 30",
	"bytes_on_disk_vs_sqlite":        "<= 1.0",
	"cli_version_vs_hello":           "<= 2.5",
	"cli_note_vs_hello":              "<= 4",
}

// sections a run can be limited to with -only.
var sections = []string{"single", "concurrent", "cpu", "replay", "open", "million", "large", "list", "search", "cli"}

func main() {
	if len(os.Args) > 2 && os.Args[1] == peakRSSArg {
		os.Exit(runPeakRSS(os.Args[2:]))
	}
	quick := flag.Bool("quick", false, "a shorter run (a few minutes)")
	dir := flag.String("dir", "", "directory for the data (default: a new temporary directory, removed afterwards)")
	keep := flag.Bool("keep", false, "keep the data directory")
	only := flag.String("only", "", "comma-separated sections to run: "+strings.Join(sections, ","))
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	big := flag.Bool("search-big", false, "search at the issue's scale: 100k voyages, 10 GB of sightings (long; with -only search)")
	searchIndex := flag.String("search-index", "", "`VOYAGES:MB` of the synthetic content index (overrides the run's)")
	searchHome := flag.String("search-home", "", "`VOYAGES:MB` of the home searched end to end (0:0 skips it)")
	listVoyages := flag.Int("list-voyages", 0, "voyages in the listed home (overrides the run's: -quick -only list -list-voyages 100000 is the full run's list)")
	flag.Parse()

	cfg := fullConfig
	if *quick {
		cfg = quickConfig
	}
	if *listVoyages > 0 {
		cfg.ListVoyages = *listVoyages
	}
	if *big {
		cfg.SearchVoyages, cfg.SearchBytes = searchBig.Voyages, searchBig.Bytes
		cfg.SearchHomeVoyages, cfg.SearchHomeBytes = searchBig.HomeVoyages, searchBig.HomeBytes
	}
	for _, f := range []struct {
		val     string
		voyages *int
		bytes   *int64
	}{{*searchIndex, &cfg.SearchVoyages, &cfg.SearchBytes}, {*searchHome, &cfg.SearchHomeVoyages, &cfg.SearchHomeBytes}} {
		if f.val == "" {
			continue
		}
		if _, err := fmt.Sscanf(f.val, "%d:%d", f.voyages, f.bytes); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %q is not VOYAGES:MB\n", f.val)
			os.Exit(2)
		}
		*f.bytes <<= 20
	}
	if err := mainErr(cfg, *dir, *keep, *only, *cpuprofile, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr(cfg config, dir string, keep bool, only, cpuprofile string, out io.Writer) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "helm-storage-bench-")
		if err != nil {
			return err
		}
		dir = d
		if !keep {
			defer os.RemoveAll(d)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	run := map[string]bool{}
	if only == "" {
		for _, s := range sections {
			run[s] = true
		}
	} else {
		for _, s := range strings.Split(only, ",") {
			s = strings.TrimSpace(s)
			if !slices.Contains(sections, s) {
				return fmt.Errorf("-only: unknown section %q (known: %s)", s, strings.Join(sections, ","))
			}
			run[s] = true
		}
	}
	return runBench(context.Background(), cfg, dir, run, out)
}
