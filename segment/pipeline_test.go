package segment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateFS holds each segment fdatasync until the test lets it go, and can
// fail the next one.
type gateFS struct {
	OSFS
	armed   atomic.Bool
	entered chan struct{} // receives when an fdatasync starts
	proceed chan error    // what the held fdatasync returns
}

type gateFile struct {
	File
	fs   *gateFS
	name string
}

func newGateFS() *gateFS {
	return &gateFS{entered: make(chan struct{}, 64), proceed: make(chan error)}
}

// openGated opens a log in dir whose segment exists (one record, "zero",
// written before the gate is armed), with every later fdatasync held.
func openGated(t *testing.T, dir string) (*Log, *gateFS) {
	g := newGateFS()
	l := openT(t, dir, &Options{FS: g})
	_, err := l.Append(context.Background(), []byte("zero"))
	require.NoError(t, err)
	g.armed.Store(true)
	return l, g
}

func (g *gateFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := g.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, fs: g, name: name}, nil
}

func (f *gateFile) Datasync() error {
	if !f.fs.armed.Load() || !strings.Contains(f.name, ".seg") {
		return f.File.Datasync()
	}
	f.fs.entered <- struct{}{}
	if err := <-f.fs.proceed; err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	return f.File.Datasync()
}

// commitAsync appends data in a goroutine and sends its outcome.
func commitAsync(l *Log, data string, out chan<- error) {
	go func() {
		_, err := l.Append(context.Background(), []byte(data))
		out <- err
	}()
}

// waitWritten waits until l has written n records.
func waitWritten(t *testing.T, l *Log, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return l.Stats().Records >= n }, 10*time.Second, time.Millisecond)
}

// While one fdatasync runs, later commits run their decides and write
// their units; the next fdatasync covers all of them at once, and none is
// acknowledged before an fdatasync that started after it was written.
func TestCommitsWriteWhileAnFdatasyncRunsAndShareTheNext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, g := openGated(t, dir)
	out := make(chan error, 16)
	commitAsync(l, "first", out)
	<-g.entered
	const later = 8
	for i := range later {
		commitAsync(l, fmt.Sprint("later ", i), out)
	}
	waitWritten(t, l, 2+later)
	select {
	case err := <-out:
		t.Fatalf("a commit returned (%v) before any fdatasync finished", err)
	default:
	}
	g.proceed <- nil // the first fdatasync ends: only "first" is durable
	require.NoError(t, <-out)
	<-g.entered // the next fdatasync covers the eight written meanwhile
	select {
	case err := <-out:
		t.Fatalf("a later commit returned (%v) before its fdatasync", err)
	case <-time.After(20 * time.Millisecond):
	}
	g.proceed <- nil
	for range later {
		require.NoError(t, <-out)
	}
	st := l.Stats()
	assert.Equal(t, uint64(2+later), st.Records)
	assert.Equal(t, uint64(3), st.Syncs, "one fdatasync for the eight written while the first ran")

	var got []string
	require.NoError(t, l.Scan(context.Background(), 1, func(r Record) error {
		got = append(got, string(r.Data))
		return nil
	}))
	assert.Len(t, got, 2+later)
	wm, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(2+later), wm.last, "the watermark follows the fdatasync")
}

// A failed fdatasync fails every commit it was to cover, and every later
// one, and no unit it covered is acknowledged.
func TestFailedFdatasyncFailsEveryCommitItCovered(t *testing.T) {
	t.Parallel()
	l, g := openGated(t, t.TempDir())
	out := make(chan error, 16)
	commitAsync(l, "first", out)
	<-g.entered
	for i := range 4 {
		commitAsync(l, fmt.Sprint("later ", i), out)
	}
	waitWritten(t, l, 6)
	g.proceed <- syscall.EIO
	for range 5 {
		err := <-out
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrPoisoned)
		assert.ErrorIs(t, err, syscall.EIO)
	}
	_, err := l.Append(context.Background(), []byte("after"))
	assert.ErrorIs(t, err, ErrPoisoned)
	assert.Equal(t, uint64(1), l.Stats().Syncs, "only the ungated one")
}

