package marks_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// benchDir returns a fixture directory under os.TempDir, built once by
// build and reused by later runs: generating 100k files takes longer than
// walking them. A ".complete" file marks a finished build.
func benchDir(b *testing.B, name string, build func(dir string) error) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "helm-bench-"+name)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	require.NoError(b, os.RemoveAll(dir))
	require.NoError(b, os.MkdirAll(dir, 0o755))
	require.NoError(b, build(dir))
	require.NoError(b, os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644))
	return dir
}

// heapPeak samples live heap bytes every few milliseconds until stopped,
// and reports the highest value seen.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkDirectoryTree100k walks a tree of 100,000 files in 1,100
// directories (with a .gitignore excluding a tenth of them) and reports
// entries listed per second, the peak live heap during the walk, and the
// sighting's JSON size.
func BenchmarkDirectoryTree100k(b *testing.B) {
	const files = 100_000
	dir := benchDir(b, fmt.Sprintf("tree-%d", files), func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644); err != nil {
			return err
		}
		n := 0
		for i := 0; n < files; i++ {
			for j := 0; j < 10 && n < files; j++ {
				sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", i), fmt.Sprintf("mod%02d", j))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					return err
				}
				for k := 0; k < 100 && n < files; k, n = k+1, n+1 {
					ext := ".go"
					if k%10 == 0 {
						ext = ".tmp"
					}
					if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d%s", k, ext)), []byte("package x\n"), 0o644); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	m, err := marks.NewDirectoryTree(dir, nil)
	require.NoError(b, err)

	runtime.GC()
	stop := heapPeak()
	b.ReportAllocs()
	b.ResetTimer()
	var last sighting.Sighting
	entries := 0
	for b.Loop() {
		last = nil
		s, err := m.Observe(context.Background(), nil)
		require.NoError(b, err)
		last = s
		entries = 0
		for _, l := range s.(*sighting.DirectoryTree).Listings {
			entries += len(l.Entries)
		}
	}
	b.StopTimer()
	peak := stop()
	b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(entries), "entries")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	data, err := sighting.Marshal(last)
	require.NoError(b, err)
	b.ReportMetric(float64(len(data))/(1<<20), "json-MiB")
}

// BenchmarkFileContents100MB observes one 100 MB file, as text and as
// binary, reporting throughput and the peak live heap. Binary content is
// counted, not kept, so its heap stays at one read buffer.
func BenchmarkFileContents100MB(b *testing.B) {
	const size = 100 << 20
	dir := benchDir(b, "file-100MB", func(dir string) error {
		line := []byte("helm keeps the evidence behind every bearing — zstd, BLAKE3.\n")
		text := bytes.Repeat(line, size/len(line)+1)[:size]
		text[size-1] = '\n'
		if err := os.WriteFile(filepath.Join(dir, "text.txt"), text, 0o644); err != nil {
			return err
		}
		bin := bytes.Repeat([]byte{0x00, 0xff, 0x10, 0x80}, size/4)
		return os.WriteFile(filepath.Join(dir, "binary.bin"), bin, 0o644)
	})
	for _, name := range []string{"text.txt", "binary.bin"} {
		b.Run(name, func(b *testing.B) {
			m, err := marks.NewFileContents(filepath.Join(dir, name))
			require.NoError(b, err)
			runtime.GC()
			stop := heapPeak()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				s, err := m.Observe(context.Background(), nil)
				require.NoError(b, err)
				c := s.(*sighting.Files).Contents[0].Content
				require.Equal(b, uint64(size), c.SizeBytes, "%s", c)
			}
			b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
		})
	}
}
