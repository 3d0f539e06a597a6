package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// diskFS is a disk of capacity bytes under the OS: a write or truncate that
// would grow the files in dir beyond it writes what fits and fails with
// ENOSPC, as a full file system does. It counts bytes, not blocks.
type diskFS struct {
	OSFS
	dir string

	mu       sync.Mutex
	capacity int64
	fault    error   // when set, every write fails with it (after writing nothing)
	zeroEnds []int64 // where each write of zeros would have ended, fitting or not
}

type diskFile struct {
	File
	d    *diskFS
	name string
}

func (d *diskFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := d.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &diskFile{File: f, d: d, name: name}, nil
}

// free returns the bytes the files in dir leave of the capacity.
func (d *diskFS) free(t testing.TB) int64 {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	used, err := d.used()
	require.NoError(t, err)
	return d.capacity - used
}

func (d *diskFS) used() (int64, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return 0, err
	}
	var used int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			used += fi.Size()
		}
	}
	return used, nil
}

func (d *diskFS) setCapacity(c int64) {
	d.mu.Lock()
	d.capacity = c
	d.mu.Unlock()
}

func (f *diskFile) WriteAt(b []byte, off int64) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if allZero(b) {
		f.d.zeroEnds = append(f.d.zeroEnds, off+int64(len(b)))
	}
	if f.d.fault != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: f.d.fault}
	}
	fi, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	used, err := f.d.used()
	if err != nil {
		return 0, err
	}
	free := f.d.capacity - used
	if grow := off + int64(len(b)) - fi.Size(); grow > free {
		n := int(min(max(fi.Size()+free-off, 0), int64(len(b))))
		if n > 0 {
			n, _ = f.File.WriteAt(b[:n], off)
		}
		return n, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

func (f *diskFile) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	fi, err := f.File.Stat()
	if err != nil {
		return err
	}
	used, err := f.d.used()
	if err != nil {
		return err
	}
	if size-fi.Size() > f.d.capacity-used {
		return &os.PathError{Op: "truncate", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.Truncate(size)
}

func unitSize(recs [][]byte) int64 {
	var n int64
	for _, r := range recs {
		n += int64(frameSize(len(r)))
	}
	return n
}

// TestFullDiskFailsACommitOnlyWhenTheUnitItselfDoesNotFit: on a disk that
// fills up, preallocation settles for less room and then for none, so
// commits succeed until the unit's own bytes do not fit. The failed commit
// leaves a clean end: a reopened log holds exactly the acknowledged
// records, and takes more once there is space again.
func TestFullDiskFailsACommitOnlyWhenTheUnitItselfDoesNotFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		capacity    int64
		segmentSize int64
		unit        func(r *rand.Rand, i int) [][]byte
	}{
		{"records of 200 bytes", 40 << 10, 0, func(_ *rand.Rand, i int) [][]byte {
			return [][]byte{payload(i, 200)}
		}},
		{"records of 1 to 5000 bytes", 300 << 10, 0, func(r *rand.Rand, i int) [][]byte {
			return [][]byte{payload(i, 1+r.IntN(5000))}
		}},
		{"batches of up to eight records", 200 << 10, 0, func(r *rand.Rand, i int) [][]byte {
			recs := make([][]byte, 1+r.IntN(8))
			for j := range recs {
				recs[j] = payload(i*8+j, 1+r.IntN(1500))
			}
			return recs
		}},
		{"rotating segments of 8 KiB", 50 << 10, 8 << 10, func(r *rand.Rand, i int) [][]byte {
			return [][]byte{payload(i, 100+r.IntN(600))}
		}},
		{"a disk smaller than the first preallocation", 6 << 10, 0, func(_ *rand.Rand, i int) [][]byte {
			return [][]byte{payload(i, 100)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			disk := &diskFS{dir: dir, capacity: tt.capacity}
			opts := &Options{FS: disk, SegmentSize: tt.segmentSize}
			l, err := Open(ctx, dir, opts)
			require.NoError(t, err, "a new log opens on a disk too small for its first preallocation")
			r := rand.New(rand.NewPCG(1, 2))
			var acked [][]byte
			var failed [][]byte
			var failErr error
			for i := 0; failErr == nil; i++ {
				require.Less(t, i, 100000, "the disk never filled")
				recs := tt.unit(r, i)
				if _, err := l.Append(ctx, recs...); err != nil {
					failed, failErr = recs, err
				} else {
					acked = append(acked, recs...)
				}
			}
			require.NotEmpty(t, acked)
			free := disk.free(t)
			t.Logf("%d records acknowledged; the failed unit needed %d bytes, %d of %d were free", len(acked), unitSize(failed), free, tt.capacity)
			assert.Less(t, free, unitSize(failed), "the commit failed although its unit fitted")
			assert.ErrorIs(t, failErr, syscall.ENOSPC)
			assert.ErrorIs(t, failErr, ErrPoisoned)
			assert.Contains(t, failErr.Error(), "free disk space")
			_, err = l.Append(ctx, []byte("refused"))
			assert.ErrorIs(t, err, ErrPoisoned)
			require.NoError(t, l.Close())

			rep, err := Verify(ctx, dir, nil)
			require.NoError(t, err)
			assert.Nil(t, rep.Torn, "the failed commit left a clean end")
			l2, err := Open(ctx, dir, opts)
			require.NoError(t, err)
			assert.Empty(t, l2.Cuts())
			assert.Equal(t, acked, datas(t, l2), "the acknowledged records, and not the failed unit")
			_, err = l2.Append(ctx, failed...)
			assert.ErrorIs(t, err, syscall.ENOSPC, "still full")
			require.NoError(t, l2.Close())

			disk.setCapacity(2*tt.capacity + 256<<10) // space freed elsewhere
			l3 := openT(t, dir, opts)
			want := append(acked, failed...)
			_, err = l3.Append(ctx, failed...)
			require.NoError(t, err)
			for i := 0; i < 20; i++ {
				recs := tt.unit(r, 100000+i)
				_, err := l3.Append(ctx, recs...)
				require.NoError(t, err)
				want = append(want, recs...)
			}
			assert.Equal(t, want, datas(t, l3))
			rep, err = Verify(ctx, dir, nil)
			require.NoError(t, err)
			assert.Nil(t, rep.Torn)
		})
	}
}

// TestExtendFallsBackToSmallerStepsDownToTheUnit drives extend on a file of
// 16 KiB with the room a full disk leaves.
func TestExtendFallsBackToSmallerStepsDownToTheUnit(t *testing.T) {
	t.Parallel()
	const from = 16 << 10
	tests := []struct {
		name         string
		need, target int64
		free         int64
		fault        error
		want         int64 // size afterwards
		wantErr      error
		tries        int // writes of zeros: halving the room after the unit, then none
	}{
		{"room for the target", from + 100, from + 32<<10, 1 << 20, nil, from + 32<<10, nil, 1},
		{"room for half of it", from + 100, from + 32<<10, 20 << 10, nil, from + 100 + (32<<10-100)/2, nil, 2},
		{"room for the unit and a little", from + 100, from + 1<<20, 5000, nil, from + 100, nil, 9},
		{"room for exactly the unit", from + 4000, from + 1<<20, 4000, nil, from + 4000, nil, 9},
		{"no room for the unit", from + 4001, from + 1<<20, 4000, nil, from, syscall.ENOSPC, 9},
		{"the unit fits already, no room after it", from - 10, from + 1<<20, 0, nil, from, nil, 9},
		{"a new segment on a full disk", fileHeaderSize, preallocMin, 0, nil, fileHeaderSize, nil, 2},
		{"an I/O error is not retried", from + 100, from + 32<<10, 1 << 20, syscall.EIO, from, syscall.EIO, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			size := int64(from)
			if tt.need == fileHeaderSize {
				size = fileHeaderSize
			}
			disk := &diskFS{dir: dir, capacity: size + tt.free}
			f, err := disk.OpenFile(filepath.Join(dir, "f"+segmentExt), os.O_CREATE|os.O_RDWR, 0o600)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, f.Truncate(size))
			disk.zeroEnds, disk.fault = nil, tt.fault

			got, err := extend(f, size, tt.need, tt.target)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
			fi, err := f.Stat()
			require.NoError(t, err)
			assert.Equal(t, tt.want, fi.Size(), "the file has the size extend returned")
			assert.Len(t, disk.zeroEnds, tt.tries, "tried to end at %v", disk.zeroEnds)
			for i := 1; i < len(disk.zeroEnds); i++ {
				assert.Less(t, disk.zeroEnds[i], disk.zeroEnds[i-1], "every retry asks for less")
			}
			b, err := os.ReadFile(filepath.Join(dir, "f"+segmentExt))
			require.NoError(t, err)
			assert.True(t, allZero(b), "zeros only")
		})
	}
}

