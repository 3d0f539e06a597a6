package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/durable"
)

var ctx = context.Background()

func openT(t testing.TB, dir string, opts *Options) *Log {
	t.Helper()
	l, err := Open(ctx, dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func payload(i int, size int) []byte {
	b := bytes.Repeat([]byte{byte('a' + i%26)}, size)
	copy(b, fmt.Sprintf("rec-%d-", i))
	return b
}

func readAll(t testing.TB, l *Log) []Record {
	t.Helper()
	var out []Record
	require.NoError(t, l.Scan(ctx, 1, func(r Record) error { out = append(out, r); return nil }))
	return out
}

func TestAppendAndScanRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "voyage")
	l := openT(t, dir, nil)
	first, err := l.Append(ctx, []byte("one"))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), first)
	first, err = l.Append(ctx, []byte("two"), []byte{}, []byte("four"))
	require.NoError(t, err)
	assert.Equal(t, uint64(2), first)
	assert.Equal(t, uint64(4), l.Last())

	recs := readAll(t, l)
	require.Len(t, recs, 4)
	for i, want := range []string{"one", "two", "", "four"} {
		assert.Equal(t, uint64(i+1), recs[i].Seq)
		assert.Equal(t, want, string(recs[i].Data))
	}
	var from3 []uint64
	require.NoError(t, l.Scan(ctx, 3, func(r Record) error { from3 = append(from3, r.Seq); return nil }))
	assert.Equal(t, []uint64{3, 4}, from3)

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(dir, segmentName(1)))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.NoError(t, l.Close())
	l2 := openT(t, dir, nil)
	assert.Equal(t, uint64(4), l2.Last())
	assert.Empty(t, l2.Cuts())
}

func TestRotationKeepsBatchesInOneSegmentAndVerifies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 1024, NoSync: true})
	for i := 0; i < 60; i++ {
		_, err := l.Append(ctx, payload(i, 50), payload(i+1000, 30))
		require.NoError(t, err)
	}
	segs, bytes := segmentFiles(t, dir)
	assert.Greater(t, len(segs), 5)

	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, len(segs), rep.Segments)
	assert.Equal(t, uint64(120), rep.Records)
	assert.Equal(t, uint64(120), rep.LastSeq)
	assert.Equal(t, bytes, rep.Bytes)
	assert.Nil(t, rep.Problem)

	// Every segment starts with the first record of a batch (odd seq).
	for _, s := range segs {
		assert.Equal(t, uint64(1), s%2, "segment %d starts mid-batch", s)
	}
	recs := readAll(t, l)
	require.Len(t, recs, 120)
	for i, r := range recs {
		assert.Equal(t, uint64(i+1), r.Seq)
	}
}

// segmentFiles returns the first seqs of the segment files in dir and the
// bytes they take.
func segmentFiles(t *testing.T, dir string) (segs []uint64, bytes int64) {
	t.Helper()
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	for _, s := range segs {
		fi, err := os.Stat(filepath.Join(dir, segmentName(s)))
		require.NoError(t, err)
		bytes += fi.Size()
	}
	return segs, bytes
}

// The last segment is preallocated, so its file size no longer changes
// with every append; Mark and Changed do (see prealloc_test.go).
func TestSegmentSizeIsDiskUsageAndMarkChangesWithEveryAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	assert.Equal(t, Mark{}, l.Mark(), "a log never written has no segment")
	_, err := l.Append(ctx, []byte("first"))
	require.NoError(t, err)
	_, b1 := segmentFiles(t, dir)
	m1 := l.Mark()
	_, err = l.Append(ctx, []byte("x"))
	require.NoError(t, err)
	segs, b2 := segmentFiles(t, dir)
	assert.Len(t, segs, 1)
	assert.Equal(t, int64(preallocMin), b2)
	assert.Equal(t, b1, b2)
	changed, err := Changed(dir, m1)
	require.NoError(t, err)
	assert.True(t, changed)
	m2 := l.Mark()
	assert.NotEqual(t, m1, m2)
	changed, err = Changed(dir, m2)
	require.NoError(t, err)
	assert.False(t, changed)
}

func TestRecordLargerThanLimitIsRefusedNamingTheLimit(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{NoSync: true})
	big := make([]byte, 200_000_000) // a plausible 200 MB record; untouched pages cost nothing
	_, err := l.Append(ctx, []byte("ok"), big)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "MaxRecordSize 67108864")
	assert.Equal(t, uint64(0), l.Last(), "the whole batch is refused")
	assert.Empty(t, readAll(t, l))
}

