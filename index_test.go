package helm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

var indexWho = logbook.Who{Identity: "index-agent", Role: "coder", Method: "human"}

// listWithoutIndex lists a copy of home h with no index: every voyage
// read from its own files, as before the index.
func listWithoutIndex(t *testing.T, h *Home) []VoyageInfo {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(h.dir)))
	os.Remove(filepath.Join(dir, homeindex.Name))
	copyHome, err := Open(dir, nil)
	require.NoError(t, err)
	list, err := copyHome.List(context.Background(), nil)
	require.NoError(t, err)
	return list
}

func observeNote(t *testing.T, v *Voyage, text string) {
	t.Helper()
	m, err := marks.NewContext(text)
	require.NoError(t, err)
	_, err = v.Observe(context.Background(), m, indexWho, nil)
	require.NoError(t, err)
}

// List takes from the index the voyages whose writers all closed them,
// reads the others (a writer at work, a voyage changed behind helm's back)
// itself, and lists exactly what reading every voyage lists.
func TestListFromTheIndexIsListFromTheVoyages(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	var ids []string
	for i := range 4 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		observeNote(t, v, fmt.Sprint("note ", i))
		if i == 1 {
			require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", indexWho))
		}
		ids = append(ids, v.ID())
		require.NoError(t, v.Close())
	}
	indexed := h.indexedViews()
	assert.Len(t, indexed, 4, "every voyage closed by its writers")

	// A writer at work: its voyage is read, and shows its latest event.
	open, err := h.Voyage(ctx, ids[2])
	require.NoError(t, err)
	observeNote(t, open, "while the list runs")
	assert.NotContains(t, h.indexedViews(), ids[2], "a writer at work")
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, listWithoutIndex(t, h), list)
	for _, info := range list {
		if info.ID == ids[2] {
			assert.Equal(t, open.Info().Seq, info.Seq)
		}
	}
	require.NoError(t, open.Close())
	assert.Contains(t, h.indexedViews(), ids[2], "closed again")

	// Changed behind helm's back: a stamp no longer holds.
	wm := filepath.Join(h.voyagesDir(), ids[3], "events", "WATERMARK")
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(wm, later, later))
	assert.NotContains(t, h.indexedViews(), ids[3])

	list, err = h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, listWithoutIndex(t, h), list)
	assert.Len(t, list, 4)
}

// A damaged index is not trusted (List reads every voyage, and lists what
// it did); a torn last record is rebuilt by the next writer.
func TestDamagedIndexIsIgnoredAndRebuilt(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	for i := range 3 {
		v, err := h.Start(ctx, fmt.Sprint("voyage ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		observeNote(t, v, "a note")
		require.NoError(t, v.Close())
	}
	want, err := h.List(ctx, nil)
	require.NoError(t, err)
	path := filepath.Join(h.dir, homeindex.Name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)

	// A flipped byte in the middle: nothing in the index is trusted.
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x40
	require.NoError(t, os.WriteFile(path, flipped, 0o600))
	assert.Nil(t, h.indexedViews())
	got, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// A torn last record (a crash mid-append): the next writer rebuilds
	// the index from the voyages before it records itself.
	require.NoError(t, os.WriteFile(path, data[:len(data)-5], 0o600))
	assert.Nil(t, h.indexedViews())
	v, err := h.Start(ctx, "after the tear", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	assert.Len(t, h.indexedViews(), 4, "rebuilt, and the new voyage recorded")
	got, err = h.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, listWithoutIndex(t, h), got)
}

// TestHelperProcessIndexWriter is not a test: TestIndexAfterKill9 runs the
// test binary again with HELM_INDEX_HOME set, and it then writes voyages
// until it is killed.
func TestHelperProcessIndexWriter(t *testing.T) {
	home := os.Getenv("HELM_INDEX_HOME")
	if home == "" {
		t.Skip("runs only as a child of TestIndexAfterKill9")
	}
	ctx := context.Background()
	h, err := Open(home, nil)
	require.NoError(t, err)
	for i := 0; ; i++ {
		v, err := h.Start(ctx, fmt.Sprint("killed writer ", i), OpenWaters, indexWho, nil)
		require.NoError(t, err)
		for j := range 3 {
			observeNote(t, v, fmt.Sprint("note ", i, j))
		}
		require.NoError(t, v.Close())
		fmt.Println("round", i)
	}
}

// A writer killed (SIGKILL) at random moments, over and over: after each
// kill, List lists exactly what reading every voyage lists.
func TestIndexAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	home := t.TempDir()
	h, err := Open(home, nil)
	require.NoError(t, err)
	for k := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessIndexWriter$")
		cmd.Env = append(os.Environ(), "HELM_INDEX_HOME="+home)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(30+17*k) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		cmd.Wait()
		got, err := h.List(context.Background(), nil)
		require.NoError(t, err, "kill %d", k)
		assert.Equal(t, listWithoutIndex(t, h), got, "kill %d", k)
	}
}