// The writer lock is held from a unit's write until it is durable: another
// Log of the same directory (another process, as far as the lock goes)
// cannot append in between, and appends once it is released.
func TestWriterLockIsHeldUntilTheUnitIsDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, g := openGated(t, dir)
	out := make(chan error, 1)
	commitAsync(l, "first", out)
	<-g.entered

	other := openT(t, dir, nil)
	cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := other.Append(cctx, []byte("other"))
	cancel()
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "the other writer waits for the lock: %v", err)

	g.proceed <- nil
	require.NoError(t, <-out)
	seq, err := other.Append(context.Background(), []byte("other"))
	require.NoError(t, err, "the lock is released once the pipeline is idle")
	assert.Equal(t, uint64(3), seq)

	// This Log takes the lock again, catches up on the other's record and
	// reads the watermark slot to write afresh.
	go func() { <-g.entered; g.proceed <- nil }()
	seq, err = l.Append(context.Background(), []byte("third"))
	require.NoError(t, err)
	assert.Equal(t, uint64(4), seq)
	wm, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), wm.last)
}

// Many goroutines, a small segment size (rotations while fdatasyncs of
// earlier units are pending) and Close racing the last commits: every
// acknowledged record is there, in order, and the watermark covers them.
func TestPipelineUnderRotationAndClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(ctx, dir, &Options{SegmentSize: 8 << 10})
	require.NoError(t, err)
	const workers, each = 8, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[uint64]string{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				data := fmt.Sprintf("w%d-%d-%s", w, i, strings.Repeat("x", 300))
				seq, err := l.Append(context.Background(), []byte(data))
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				mu.Lock()
				acked[seq] = data
				mu.Unlock()
			}
		}()
	}
	waitWritten(t, l, workers) // Close while the commits are under way
	require.NoError(t, l.Close())
	wg.Wait()

	wm, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	got := map[uint64]string{}
	require.NoError(t, ScanDir(context.Background(), dir, 1, func(r Record) error {
		got[r.Seq] = string(r.Data)
		return nil
	}))
	for seq, data := range acked {
		assert.Equal(t, data, got[seq], "acknowledged record %d", seq)
		assert.LessOrEqual(t, seq, wm.last, "the watermark covers every acknowledged record")
	}
	assert.Equal(t, uint64(len(got)), wm.last, "everything written before Close was made durable")
}

// With NoRetain the open reuses its read buffer: every record still comes
// whole and in order, across chunk boundaries and units of many records
// (whose first records are still in use when the next chunk is read).
func TestOpenScanWithNoRetainDeliversTheSameRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	r := rand.New(rand.NewPCG(3, 4))
	var want []string
	for u := range 60 {
		var recs [][]byte
		for range 1 + r.IntN(5) {
			n := 1 + r.IntN(300<<10)
			if u%7 == 0 {
				n = 1 + r.IntN(16)
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			recs = append(recs, b)
			want = append(want, string(b))
		}
		_, err := l.Append(context.Background(), recs...)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	for _, noRetain := range []bool{false, true} {
		var got []string
		l, err := OpenScan(ctx, dir, &Options{NoRetain: noRetain}, func(rec Record) error {
			got = append(got, string(rec.Data)) // a copy
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, l.Close())
		assert.Equal(t, len(want), len(got), "NoRetain %v", noRetain)
		assert.True(t, slices.Equal(want, got), "NoRetain %v: the records differ", noRetain)
	}
}

// A log opened where no directory is yet reads as empty, not as an error
// (a writer may not have made it yet).
func TestScanOfALogNobodyMadeYetIsEmpty(t *testing.T) {
	t.Parallel()
	l := openT(t, filepath.Join(t.TempDir(), "not-yet"), nil)
	n := 0
	require.NoError(t, l.Scan(context.Background(), 1, func(Record) error { n++; return nil }))
	assert.Zero(t, n)
}

// ScanAfter delivers the records after a mark, across segments, once the
// log passes through the mark; a mark of another history is refused.
func TestScanAfterAMark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 4 << 10, NoSync: true})
	ctx := context.Background()
	var marks []Mark
	for i := range 60 {
		_, err := l.Append(ctx, []byte(fmt.Sprintf("record %d %s", i+1, strings.Repeat("x", 200))))
		require.NoError(t, err)
		marks = append(marks, l.Mark())
	}
	for _, at := range []int{0, 17, 40, 59} {
		m := marks[at]
		require.Equal(t, uint64(at+1), m.Last)
		var got []uint64
		require.NoError(t, l.ScanAfter(ctx, m, func(r Record) error {
			got = append(got, r.Seq)
			assert.True(t, strings.HasPrefix(string(r.Data), fmt.Sprintf("record %d ", r.Seq)))
			return nil
		}))
		assert.Len(t, got, 60-(at+1), "after mark %d", at+1)
		if len(got) > 0 {
			assert.Equal(t, uint64(at+2), got[0])
		}
	}
	m := marks[20]
	for name, bad := range map[string]func(m *Mark){
		"another chain value": func(m *Mark) { m.Sum++ },
		"another seed":        func(m *Mark) { m.Seed++ },
		"another unit":        func(m *Mark) { m.Unit += 2 },
		"another seq":         func(m *Mark) { m.Last++ },
		"no such segment":     func(m *Mark) { m.Segment = segmentName(99999) },
	} {
		b := m
		bad(&b)
		err := l.ScanAfter(ctx, b, func(Record) error { t.Fatal("a record after a bad mark"); return nil })
		assert.ErrorIs(t, err, ErrNotAtMark, name)
	}
}

