package segment

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkRawFdatasync256 is the baseline for BenchmarkAppendDurable256:
// append 256 B to a plain file in the same kind of directory and fdatasync.
func BenchmarkRawFdatasync256(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "raw"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
}

// BenchmarkAppendDurable256 is one appender, one 256 B record per durable Commit.
func BenchmarkAppendDurable256(b *testing.B) {
	l, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := make([]byte, 256)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppendConcurrent16 is 16 goroutines appending 256 B records
// durably; group commit shares the fdatasync.
func BenchmarkAppendConcurrent16(b *testing.B) {
	l, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := make([]byte, 256)
	ctx := context.Background()
	const workers = 16
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < workers; w++ {
		n := b.N / workers
		if w < b.N%workers {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if _, err := l.Append(ctx, rec); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkScan1M scans 1M 32-byte records with checksum and chain
// verification; one op is a full scan.
func BenchmarkScan1M(b *testing.B) {
	dir := b.TempDir()
	l, err := Open(dir, &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	const total, batch = 1 << 20, 1024
	recs := make([][]byte, batch)
	for i := range recs {
		recs[i] = make([]byte, 32)
	}
	for i := 0; i < total/batch; i++ {
		if _, err := l.Append(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := l.Scan(ctx, 1, func(Record) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != total {
			b.Fatalf("scanned %d records", n)
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppendNoSync256 shows the CPU and syscall overhead of a Commit
// without the fdatasync.
func BenchmarkAppendNoSync256(b *testing.B) {
	l, err := Open(b.TempDir(), &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := make([]byte, 256)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