func TestOversizedRecordGetsItsOwnSegmentWhenLimitRaised(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 64 << 10, MaxRecordSize: 1 << 20, NoSync: true})
	_, err := l.Append(ctx, []byte("small"))
	require.NoError(t, err)
	big := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16)
	first, err := l.Append(ctx, big)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), first)
	_, err = l.Append(ctx, []byte("after"))
	require.NoError(t, err)
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2, 3}, segs)
	recs := readAll(t, l)
	require.Len(t, recs, 3)
	assert.Equal(t, big, recs[1].Data)
	_, err = Verify(ctx, dir, nil)
	require.NoError(t, err)
}

func TestCommitDecideErrorIsReturnedUnchangedAndWritesNothing(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{NoSync: true})
	boom := errors.New("boom")
	first, err := l.Commit(ctx, func(tx *Tx) ([][]byte, error) { return [][]byte{[]byte("x")}, boom })
	assert.Same(t, boom, err)
	assert.Zero(t, first)
	first, err = l.Commit(ctx, func(tx *Tx) ([][]byte, error) { return nil, nil })
	require.NoError(t, err)
	assert.Zero(t, first)
	assert.Empty(t, readAll(t, l))
}

func TestAppendIfConflictAcrossTwoLogsOnOneDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := openT(t, dir, &Options{NoSync: true})
	b := openT(t, dir, &Options{NoSync: true})
	_, err := a.Append(ctx, []byte("from a"))
	require.NoError(t, err)

	_, err = b.AppendIf(ctx, 0, []byte("stale"))
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrConflict)
	assert.Equal(t, ConflictError{Expected: 0, Actual: 1}, *ce)
	assert.Equal(t, uint64(1), b.Last(), "the conflict caught b up")

	var seen []string
	first, err := b.Commit(ctx, func(tx *Tx) ([][]byte, error) {
		require.NoError(t, tx.Scan(1, func(r Record) error { seen = append(seen, string(r.Data)); return nil }))
		return [][]byte{[]byte("from b")}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(2), first)
	assert.Equal(t, []string{"from a"}, seen)

	first, err = a.AppendIf(ctx, 2, []byte("a again"))
	require.NoError(t, err)
	assert.Equal(t, uint64(3), first)
	assert.Len(t, readAll(t, b), 3)
}

func TestConcurrentCommitsAreGapFreeAndComplete(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{SegmentSize: 8 << 10, NoSync: true})
	const workers, each = 16, 40
	var wg sync.WaitGroup
	got := make([][]uint64, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				first, err := l.Append(ctx, []byte(fmt.Sprintf("w%d-%d", w, i)))
				if !assert.NoError(t, err) {
					return
				}
				got[w] = append(got[w], first)
			}
		}()
	}
	wg.Wait()
	recs := readAll(t, l)
	require.Len(t, recs, workers*each)
	for w := range got {
		for i, seq := range got[w] {
			assert.Equal(t, fmt.Sprintf("w%d-%d", w, i), string(recs[seq-1].Data))
		}
	}
	_, err := Verify(ctx, l.Dir(), nil)
	require.NoError(t, err)
}

func TestGroupCommitDecidesSeeEarlierStagedRecordsAndFailAlone(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{NoSync: true})
	release := make(chan struct{})
	entered := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := l.Commit(ctx, func(tx *Tx) ([][]byte, error) {
			close(entered)
			<-release
			return [][]byte{[]byte("a")}, nil
		})
		assert.NoError(t, err)
	}()
	<-entered

	type result struct {
		first uint64
		err   error
	}
	var b, c, d result
	var dLast uint64
	var dSeen []string
	boom := errors.New("c refuses")
	commit := func(r *result, decide func(*Tx) ([][]byte, error)) {
		wg.Add(1)
		go func() { defer wg.Done(); r.first, r.err = l.Commit(ctx, decide) }()
	}
	waitQueued := func(n int) {
		require.Eventually(t, func() bool { l.qmu.Lock(); defer l.qmu.Unlock(); return len(l.queue) == n }, 5*time.Second, time.Millisecond)
	}
	commit(&b, func(tx *Tx) ([][]byte, error) { return [][]byte{[]byte("b1"), []byte("b2")}, nil })
	waitQueued(1)
	commit(&c, func(tx *Tx) ([][]byte, error) { return [][]byte{[]byte("c")}, boom })
	waitQueued(2)
	commit(&d, func(tx *Tx) ([][]byte, error) {
		dLast = tx.Last()
		err := tx.Scan(1, func(r Record) error { dSeen = append(dSeen, string(r.Data)); return nil })
		return [][]byte{[]byte("d")}, err
	})
	waitQueued(3)
	close(release)
	wg.Wait()

	require.NoError(t, b.err)
	assert.Equal(t, uint64(2), b.first)
	assert.Same(t, boom, c.err)
	require.NoError(t, d.err)
	assert.Equal(t, uint64(4), d.first)
	assert.Equal(t, uint64(3), dLast)
	assert.Equal(t, []string{"a", "b1", "b2"}, dSeen)
	var all []string
	for _, r := range readAll(t, l) {
		all = append(all, string(r.Data))
	}
	assert.Equal(t, []string{"a", "b1", "b2", "d"}, all)
}