func TestShareTargetLeavesTheDiskToOthersButNeverStarvesTheUnit(t *testing.T) {
	t.Parallel()
	const m = 1 << 20
	tests := []struct {
		name                     string
		target, alloc, end, free int64
		want                     int64
	}{
		{"free space unknown", 2 * m, m, m - 100, -1, 2 * m},
		{"plenty of space", 2 * m, m, m - 100, 1 << 40, 2 * m},
		{"a thirty-second of the free space after the unit", 2 * m, m, m - 100, 3200<<10 - 100, m - 100 + 100<<10},
		{"a quarter of that left: no extension yet", 2 * m, m, m - 25<<10, 3200<<10 - 25<<10, m},
		{"less than a quarter left: extend", 2 * m, m, m - 25<<10 + 8, 3200<<10 - 25<<10 + 8, m - 25<<10 + 8 + 100<<10},
		{"never below the unit", 2 * m, m, m + 5000, 32 << 10, m + 5000 + 1<<10},
		{"nothing left: no extension", 2 * m, m, m - 100, 0, m},
		{"a new segment on a nearly full disk", preallocMin, fileHeaderSize, fileHeaderSize, 64 << 10, fileHeaderSize + 2<<10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shareTarget(tt.target, tt.alloc, tt.end, tt.free))
		})
	}
}
