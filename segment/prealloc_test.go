package segment

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

func TestAllocTargetGrowsInDoublingStepsUpToSegmentSize(t *testing.T) {
	t.Parallel()
	const seg = 64 << 20
	assert.Equal(t, int64(preallocMin), allocTarget(-1, 0, 100, seg))
	assert.Equal(t, int64(preallocMin), allocTarget(preallocMin, 0, preallocMin*3/4, seg), "room left: no extension")
	assert.Equal(t, int64(2*preallocMin), allocTarget(preallocMin, 0, preallocMin*3/4+1, seg), "within a quarter step: double")
	assert.Equal(t, int64(2*preallocMax), allocTarget(preallocMax, 0, preallocMax*3/4+1, seg), "steps stop doubling at preallocMax")
	assert.Equal(t, int64(3*preallocMax), allocTarget(2*preallocMax, 0, 2*preallocMax-preallocMax/4+1, seg))
	assert.Equal(t, int64(seg), allocTarget(seg-100, 0, seg-50, seg), "never beyond SegmentSize")
	assert.Equal(t, int64(seg), allocTarget(seg, 0, seg-10, seg))
	assert.Equal(t, int64(seg+5000), allocTarget(preallocMin, 0, seg+5000, seg), "an oversized unit gets what it needs")
	assert.Equal(t, int64(700), allocTarget(-1, 0, 100, 700))
	// A writer that reopened a long segment steps by what it added.
	const long = 40 << 20
	assert.Equal(t, int64(long+preallocMin), allocTarget(long, long, long+100, seg), "the first extension after a reopen is the smallest step")
	assert.Equal(t, int64(long+2*preallocMin), allocTarget(long+preallocMin, long, long+preallocMin-100, seg), "then doubling")
	assert.Equal(t, int64(long+3*preallocMax), allocTarget(long+2*preallocMax, long, long+2*preallocMax-100, seg), "up to preallocMax")
}

func TestPreallocationKeepsSmallLogsSmallGrowsAndSealsSegments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 1 << 20, NoSync: true})
	_, err := l.Append(ctx, payload(0, 256))
	require.NoError(t, err)
	path := filepath.Join(dir, segmentName(1))
	assert.Equal(t, int64(preallocMin), fileSize(t, path), "a one-record log takes preallocMin")

	n := preallocMin * 7 / 8 / 280 // records of 256 B (≈ 280 B framed) past three quarters of preallocMin
	for i := 1; i < n; i++ {
		_, err := l.Append(ctx, payload(i, 256))
		require.NoError(t, err)
	}
	assert.Equal(t, int64(2*preallocMin), fileSize(t, path), "extended ahead of need")

	fillLog(t, l, 5000, 256) // ≈ 1.4 MiB: rotates
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	for _, s := range segs[:len(segs)-1] {
		p := filepath.Join(dir, segmentName(s))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.LessOrEqual(t, int64(len(b)), int64(1<<20))
		assert.NotZero(t, b[len(b)-1]|b[len(b)-2]|b[len(b)-3]|b[len(b)-4]|b[len(b)-5]|b[len(b)-6]|b[len(b)-7]|b[len(b)-8],
			"sealed segment %s has no zero tail", segmentName(s))
	}
	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(n+5000), rep.Records)
	assert.Nil(t, rep.Torn)
}

func TestChangedDetectsAppendsRotationsAndOtherProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{SegmentSize: 4096, NoSync: true})
	other := openT(t, dir, &Options{SegmentSize: 4096, NoSync: true})
	changed := func(m Mark) bool {
		t.Helper()
		c, err := Changed(dir, m)
		require.NoError(t, err)
		return c
	}
	assert.True(t, changed(Mark{}), "the zero Mark")
	assert.Equal(t, Mark{}, l.Mark(), "a log never written")
	m := Mark{Segment: segmentName(1), End: fileHeaderSize, Last: 0}
	assert.True(t, changed(m), "no segment yet")

	for i := 0; i < 60; i++ { // several rotations, by either Log
		w := l
		if i%3 == 0 {
			w = other
		}
		_, err := w.Append(ctx, payload(i, 150))
		require.NoError(t, err)
		assert.True(t, changed(m), "append %d after the mark", i)
		// The reader catches up with a scan to the end, then takes a new mark.
		require.NoError(t, l.Scan(ctx, m.Last+1, func(Record) error { return nil }))
		m = l.Mark()
		assert.Equal(t, uint64(i+1), m.Last)
		assert.False(t, changed(m), "after %d", i)
	}
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(segs), 3)

	// A mark at a sealed segment's end sees the rotation.
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var m2 Mark
	require.NoError(t, json.Unmarshal(b, &m2))
	assert.Equal(t, m, m2)
	fill := func() {
		for i := 0; i < 30; i++ {
			_, err := other.Append(ctx, payload(i, 150))
			require.NoError(t, err)
		}
	}
	fill()
	assert.True(t, changed(m2))

	// A write in progress (a partial frame at the mark) counts as a change.
	require.NoError(t, l.Scan(ctx, 1, func(Record) error { return nil }))
	m = l.Mark()
	f, err := os.OpenFile(filepath.Join(dir, m.Segment), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{1, 2, 3}, m.End)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.True(t, changed(m))

	// A log replaced by a shorter one.
	assert.True(t, changed(Mark{Segment: m.Segment, End: 1 << 40, Last: m.Last}))
	assert.True(t, changed(Mark{Segment: segmentName(1 << 40), End: 100, Last: 1 << 40}), "missing segment")
}