func TestCommitHonoursCanceledContextWhileQueued(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{NoSync: true})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := l.Append(cctx, []byte("x"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(0), l.Last())
}

func TestClosedLogRefusesEverything(t *testing.T) {
	t.Parallel()
	l, err := Open(ctx, t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	_, err = l.Append(ctx, []byte("x"))
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, l.Scan(ctx, 1, func(Record) error { return nil }), ErrClosed)
	assert.ErrorIs(t, l.Close(), ErrClosed)
}

func TestFollowSeesRecordsAppendedByAnotherLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reader := openT(t, dir, &Options{NoSync: true})
	writer := openT(t, dir, &Options{SegmentSize: 512, NoSync: true})
	_, err := writer.Append(ctx, []byte("before"))
	require.NoError(t, err)

	fctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- reader.Follow(fctx, 1, func(r Record) error {
			mu.Lock()
			got = append(got, string(r.Data))
			mu.Unlock()
			return nil
		})
	}()
	for i := 0; i < 30; i++ { // crosses several rotations
		_, err := writer.Append(ctx, payload(i, 40))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 31 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, "before", got[0])
	assert.Equal(t, string(payload(29, 40)), got[30])
}

// TestFollowFromALogNobodyMadeYet: a reader that follows a log opened
// before its directory exists waits for its first writer, rather than
// failing on the directory it does not find.
func TestFollowFromALogNobodyMadeYet(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "events")
	reader := openT(t, dir, &Options{NoSync: true})
	fctx, cancel := context.WithCancel(ctx)
	got := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- reader.Follow(fctx, 1, func(r Record) error { got <- string(r.Data); return nil })
	}()
	time.Sleep(3 * FollowInterval) // the reader polls the missing directory
	writer := openT(t, dir, &Options{NoSync: true})
	_, err := writer.Append(ctx, []byte("first"))
	require.NoError(t, err)
	select {
	case g := <-got:
		assert.Equal(t, "first", g)
	case err := <-done:
		t.Fatalf("follow ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not see the first record")
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// TestLogsThatFoundNoSegmentDoNotReplaceTheFirst: Logs opened on a log
// nobody wrote yet, each taking the writer lock once before anyone
// wrote (an empty commit), then appending concurrently: a Log that
// found no segment reads the one another created since, and never
// creates (and so replaces) the first segment again. Before, one did,
// and the records in the replaced segment were lost under a watermark
// that said they were acknowledged.
func TestLogsThatFoundNoSegmentDoNotReplaceTheFirst(t *testing.T) {
	t.Parallel()
	for round := range 30 {
		dir := filepath.Join(t.TempDir(), "events")
		var logs []*Log
		for range 12 {
			logs = append(logs, openT(t, dir, &Options{Identity: "v"}))
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(logs))
		for g, l := range logs {
			wg.Go(func() {
				for u := 0; u < 12; {
					var last uint64
					if _, err := l.Commit(ctx, func(tx *Tx) ([][]byte, error) { last = tx.Last(); return nil, nil }); err != nil {
						errs <- err
						return
					}
					_, err := l.AppendIf(ctx, last, fmt.Appendf(nil, "%d/%d a", g, u), fmt.Appendf(nil, "%d/%d b", g, u))
					if errors.Is(err, ErrConflict) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					u++
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
		rep, err := Verify(ctx, dir, &Options{Identity: "v"})
		require.NoError(t, err, "round %d", round)
		require.Equal(t, uint64(len(logs)*12*2), rep.LastSeq, "round %d: every unit is in the log", round)
	}
}

func TestScanRecordDataIsSafeToRetain(t *testing.T) {
	t.Parallel()
	l := openT(t, t.TempDir(), &Options{NoSync: true})
	for i := 0; i < 100; i++ {
		_, err := l.Append(ctx, payload(i, 20))
		require.NoError(t, err)
	}
	var kept []Record
	require.NoError(t, l.Scan(ctx, 1, func(r Record) error { kept = append(kept, r); return nil }))
	readAll(t, l)
	for i, r := range kept {
		assert.Equal(t, payload(i, 20), r.Data)
	}
}

// TestOpenScanDeliversEveryRecordOnceAndNotATornUnit: OpenScan is Open
// followed by Scan(1), reading the last segment once.
func TestOpenScanDeliversEveryRecordOnceAndNotATornUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 4096, NoSync: true})
	var want [][]byte
	for i := 0; i < 150; i++ {
		d := payload(i, 100)
		_, err := l.Append(ctx, d)
		require.NoError(t, err)
		want = append(want, d)
	}
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2, "several segments")
	l.mu.Lock()
	end := l.w.p.off
	last := filepath.Join(dir, l.w.name)
	l.mu.Unlock()
	// A torn unit after the data: its first bytes landed, the rest did not
	// (and so it was never acknowledged: the watermark is from before it).
	crash := watermarkNow(t, dir)
	_, err = l.Append(ctx, payload(99, 300))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(last, end+100))
	crash()

	var got [][]byte
	var seqs []uint64
	l2, err := OpenScan(ctx, dir, &Options{SegmentSize: 4096, NoSync: true}, func(r Record) error {
		got = append(got, r.Data)
		seqs = append(seqs, r.Seq)
		return nil
	})
	require.NoError(t, err)
	defer l2.Close()
	assert.Equal(t, want, got)
	for i, s := range seqs {
		assert.Equal(t, uint64(i+1), s)
	}
	require.NotNil(t, l2.Torn(), "the torn unit was found, not delivered")
	cutNow(t, l2)
	require.Len(t, l2.Cuts(), 1, "the torn unit was cut by the first commit")
	assert.Equal(t, uint64(len(want)), l2.Last())

	boom := errors.New("stop here")
	_, err = OpenScan(ctx, dir, nil, func(Record) error { return boom })
	assert.ErrorIs(t, err, boom)
}