// OpenAfter reads the last segment from a mark in it, delivering what
// follows; a mark elsewhere or of another history opens nothing; damage
// after the mark is damage.
func TestOpenAfterAMark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 8 << 10, NoSync: true})
	ctx := context.Background()
	var marks []Mark
	for i := range 80 {
		_, err := l.Append(ctx, []byte(fmt.Sprintf("record %d %s", i+1, strings.Repeat("y", 150))))
		require.NoError(t, err)
		marks = append(marks, l.Mark())
	}
	require.NoError(t, l.Close())
	last := marks[79].Segment
	var inLast []int
	for i, m := range marks {
		if m.Segment == last {
			inLast = append(inLast, i)
		}
	}
	require.Greater(t, len(inLast), 2)
	at := inLast[1]
	var got []uint64
	l2, err := OpenAfter(ctx, dir, nil, marks[at], func(r Record) error { got = append(got, r.Seq); return nil })
	require.NoError(t, err)
	assert.Equal(t, uint64(80), l2.Last())
	require.NoError(t, l2.Close())
	require.Len(t, got, 80-(at+1))
	assert.Equal(t, uint64(at+2), got[0])

	_, err = OpenAfter(ctx, dir, nil, marks[3], nil)
	assert.ErrorIs(t, err, ErrMarkElsewhere)
	bad := marks[at]
	bad.Sum++
	_, err = OpenAfter(ctx, dir, nil, bad, nil)
	assert.ErrorIs(t, err, ErrNotAtMark)
	assert.NotErrorIs(t, err, ErrMarkElsewhere)

	// A flipped byte after the mark, in an acknowledged unit: damage.
	path := filepath.Join(dir, last)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[marks[at].End+30] ^= 0x10
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err = OpenAfter(ctx, dir, nil, marks[at], nil)
	assert.ErrorIs(t, err, ErrCorrupt)
}

// A failed fdatasync fails the commits it was to cover and every later
// one, but not a commit whose unit an earlier fdatasync made durable,
// whichever committer runs the failed one.
func TestAFailedFdatasyncFailsOnlyTheCommitsItCovered(t *testing.T) {
	t.Parallel()
	l, g := openGated(t, t.TempDir())
	first := make(chan error, 1)
	commitAsync(l, "first", first)
	<-g.entered
	later := make(chan error, 4)
	for i := range 4 {
		commitAsync(l, fmt.Sprint("later ", i), later)
	}
	waitWritten(t, l, 6)
	g.proceed <- nil // "first" is durable
	<-g.entered      // the fdatasync of the four written meanwhile
	g.proceed <- syscall.EIO
	require.NoError(t, <-first, "its unit was durable before the failed fdatasync")
	for range 4 {
		err := <-later
		assert.ErrorIs(t, err, ErrPoisoned)
		assert.ErrorIs(t, err, syscall.EIO)
	}
	_, err := l.Append(context.Background(), []byte("after"))
	assert.ErrorIs(t, err, ErrPoisoned)
}