// zeroFaultFS fails the next preallocation write (a write of zeros of at
// least a sector) to a segment file.
type zeroFaultFS struct {
	OSFS
	fail error
}

type zeroFaultFile struct {
	File
	fs   *zeroFaultFS
	name string
}

func (z *zeroFaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := z.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &zeroFaultFile{File: f, fs: z, name: name}, nil
}

func (f *zeroFaultFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.fs.fail; err != nil && strings.Contains(filepath.Base(f.name), segmentExt) && len(b) >= sectorSize && allZero(b) {
		f.fs.fail = nil
		n, _ := f.File.WriteAt(b[:len(b)/3], off) // part of the extension landed
		return n, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.File.WriteAt(b, off)
}

// TestIOErrorWhileExtendingPreallocationPoisonsAndLosesNothing: an
// extension that fails for any reason but a full disk (which falls back to
// smaller steps: diskfull_test.go) fails the commit, poisons the writer and
// is truncated back.
func TestIOErrorWhileExtendingPreallocationPoisonsAndLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	zfs := &zeroFaultFS{}
	l, err := Open(ctx, dir, &Options{FS: zfs})
	require.NoError(t, err)
	path := filepath.Join(dir, segmentName(1))
	_, err = l.Append(ctx, payload(-1, 256)) // creates the segment
	require.NoError(t, err)
	acked := [][]byte{payload(-1, 256)}
	zfs.fail = syscall.EIO
	var failErr error
	for i := 0; i < 400 && failErr == nil; i++ {
		d := payload(i, 256)
		if _, err := l.Append(ctx, d); err != nil {
			failErr = err
		} else {
			acked = append(acked, d)
		}
	}
	require.Error(t, failErr)
	assert.Greater(t, len(acked), preallocMin*3/4/300, "the extension is due past three quarters of preallocMin")
	assert.ErrorIs(t, failErr, syscall.EIO)
	assert.ErrorIs(t, failErr, ErrPoisoned)
	assert.Contains(t, failErr.Error(), "extend")
	_, err = l.Append(ctx, []byte("refused"))
	assert.ErrorIs(t, err, ErrPoisoned)
	require.NoError(t, l.Close())
	assert.Equal(t, int64(preallocMin), fileSize(t, path), "the part of the extension that landed was truncated back")

	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Nil(t, rep.Torn, "a clean end")
	l2 := openT(t, dir, nil)
	assert.Equal(t, acked, datas(t, l2), "acknowledged records, and not the failed one")
	assert.Empty(t, l2.Cuts())
	for i := 0; i < 300; i++ {
		_, err := l2.Append(ctx, payload(i, 256))
		require.NoError(t, err)
	}
	_, err = Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.False(t, errors.Is(err, ErrCorrupt))
}

// TestCloseTrimsPreallocationAndOthersCarryOn: a closed log takes only the
// bytes it holds, and another Log of the same directory that still counts
// on the trimmed zeros keeps appending correctly.
func TestCloseTrimsPreallocationAndOthersCarryOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := openT(t, dir, &Options{NoSync: true})
	b := openT(t, dir, &Options{NoSync: true}) // as if another process
	var want [][]byte
	for i := 0; i < 10; i++ {
		d := payload(i, 100)
		_, err := a.Append(ctx, d)
		require.NoError(t, err)
		want = append(want, d)
	}
	path := filepath.Join(dir, segmentName(1))
	require.Greater(t, fileSize(t, path), a.Mark().End, "preallocated while open")
	require.NoError(t, a.Close())
	end := fileSize(t, path)

	for i := 10; i < 20; i++ {
		d := payload(i, 100)
		_, err := b.Append(ctx, d)
		require.NoError(t, err)
		want = append(want, d)
	}
	assert.Greater(t, fileSize(t, path), end)
	require.NoError(t, b.Close())
	assert.Equal(t, fileSize(t, path), b.Mark().End, "closed: trimmed to the data end")

	c := openT(t, dir, &Options{NoSync: true})
	got := readAll(t, c)
	require.Len(t, got, len(want))
	for i, r := range got {
		assert.Equal(t, want[i], r.Data)
	}
	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Nil(t, rep.Torn)
}
