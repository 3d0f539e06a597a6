package segment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultFS wraps the OS and fails the next matching call once armed.
type faultFS struct {
	OSFS
	mu        sync.Mutex
	failWrite error // next segment WriteAt fails with this
	shortBy   int   // ... after writing all but shortBy bytes
	failSync  error // next Datasync fails
	failOpen  error // next OpenFile with O_CREATE of a segment fails
}

type faultFile struct {
	File
	fs   *faultFS
	name string
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f.mu.Lock()
	if flag&os.O_CREATE != 0 && strings.HasSuffix(name, ".seg.tmp") && f.failOpen != nil {
		err := f.failOpen
		f.failOpen = nil
		f.mu.Unlock()
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f.mu.Unlock()
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err, short := f.fs.failWrite, f.fs.shortBy
	if strings.Contains(f.name, ".seg") && err != nil {
		f.fs.failWrite = nil
		f.fs.mu.Unlock()
		n := max(len(b)-short, 0)
		if n > 0 {
			n, _ = f.File.WriteAt(b[:n], off)
		}
		return n, err
	}
	f.fs.mu.Unlock()
	return f.File.WriteAt(b, off)
}

func (f *faultFile) Datasync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.fs.failSync; err != nil {
		f.fs.failSync = nil
		return &os.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	return f.File.Datasync()
}

func TestWriteFaultsReachCallerPoisonWriterAndLoseNothingAcknowledged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		arm    func(*faultFS)
		target error
	}{
		{"failed fdatasync", func(f *faultFS) { f.failSync = syscall.EIO }, syscall.EIO},
		{"short write", func(f *faultFS) { f.failWrite, f.shortBy = errors.New("injected short write"), 7 }, nil},
		{"ENOSPC mid-write", func(f *faultFS) { f.failWrite, f.shortBy = syscall.ENOSPC, 100 }, syscall.ENOSPC},
		{"ENOSPC creating a segment", func(f *faultFS) { f.failOpen = syscall.ENOSPC }, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ffs := &faultFS{}
			l, err := Open(ctx, dir, &Options{FS: ffs, SegmentSize: 600})
			require.NoError(t, err)
			var acked [][]byte
			for i := 0; i < 8; i++ {
				d := payload(i, 60)
				_, err := l.Append(ctx, d)
				require.NoError(t, err)
				acked = append(acked, d)
			}
			tc.arm(ffs)
			// Appends until one hits the fault (segment creation needs a rotation).
			var failErr error
			for i := 0; i < 20 && failErr == nil; i++ {
				d := payload(100+i, 60)
				if _, err := l.Append(ctx, d, payload(200+i, 60)); err != nil {
					failErr = err
				} else {
					acked = append(acked, d, payload(200+i, 60))
				}
			}
			require.Error(t, failErr, "the fault must reach the caller")
			assert.ErrorIs(t, failErr, ErrPoisoned)
			if tc.target != nil {
				assert.ErrorIs(t, failErr, tc.target)
			}
			assert.Contains(t, failErr.Error(), dir)

			_, err = l.Append(ctx, []byte("refused"))
			assert.ErrorIs(t, err, ErrPoisoned)
			require.NoError(t, l.Close())

			l2 := openT(t, dir, nil)
			got := datas(t, l2)
			require.GreaterOrEqual(t, len(got), len(acked))
			assert.Equal(t, acked, got[:len(acked)], "acknowledged records survive")
			assert.LessOrEqual(t, len(got), len(acked)+2, "at most the failed batch, whole")
			_, err = l2.Append(ctx, []byte("after reopen"))
			require.NoError(t, err)
			_, err = Verify(ctx, dir, nil)
			require.NoError(t, err)
			if tc.name == "short write" || tc.name == "ENOSPC mid-write" {
				// The writes land in preallocated space: the failing writer
				// zeroes what it wrote of the batch (the page cache is
				// intact after a failed write), so nothing is left to cut
				// and the failed batch is gone.
				assert.Empty(t, l2.Cuts(), "the partial batch was zeroed by the failing writer")
				assert.Len(t, got, len(acked), "the failed batch is not in the log")
			}
			_ = filepath.Join
		})
	}
}
