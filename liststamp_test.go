package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/homeindex"
)

// The stamps a list compares (stampDir, by a path relative to the
// voyages' directory) are the stamps a writer recorded (stampFile, by the
// whole path): were they taken differently, no voyage would ever be
// vouched for, or a change would go unseen.
func TestStampDirTakesTheStampsStampFileTakes(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "v", "events")
	require.NoError(t, os.MkdirAll(events, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(events, "WATERMARK"), []byte("watermark"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(events, "empty"), nil, 0o600))
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink("WATERMARK", filepath.Join(events, "link")))
	}
	sd, err := openStampDir(dir)
	require.NoError(t, err)
	defer sd.close()
	tests := []struct {
		name, rel string
		exists    bool
	}{
		{name: "a file", rel: "v/events/WATERMARK", exists: true},
		{name: "an empty file", rel: "v/events/empty", exists: true},
		{name: "the directory, named with its slash", rel: "v/events/", exists: true},
		{name: "a symbolic link, not followed", rel: "v/events/link", exists: runtime.GOOS != "windows"},
		{name: "a file that is not there", rel: "v/events/0001.seg"},
		{name: "a directory that is not there", rel: "w/events/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sd.stamp(append([]byte(tt.rel), 0))
			want, wantOK := stampFile(filepath.Join(dir, filepath.FromSlash(tt.rel)))
			require.Equal(t, tt.exists, wantOK)
			assert.Equal(t, wantOK, ok)
			assert.Equal(t, want, got)
			if tt.exists && runtime.GOOS == "linux" {
				assert.NotZero(t, got.ino)
				assert.NotZero(t, got.ctime)
			}
		})
	}
}

// A relative path is passed to the kernel as the caller's bytes, which
// end in the NUL the kernel stops at: without it, nothing is stamped
// (the kernel would read past the name).
func TestStampDirStampsNothingForAPathWithoutItsNUL(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "WATERMARK"), nil, 0o600))
	sd, err := openStampDir(dir)
	require.NoError(t, err)
	defer sd.close()
	_, ok := sd.stamp([]byte("WATERMARK"))
	assert.False(t, ok)
	_, ok = sd.stamp(nil)
	assert.False(t, ok)
	_, ok = sd.stamp([]byte("WATERMARK\x00"))
	assert.True(t, ok, "the same name, with its NUL")
}

// A print whose file name holds a NUL vouches for nothing: the kernel
// would stamp the name up to it, another file than the print names.
func TestAPrintNamingAFileWithANULVouchesForNothing(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "v", "events")
	require.NoError(t, os.MkdirAll(events, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(events, "WATERMARK"), []byte("w"), 0o600))
	sd, err := openStampDir(dir)
	require.NoError(t, err)
	defer sd.close()
	fp, ok := fingerprintOf(t, events, "WATERMARK", "")
	require.True(t, ok)
	rel := []byte("v/events/")
	require.True(t, fp.holds(sd, &rel), "the honest print holds")
	assert.Equal(t, "v/events/", string(rel), "holds leaves the caller's prefix as it was")

	fp.stamps[0].name = "WATERMARK\x00forged"
	assert.False(t, fp.holds(sd, &rel))
}

// fingerprintOf stamps the named files of the log in dir, as fingerprint
// does for WATERMARK, the last segment and the directory ("").
func fingerprintOf(t *testing.T, dir string, names ...string) (logPrint, bool) {
	t.Helper()
	var fp logPrint
	for _, name := range names {
		st, ok := stampFile(filepath.Join(dir, name))
		if !ok {
			return logPrint{}, false
		}
		fp.stamps = append(fp.stamps, namedStamp{name: name, fileStamp: st})
	}
	return fp, true
}

// eachDirEntry names every entry os.ReadDir names, with the same kind,
// over more entries than one read of the directory returns.
func TestEachDirEntryNamesWhatReadDirNames(t *testing.T) {
	dir := t.TempDir()
	for i := range 5000 { // ~50 bytes each: several reads of 256 KiB
		name := filepath.Join(dir, fmt.Sprintf("%036d", i))
		if i%3 == 0 {
			require.NoError(t, os.WriteFile(name, nil, 0o600))
		} else {
			require.NoError(t, os.Mkdir(name, 0o700))
		}
	}
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(filepath.Join(dir, fmt.Sprintf("%036d", 1)), filepath.Join(dir, "link to a directory")))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var want, got []string
	for _, e := range entries {
		want = append(want, fmt.Sprint(e.Name(), " ", e.IsDir()))
	}
	require.NoError(t, eachDirEntry(dir, func(name []byte, isDir bool) {
		got = append(got, fmt.Sprint(string(name), " ", isDir))
	}))
	slices.Sort(got)
	assert.Equal(t, want, got)

	err = eachDirEntry(filepath.Join(dir, "not there"), func([]byte, bool) { t.Error("an entry of nothing") })
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// What else is in the voyages' directory is not a voyage: a directory
// whose name is not a voyage id, a file named like one, and a voyage
// id the index names whose directory is a file. A voyage the index does
// not name (its writer could not record it) is listed, read itself.
func TestListListsTheVoyageDirectoriesAndNothingElseThere(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	var ids []string
	for i := range 3 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		ids = append(ids, v.ID())
		require.NoError(t, v.Close())
	}
	// The index forgets the last voyage: it lists from its own files.
	views, err := homeindex.Read(filepath.Join(h.dir, homeindex.Name))
	require.NoError(t, err)
	delete(views, ids[2])
	require.NoError(t, os.Remove(filepath.Join(h.dir, homeindex.Name)))
	for id, view := range views {
		recordView(t, h, id, 1, view)
	}
	require.NotContains(t, h.indexedViews(), ids[2])

	require.NoError(t, os.Mkdir(filepath.Join(h.voyagesDir(), "notes"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.voyagesDir(), uuid.NewString()), nil, 0o600))
	stray := uuid.NewString()
	require.NoError(t, os.WriteFile(filepath.Join(h.voyagesDir(), stray), nil, 0o600))
	recordView(t, h, stray, 1, []byte{viewVersion})

	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	var got []string
	for _, info := range list {
		got = append(got, info.ID)
	}
	assert.ElementsMatch(t, ids, got)
	assert.Equal(t, listWithoutIndex(t, h), list)
}
