package segment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawFile is a plain file appended to with pwrite and Datasync through the
// seam (fdatasync on Linux): the baseline a durable append is measured
// against.
type rawFile struct {
	f   File
	off int64
}

func openRaw(b *testing.B, dir string) *rawFile {
	f, err := OSFS{}.OpenFile(filepath.Join(dir, "raw"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return &rawFile{f: f}
}

// appendSync appends buf and fdatasyncs.
func (r *rawFile) appendSync(b *testing.B, buf []byte) {
	n, err := r.f.WriteAt(buf, r.off)
	if err != nil {
		b.Fatal(err)
	}
	r.off += int64(n)
	if err := r.f.Datasync(); err != nil {
		b.Fatal(err)
	}
}

// unitCountFS counts the Datasyncs of segment files: one per commit unit
// written (an extension of the preallocation shares its unit's).
type unitCountFS struct {
	OSFS
	units atomic.Int64
}

type unitCountFile struct {
	File
	units *atomic.Int64
}

func (u *unitCountFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := u.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return unitCountFile{File: f, units: &u.units}, nil
}

func (f unitCountFile) Datasync() error {
	f.units.Add(1)
	return f.File.Datasync()
}

// BenchmarkRawFdatasync256 is the baseline for BenchmarkAppendDurable256:
// append 256 B to a plain file in the same kind of directory and fdatasync.
func BenchmarkRawFdatasync256(b *testing.B) {
	raw := openRaw(b, b.TempDir())
	buf := make([]byte, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw.appendSync(b, buf)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
}

// BenchmarkAppendDurable256 is one appender, one 256 B record per durable Commit.
func BenchmarkAppendDurable256(b *testing.B) {
	l, err := Open(ctx, b.TempDir(), nil)
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
// durably; group commit shares the fdatasync. records/group counts the
// units through the seam (a Datasync per unit).
func BenchmarkAppendConcurrent16(b *testing.B) {
	ufs := &unitCountFS{}
	l, err := Open(ctx, b.TempDir(), &Options{FS: ufs})
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
	b.ReportMetric(float64(b.N)/float64(ufs.units.Load()), "records/group")
}

// BenchmarkScan1M scans 1M 32-byte records with checksum and chain
// verification; one op is a full scan.
func BenchmarkScan1M(b *testing.B) {
	dir := b.TempDir()
	l, err := Open(ctx, dir, &Options{NoSync: true})
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
	l, err := Open(ctx, b.TempDir(), &Options{NoSync: true})
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

// BenchmarkCommitOnLargeLog is the pattern of the layer above: a Commit
// whose decide folds in what was appended since this Log's last seq
// (tx.Scan(seen+1)), then appends one record. "alone": no one else writes;
// "shared": another Log on the same directory appends one record before
// every Commit, so the catch-up and tx.Scan read from disk; "refresh": the
// other Log appends, then this one does Scan(seen+1). The cost of an op must
// not depend on how many records the log already holds (200k records ≈ 56
// MiB in one segment vs an empty log). NoSync, so it measures CPU and I/O,
// not fdatasync.
func BenchmarkCommitOnLargeLog(b *testing.B) {
	for _, existing := range []int{0, 200_000} {
		dir := b.TempDir()
		l, err := Open(ctx, dir, &Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		if existing > 0 {
			fillLog(b, l, existing, 256)
		}
		other, err := Open(ctx, dir, &Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		rec := make([]byte, 256)
		ctx := context.Background()
		seen := l.Last()
		apply := func(r Record) error {
			if r.Seq != seen+1 {
				return fmt.Errorf("seq %d after %d", r.Seq, seen)
			}
			seen = r.Seq
			return nil
		}
		commit := func(b *testing.B) {
			_, err := l.Commit(ctx, func(tx *Tx) ([][]byte, error) {
				if err := tx.Scan(seen+1, apply); err != nil {
					return nil, err
				}
				seen++ // the record appended below
				return [][]byte{rec}, nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, mode := range []string{"alone", "shared", "refresh"} {
			b.Run(fmt.Sprintf("records=%d/%s", existing, mode), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if mode != "alone" {
						if _, err := other.Append(ctx, rec); err != nil {
							b.Fatal(err)
						}
					}
					if mode == "refresh" {
						if err := l.Scan(ctx, seen+1, apply); err != nil {
							b.Fatal(err)
						}
						continue
					}
					commit(b)
				}
			})
		}
		other.Close()
		l.Close()
	}
}

// BenchmarkDurableVsRaw256 interleaves one raw append+fdatasync of 256 B on
// a plain file with one durable 256 B Append, op by op, so both see the
// same disk conditions on a noisy machine. It reports the rate of each and
// the ratio of their median latencies (1 = the log costs nothing over the
// raw syscalls).
func BenchmarkDurableVsRaw256(b *testing.B) {
	dir := b.TempDir()
	rawf := openRaw(b, dir)
	l, err := Open(ctx, filepath.Join(dir, "log"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	buf := make([]byte, 256)
	rec := make([]byte, 256)
	ctx := context.Background()
	raw := make([]time.Duration, 0, b.N)
	logd := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rawf.appendSync(b, buf)
		t1 := time.Now()
		if _, err := l.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		raw = append(raw, t1.Sub(t0))
		logd = append(logd, t2.Sub(t1))
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	var sr, sl time.Duration
	for i := range raw {
		sr += raw[i]
		sl += logd[i]
	}
	mr, ml := med(raw), med(logd)
	b.ReportMetric(float64(len(raw))/sr.Seconds(), "raw/s")
	b.ReportMetric(float64(len(logd))/sl.Seconds(), "log/s")
	b.ReportMetric(float64(mr.Microseconds()), "raw-med-µs")
	b.ReportMetric(float64(ml.Microseconds()), "log-med-µs")
	b.ReportMetric(float64(mr)/float64(ml), "med-ratio")
	b.ReportMetric(float64(sr)/float64(sl), "mean-ratio")
}

// BenchmarkOpenScan100k opens a log of 100k records of 366 bytes on
// average (the sizes of the bench's replayed voyage: events and blob
// records), in one segment, and scans every record as an open that folds
// them does (OpenScan): every frame checked and the BLAKE3 chain computed
// over the last segment. Run with -cpu 1,2 to see the digests computed
// ahead (ahead.go) on a second core.
func BenchmarkOpenScan100k(b *testing.B) {
	dir := b.TempDir()
	const id = "voyage-open-scan"
	l, err := Open(ctx, dir, &Options{NoSync: true, Identity: id})
	if err != nil {
		b.Fatal(err)
	}
	sizes := []int{100, 110, 180, 200, 220, 250, 300, 800, 900, 600}
	const total = 100_000
	batch := make([][]byte, 0, 100)
	for i := range total {
		batch = append(batch, payload(i, sizes[i%len(sizes)]))
		if len(batch) == cap(batch) {
			if _, err := l.Append(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	opts := &Options{NoSync: true, Identity: id, NoRetain: true}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		l, err := OpenScan(ctx, dir, opts, func(Record) error { n++; return nil })
		if err != nil {
			b.Fatal(err)
		}
		if n != total {
			b.Fatalf("scanned %d records", n)
		}
		l.Close()
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