// A Commit waiting for a writer lock that another process holds (here:
// another open file description) gives up when its context ends, and
// commits once the lock is free.
func TestCommitWaitingForTheLockHonoursItsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	_, err := l.Append(ctx, []byte("first")) // creates LOCK
	require.NoError(t, err)
	holder, err := durable.OpenLock(filepath.Join(dir, "LOCK"))
	require.NoError(t, err)
	defer holder.Close()
	ok, err := holder.TryLock()
	require.NoError(t, err)
	require.True(t, ok, "nothing holds the lock between commits")

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = l.Append(short, []byte("blocked"))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("gave up after %v", time.Since(start))
	require.Less(t, time.Since(start), 10*time.Second, "hang guard")

	require.NoError(t, holder.Unlock())
	_, err = l.Append(ctx, []byte("second"))
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("first"), []byte("second")}, datas(t, l))
}

// The chain a log's frames carry is the one ChainGenesis and ChainNext
// compute from its identity and records alone, so another store of the
// same records keeps it: Verify of a log holding them checks out, and a
// log with another identity has another genesis.
func TestChainFromTheRecordsAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(ctx, dir, &Options{Identity: "voyage-x", NoSync: true})
	require.NoError(t, err)
	recs := [][]byte{[]byte("one"), {}, []byte("three")}
	_, err = l.Append(context.Background(), recs...)
	require.NoError(t, err)
	mark := l.Mark()
	require.NoError(t, l.Close())
	sum := ChainGenesis("voyage-x")
	assert.NotEqual(t, ChainGenesis("voyage-y"), sum)
	for _, r := range recs {
		sum = ChainNext(sum, r)
	}
	assert.Equal(t, uint64(3), mark.Last)
	assert.Equal(t, sum, mark.Sum, "the sum after the last frame")
}
