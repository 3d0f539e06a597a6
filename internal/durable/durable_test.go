package durable

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockExcludesOtherOpensOfTheSameFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "LOCK")
	a, err := OpenLock(path)
	require.NoError(t, err)
	defer a.Close()
	b, err := OpenLock(path)
	require.NoError(t, err)
	defer b.Close()
	r, err := OpenLockReadOnly(path)
	require.NoError(t, err)
	defer r.Close()

	for _, tc := range []struct {
		name       string
		hold       func() (bool, error)
		release    func() error
		tryOther   func() (bool, error)
		otherTakes bool
	}{
		{"exclusive excludes exclusive", a.TryLock, a.Unlock, b.TryLock, false},
		{"exclusive excludes shared", a.TryLock, a.Unlock, r.TryRLock, false},
		{"shared excludes exclusive", r.TryRLock, r.Unlock, a.TryLock, false},
		{"shared admits shared", r.TryRLock, r.Unlock, b.TryRLock, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := tc.hold()
			require.NoError(t, err)
			require.True(t, ok, "a free lock is taken")
			ok, err = tc.tryOther()
			require.NoError(t, err)
			assert.Equal(t, tc.otherTakes, ok)
			if ok {
				require.NoError(t, b.Unlock())
			}
			require.NoError(t, tc.release())
			ok, err = b.TryLock()
			require.NoError(t, err)
			assert.True(t, ok, "released: another open takes it exclusively")
			require.NoError(t, b.Unlock())
		})
	}
}

func TestClosingALockReleasesIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "LOCK")
	a, err := OpenLock(path)
	require.NoError(t, err)
	ok, err := a.TryLock()
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, a.Close())
	b, err := OpenLock(path)
	require.NoError(t, err)
	defer b.Close()
	ok, err = b.TryLock()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, path, b.Name())
}

func TestOpenLockReadOnlyNeedsTheFile(t *testing.T) {
	t.Parallel()
	_, err := OpenLockReadOnly(filepath.Join(t.TempDir(), "LOCK"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestReadFileAt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o600))
	for _, tc := range []struct {
		name string
		size int
		off  int64
		want string
	}{
		{"whole", 10, 0, "0123456789"},
		{"inside", 3, 4, "456"},
		{"past the end", 8, 6, "6789"},
		{"at the end", 4, 10, ""},
		{"beyond the end", 4, 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, tc.size)
			n, err := ReadFileAt(path, b, tc.off)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b[:n]))
		})
	}
	_, err := ReadFileAt(filepath.Join(dir, "missing"), make([]byte, 4), 0)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// syncFS counts the syncs a caller makes through the seam and fails them
// when told to.
type syncFS struct {
	OSFS
	mu    sync.Mutex
	syncs map[string]int
	fail  error
}

type countedFile struct {
	File
	fs   *syncFS
	name string
}

func (s *syncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := s.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, fs: s, name: name}, nil
}

func (f *countedFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.fail != nil {
		return f.fs.fail
	}
	f.fs.syncs[f.name]++
	return f.File.Sync()
}

func TestSyncDirSyncsTheDirectoryThroughTheSeam(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &syncFS{syncs: map[string]int{}}
	require.NoError(t, SyncDir(s, dir))
	assert.Equal(t, map[string]int{dir: 1}, s.syncs)

	s.fail = syscall.EIO
	err := SyncDir(s, dir)
	assert.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), dir)

	err = SyncDir(s, filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestOSFSFileRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	f, err := OSFS{}.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("hello"), 0)
	require.NoError(t, err)
	require.NoError(t, WriteZeros(f, 5, 5+3<<20/2)) // more than one write of zeros
	require.NoError(t, f.Datasync())
	require.NoError(t, f.Sync())
	fi, err := f.Stat()
	require.NoError(t, err)
	assert.Equal(t, int64(5+3<<20/2), fi.Size())
	b := make([]byte, 8)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	assert.Equal(t, []byte("hello\x00\x00\x00"), b)
	require.NoError(t, f.Truncate(5))
	require.NoError(t, f.Close())

	_, err = OSFS{}.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	assert.ErrorIs(t, err, fs.ErrExist)
	// Renaming a file that is open works on every platform (Windows: the
	// seam shares delete access).
	g, err := OSFS{}.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, OSFS{}.Rename(path, path+".new"))
	require.NoError(t, g.Close())
	fi, err = OSFS{}.Stat(path + ".new")
	require.NoError(t, err)
	assert.Equal(t, int64(5), fi.Size())
}

// shortFile writes at most max bytes per call.
type shortFile struct {
	File
	max int
}

func (f shortFile) WriteAt(b []byte, off int64) (int, error) {
	if len(b) > f.max {
		n, _ := f.File.WriteAt(b[:f.max], off)
		return n, nil
	}
	return f.File.WriteAt(b, off)
}

func TestWriteZerosReportsAShortWrite(t *testing.T) {
	t.Parallel()
	f, err := OSFS{}.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	defer f.Close()
	err = WriteZeros(shortFile{File: f, max: 100}, 0, 4096)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "short write (100 of 4096 bytes)")
}

func TestIsNoSpace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{syscall.ENOSPC, true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{syscall.EDQUOT, true},
		{syscall.EIO, false},
		{errors.New("disk full"), false},
		{nil, false},
	} {
		assert.Equal(t, tc.want, IsNoSpace(tc.err), "%v", tc.err)
	}
}

func TestFreeBytesOfATempDir(t *testing.T) {
	t.Parallel()
	free := FreeBytes(t.TempDir())
	t.Logf("free: %d bytes", free)
	assert.True(t, free > 0 || free == -1, "free space or unknown, got %d", free)
	assert.Equal(t, int64(-1), FreeBytes(filepath.Join(t.TempDir(), "missing", "dir")))
}

func TestMkdirAllSyncsTheParentOfEveryDirectoryItCreates(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fsys := &syncFS{syncs: map[string]int{}}
	dir := filepath.Join(root, "a", "b", "c")
	require.NoError(t, MkdirAll(fsys, dir, 0o700))
	assert.DirExists(t, dir)
	assert.Equal(t, map[string]int{root: 1, filepath.Join(root, "a"): 1, filepath.Join(root, "a", "b"): 1}, fsys.syncs,
		"each new directory's entry is made durable in its parent")

	fsys.syncs = map[string]int{}
	require.NoError(t, MkdirAll(fsys, dir, 0o700))
	assert.Empty(t, fsys.syncs, "nothing created, nothing synced")

	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	assert.Error(t, MkdirAll(fsys, filepath.Join(file, "d"), 0o700), "a file in the way")
}

func TestPunchHoleZeroesTheRangeAndKeepsTheSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte{0xAB}, 64<<10)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := OSFS{}.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, PunchHole(f, 100, 40000))
	require.NoError(t, f.Datasync())
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, got, len(data))
	assert.Equal(t, data[:100], got[:100])
	assert.Equal(t, make([]byte, 40000), got[100:40100])
	assert.Equal(t, data[40100:], got[40100:])
}
