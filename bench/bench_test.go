package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// TestMain lets the test binary serve as the peak RSS helper (peakRSS)
// when the tiny run starts it again.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == peakRSSArg {
		os.Exit(runPeakRSS(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func TestWorkload(t *testing.T) {
	w := NewWorkload(1, "")
	ops := w.Ops(4000)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	var observes, repeats, bearings, raw, packed int
	paths := map[string]bool{}
	for i, op := range ops {
		if (i+1)%(ObservesPerBearing+1) == 0 {
			if !op.Bearing || op.Reading == "" {
				t.Fatalf("op %d: want a bearing with a reading, got %+v", i, op)
			}
			bearings++
			continue
		}
		if op.Bearing {
			t.Fatalf("op %d: unexpected bearing", i)
		}
		observes++
		data, err := sighting.Marshal(op.Sighting)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != PayloadSize {
			t.Fatalf("op %d: sighting JSON is %d bytes, want %d", i, len(data), PayloadSize)
		}
		if _, err := marks.Marshal(op.Mark); err != nil {
			t.Fatal(err)
		}
		if op.Mark.Path != op.Sighting.Path {
			t.Fatalf("op %d: mark %q, sighting %q", i, op.Mark.Path, op.Sighting.Path)
		}
		paths[op.Mark.Key()] = true
		if op.Repeat {
			repeats++
			continue
		}
		raw += len(data)
		packed += len(enc.EncodeAll(data, nil))
	}
	if f := float64(repeats) / float64(observes); f < 0.29 || f > 0.31 {
		t.Errorf("%d of %d observes repeat (%.3f), want 30%%", repeats, observes, f)
	}
	if len(paths) != Paths {
		t.Errorf("%d distinct mark keys, want %d", len(paths), Paths)
	}
	if ratio := float64(raw) / float64(packed); ratio < 1.8 || ratio > 10 {
		t.Errorf("zstd ratio %.2f: not like source code", ratio)
	}
	// Deterministic: the same seed gives the same operations.
	again := NewWorkload(1, "").Ops(40)
	for i := range again {
		if again[i].Bearing != ops[i].Bearing || (!again[i].Bearing && again[i].Sighting.Content != ops[i].Sighting.Content) {
			t.Fatalf("op %d differs between two runs with one seed", i)
		}
	}
	big := bigSightings(1, 1<<16)
	if a, b := big(0), big(1); a.Content == b.Content || len(a.Content) < 1<<16 {
		t.Error("big sightings are not distinct or too small")
	}
}

func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("writes with fdatasync")
	}
	cfg := config{Reps: 1, SingleOps: 40, Goroutines: 16, ConcOps: 8, RawOps: 20, Chunk: 20,
		ReplayEvents: 2000, OpenReps: 2, BigCount: 6, BigSize: 1 << 16, ListVoyages: 40, InlineCount: 30, MillionEvents: 5000, LargeSighting: 6 << 20,
		SearchVoyages: 2000, SearchBytes: 4 << 20, SearchHomeVoyages: 1000, SearchHomeBytes: 1 << 20, SearchReps: 4}
	var out bytes.Buffer
	run := map[string]bool{}
	for _, s := range sections {
		run[s] = true
	}
	if err := runBench(context.Background(), cfg, t.TempDir(), run, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("line %q is not name: value", line)
		}
		got[name], _, _ = strings.Cut(value, " ")
	}
	for _, name := range []string{
		"raw_fdatasync_per_s", "sqlite_events_per_s", "helm_events_per_s", "helm_vs_sqlite", "helm_vs_raw",
		"sqlite_concurrent16_events_per_s", "helm_concurrent16_events_per_s", "concurrent16_vs_sqlite",
		"replay_events_per_s", "open_ms_100k_events", "open_cpu_ms_100k_events", "open_extra_ms_per_gb_sightings",
		"list_40_voyages_ms", "list_40_voyages_cold_ms", "bytes_on_disk_vs_sqlite",
		"list_40_voyages_cpu_ms",
		"group_size_16", "helm_vs_raw_overwrite", "cli_observe_context_ms_2k",
		"open_ms_1m_events", "open_rss_mb_1m_events",
		"sighting_1gb_s", "zstd_1gb_s", "sighting_1gb_s_vs_zstd", "sighting_1gb_peak_rss_mb",
		"search_index_build_mb_per_s_2k_voyages_4mb", "search_index_1word_rare_p50_ms_2k_voyages_4mb",
		"search_index_3word_common_p50_ms_2k_voyages_4mb", "search_reindex_all_mb_per_s_1k_voyages_1mb",
		"search_find_1word_rare_p50_ms_1k_voyages_1mb", "search_index_at_complete_ms_1k_voyages_1mb",
		"cpu_us_per_note", "cpu_us_per_observation", "cpu_us_per_bearing",
		"cpu_us_per_note_nosync", "cpu_us_per_observation_nosync", "cpu_us_per_bearing_nosync",
		"helm_concurrent16_fsyncfree_events_per_s", "helm_concurrent16_synced_events_per_s", "concurrent16_vs_fsyncfree",
		"cpu_us_per_event_concurrent16", "cpu_us_per_event_concurrent16_nosync", "cpu_us_per_raw_fdatasync",
		"cli_version_vs_hello", "cli_note_vs_hello",
	} {
		v, ok := got[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		if v == "" || v == "NaN" || strings.Contains(v, "Inf") {
			t.Errorf("%s: %q", name, v)
		}
	}
	if !strings.Contains(out.String(), "helm_vs_sqlite: ") || !strings.Contains(out.String(), "(goal >= 1.8") {
		t.Error("helm_vs_sqlite is printed without its goal")
	}
}
