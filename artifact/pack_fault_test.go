package artifact

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/segment"
)

// faultFS is the operating system's file system with faults armed one at a
// time: the next matching call fails once. It embeds the seam's interfaces,
// so it keeps compiling when the seam grows a method.
type faultFS struct {
	segment.FS
	mu        sync.Mutex
	failWrite error  // the next WriteAt fails with this ...
	shortBy   int    // ... after writing all but shortBy bytes (0: none written)
	failSync  error  // the next Datasync fails
	failFsync error  // the next Sync (fsync) of fsyncOf fails
	fsyncOf   string // a path; "" means any file or directory
	writes    int    // WriteAt calls that reached the disk
}

type faultFile struct {
	segment.File
	fs   *faultFS
	name string
}

func newFaultFS() *faultFS { return &faultFS{FS: segment.OSFS{}} }

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err, short := f.fs.failWrite, f.fs.shortBy
	f.fs.failWrite = nil
	f.fs.writes++
	f.fs.mu.Unlock()
	if err == nil {
		return f.File.WriteAt(b, off)
	}
	n := 0
	if short > 0 && len(b) > short {
		n, _ = f.File.WriteAt(b[:len(b)-short], off)
	}
	return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
}

func (f *faultFile) Datasync() error {
	f.fs.mu.Lock()
	err := f.fs.failSync
	f.fs.failSync = nil
	f.fs.mu.Unlock()
	if err != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	return f.File.Datasync()
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	err := f.fs.failFsync
	if err != nil && (f.fs.fsyncOf == "" || f.fs.fsyncOf == f.name) {
		f.fs.failFsync = nil
	} else {
		err = nil
	}
	f.fs.mu.Unlock()
	if err != nil {
		return &fs.PathError{Op: "fsync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}

// TestFailedFrameWriteIsTruncatedBack: a frame whose write is short, whose
// fdatasync fails, or that meets a full disk is cut off again, so the pack
// ends where it ended before; the error wraps the cause and names the
// file and offset; the frames before it still load; and the retry is
// written where the failed frame began.
func TestFailedFrameWriteIsTruncatedBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		arm   func(*faultFS)
		cause error
	}{
		{"short write", func(f *faultFS) { f.failWrite, f.shortBy = syscall.EIO, 100 }, syscall.EIO},
		{"disk full mid-frame", func(f *faultFS) { f.failWrite, f.shortBy = syscall.ENOSPC, 4096 }, syscall.ENOSPC},
		{"disk full before the frame", func(f *faultFS) { f.failWrite = syscall.ENOSPC }, syscall.ENOSPC},
		{"quota exceeded", func(f *faultFS) { f.failWrite, f.shortBy = syscall.EDQUOT, 1 }, syscall.EDQUOT},
		{"failed fdatasync", func(f *faultFS) { f.failSync = syscall.EIO }, syscall.EIO},
		{"fdatasync on a full disk", func(f *faultFS) { f.failSync = syscall.ENOSPC }, syscall.ENOSPC},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			ffs := newFaultFS()
			p := NewPack(t.TempDir(), &PackOptions{FS: ffs})
			defer p.Close()
			first := packArtifact(t, rng, 3*InlineMax)
			ref1 := stowT(t, p, first)
			end := fileSizeT(t, p.Path())

			tt.arm(ffs)
			second := packArtifact(t, rng, 3*InlineMax)
			_, err := p.Stow(second)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.cause)
			for _, want := range []string{p.Path(), fmt.Sprintf("offset %d", end), fmt.Sprintf("truncated back to %d bytes", end), "not stored"} {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, end, fileSizeT(t, p.Path()), "no partial frame after the pack's end")

			ref2 := stowT(t, p, second)
			assert.Equal(t, end, ref2.Offset, "the retry is written where the failed frame was")
			for _, c := range []struct {
				ref Ref
				a   *Encoded
			}{{ref1, first}, {ref2, second}} {
				got, err := p.Load(c.ref)
				require.NoError(t, err)
				assert.Equal(t, c.a.Hash, Hash(got))
			}
		})
	}
}

// TestFailedPackCreationLeavesNoHalfHeader: a new pack whose header cannot
// be written, or whose fsync (file or directory) fails, stores nothing,
// and the next Stow makes a whole pack.
func TestFailedPackCreationLeavesNoHalfHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		arm   func(f *faultFS, dir string)
		cause error
	}{
		{"disk full writing the header", func(f *faultFS, _ string) { f.failWrite, f.shortBy = syscall.ENOSPC, 3 }, syscall.ENOSPC},
		{"failed fsync of the new file", func(f *faultFS, dir string) { f.failFsync, f.fsyncOf = syscall.EIO, filepath.Join(dir, PackName) }, syscall.EIO},
		{"failed fsync of its directory", func(f *faultFS, dir string) { f.failFsync, f.fsyncOf = syscall.EIO, dir }, syscall.EIO},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			ffs := newFaultFS()
			dir := t.TempDir()
			p := NewPack(dir, &PackOptions{FS: ffs})
			defer p.Close()
			tt.arm(ffs, dir)
			a := packArtifact(t, rng, 3*InlineMax)
			_, err := p.Stow(a)
			require.ErrorIs(t, err, tt.cause)
			assert.Contains(t, err.Error(), p.Path())
			if fi, err := os.Stat(p.Path()); err == nil {
				assert.Zero(t, fi.Size(), "no header that was never made durable")
			}
			assert.Nil(t, ffs.failFsync, "the armed fault was met")
			ref := stowT(t, p, a)
			assert.Equal(t, int64(len(packMagic)), ref.Offset)
			got, err := p.Load(ref)
			require.NoError(t, err)
			assert.Equal(t, a.Hash, Hash(got))
		})
	}
}

// TestNoSyncSkipsEveryFsync: NoSync, for tests of logic, reaches no fsync
// or fdatasync of the seam.
func TestNoSyncSkipsEveryFsync(t *testing.T) {
	t.Parallel()
	ffs := newFaultFS()
	ffs.failSync, ffs.failFsync = syscall.EIO, syscall.EIO
	p := NewPack(t.TempDir(), &PackOptions{FS: ffs, NoSync: true})
	defer p.Close()
	_, err := p.Stow(packArtifact(t, rand.New(rand.NewPCG(1, 1)), 3*InlineMax))
	require.NoError(t, err)
}
