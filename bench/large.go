package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/helmlog/helm"
)

// benchLarge observes one file of cfg.LargeSighting bytes of source with
// the built CLI (helm observe file-contents), in a new voyage each time:
// its wall time against zstd alone compressing the same bytes in this
// process (at helm's level, with as many threads), interleaved, and the
// CLI's peak RSS. The full run's file is 1 GB; the keys are named for it.
func benchLarge(ctx context.Context, cfg config, dir string, r *report) error {
	if cfg.LargeSighting == 0 {
		return nil
	}
	work := filepath.Join(dir, "large")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	file := filepath.Join(work, "large.go")
	if err := writeLargeSource(file, cfg.LargeSighting); err != nil {
		return err
	}
	bin, err := buildCLI(ctx, work)
	if err != nil {
		return err
	}
	home, err := helm.Open(filepath.Join(work, "home"), nil)
	if err != nil {
		return err
	}
	reps := max(1, min(cfg.OpenReps, 3))
	var helmS, zstdS, ratios, rss []float64
	for i := range reps + 1 { // the first warms the page cache
		z, err := timeZstd(file)
		if err != nil {
			return err
		}
		v, err := home.Start(ctx, fmt.Sprintf("bench large %d", i), helm.OpenWaters, who, nil)
		if err != nil {
			return err
		}
		id := v.ID()
		v.Close()
		// Timed through the peak RSS helper, whose start is a few
		// milliseconds of the seconds measured.
		start := time.Now()
		mb, err := peakRSS(ctx, bin, "--home", filepath.Join(work, "home"), "--voyage", id, "--as", "bench", "--role", "coder", "--method", "bench",
			"observe", "file-contents", file)
		if err != nil {
			return err
		}
		h := time.Since(start)
		if i == 0 {
			continue
		}
		helmS, zstdS, ratios = append(helmS, h.Seconds()), append(zstdS, z.Seconds()), append(ratios, h.Seconds()/z.Seconds())
		rss = append(rss, mb)
	}
	mb := float64(cfg.LargeSighting) / (1 << 20)
	r.put("sighting_1gb_s", median(helmS), fmt.Sprintf("helm observe file-contents of %.0f MB of source, end to end; %s", mb, spread(helmS)))
	r.put("zstd_1gb_s", median(zstdS), fmt.Sprintf("zstd alone on the same bytes; %s", spread(zstdS)))
	r.put("sighting_1gb_s_vs_zstd", median(ratios), fmt.Sprintf("interleaved, ratio per repetition; %s", spread(ratios)))
	if len(rss) > 0 {
		r.put("sighting_1gb_peak_rss_mb", median(rss), fmt.Sprintf("peak RSS of that helm process; %s", spread(rss)))
	}
	return nil
}

// writeLargeSource writes size bytes of generated Go source to path, a
// line at a time.
func writeLargeSource(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(14, 1))
	var b strings.Builder
	for n := 0; n < size; {
		b.Reset()
		codeLine(rng, &b)
		line := b.String()[:min(b.Len(), size-n)]
		w.WriteString(line)
		n += len(line)
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// timeZstd compresses the file with zstd alone, streaming, at the level
// and concurrency helm uses for large artifacts.
func timeZstd(path string) (time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	z, err := zstd.NewWriter(io.Discard, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return 0, err
	}
	if _, err := io.Copy(z, f); err != nil {
		return 0, err
	}
	if err := z.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
