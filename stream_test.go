package helm_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// writeSource writes n bytes of source-like text to path, with a secret
// on one line in the middle, and returns the text.
func writeSource(t *testing.T, path string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i == 5000 {
			b.WriteString("GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n")
		}
		fmt.Fprintf(&b, "func f%d(v *Voyage) error { return v.Observe(%q) } // <line %d>\n", i, "mark", i*7)
	}
	text := b.String()[:n]
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return text
}

// TestLargeFilesAreStoredAsStreams: a file-contents sighting of a large
// file is redacted, hashed and compressed as the file is read, and reads
// back as the sighting it would have been, secrets hidden.
func TestLargeFilesAreStoredAsStreams(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	dir := t.TempDir()
	text := writeSource(t, filepath.Join(dir, "big.go"), 5<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.go"), []byte("package small\n"), 0o600))
	m, err := marks.NewFileContents("big.go", "small.go")
	require.NoError(t, err)
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	assert.Zero(t, o.Artifact.Blob, "in the pack")

	// What was stored is what reading the files whole and redacting them
	// gives.
	whole, err := m.Observe(ctx, &marks.Env{Dir: dir, StreamAbove: -1})
	require.NoError(t, err)
	wholeText := whole.(*sighting.Files).Contents[0].Content.Text
	require.Equal(t, text, wholeText)
	stored, err := readSighting(ctx, v, o.Record.Artifact)
	require.NoError(t, err)
	got := stored.(*sighting.Files)
	assert.NotContains(t, got.Contents[0].Content.Text, "ghp_0123456789")
	assert.Equal(t, strings.Replace(text, "ghp_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED:github-token]", 1), got.Contents[0].Content.Text)
	assert.Equal(t, uint64(len(text)), got.Contents[0].Content.SizeBytes)
	assert.Equal(t, sighting.TextContent("package small\n"), got.Contents[1].Content)
	data, err := readArtifact(ctx, v, o.Record.Artifact)
	require.NoError(t, err)
	assert.Contains(t, string(data), `,"redactions":1}`)

	// The observation handed back reads its text from the store.
	src := o.Observation.Sighting.(*sighting.Files).Contents[0].Content
	require.NotNil(t, src.Source)
	assert.Equal(t, uint64(len(text)), src.SizeBytes)
	r, err := src.Source.OpenText()
	require.NoError(t, err)
	back, err := io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	assert.True(t, got.Contents[0].Content.Text == string(back))
	var file bytes.Buffer
	require.NoError(t, o.Observation.WriteJSON(&file))
	var again helm.Observation
	require.NoError(t, again.UnmarshalJSON(file.Bytes()))
	assert.Equal(t, got, again.Sighting, "an observation file of it holds the stored sighting")

	// Streamed out, it is the same bytes.
	rc, err := v.OpenArtifact(ctx, o.Record.Artifact[:8])
	require.NoError(t, err)
	streamed, err := io.ReadAll(rc)
	require.NoError(t, err)
	rc.Close()
	assert.True(t, bytes.Equal(data, streamed))

	// The same file again is held: the pack does not grow.
	pack := filepath.Join(v.Storage().Dir, "artifacts.pack")
	before, err := os.Stat(pack)
	require.NoError(t, err)
	o2, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	assert.Equal(t, o.Record.Artifact, o2.Record.Artifact)
	after, err := os.Stat(pack)
	require.NoError(t, err)
	assert.Equal(t, before.Size(), after.Size())
	assert.Len(t, artifactsOf(t, v), 1)

	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

// TestALargeFileThatIsNotTextIsStoredAsWhatItIs: a large file that turns
// out to be binary past its first megabytes is recorded as binary, with
// its size, as reading it whole would have.
func TestALargeFileThatIsNotTextIsStoredAsWhatItIs(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	text := writeSource(t, filepath.Join(dir, "x"), 6<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), append([]byte(text), 0, 1, 2), 0o600))
	m, err := marks.NewFileContents("x")
	require.NoError(t, err)
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	want := sighting.BinaryContent(uint64(len(text) + 3))
	assert.Equal(t, want, o.Observation.Sighting.(*sighting.Files).Contents[0].Content)
	s, err := readSighting(ctx, v, o.Record.Artifact)
	require.NoError(t, err)
	assert.Equal(t, want, s.(*sighting.Files).Contents[0].Content)
	assert.Zero(t, o.Artifact.Blob, "a streamed sighting goes to the pack, even a small one")
	info, err := os.Stat(filepath.Join(v.Storage().Dir, "artifacts.pack"))
	require.NoError(t, err)
	assert.Equal(t, 8+40+o.Artifact.StoredSize, info.Size(), "nothing of the attempt is left in the pack")
}

// peakHeap observes m in v and returns the largest heap in use sampled
// while it ran.
func peakHeap(t *testing.T, v *helm.Voyage, m marks.Mark, dir string) uint64 {
	t.Helper()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	_, err := v.Observe(context.Background(), m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	close(done)
	wg.Wait()
	require.NoError(t, err)
	return peak - min(peak, base.HeapInuse)
}

// TestStreamingMemoryDoesNotGrowWithTheFile: storing a 64 MB file takes
// no more heap than storing a 16 MB one, and both far less than the file.
func TestStreamingMemoryDoesNotGrowWithTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB")
	}
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	peaks := map[int]uint64{}
	for _, mb := range []int{16, 64} {
		name := fmt.Sprintf("f%d", mb)
		writeSource(t, filepath.Join(dir, name), mb<<20)
		m, err := marks.NewFileContents(name)
		require.NoError(t, err)
		peaks[mb] = peakHeap(t, v, m, dir)
		t.Logf("%d MB file: %.1f MB of heap at most", mb, float64(peaks[mb])/(1<<20))
	}
	assert.Less(t, peaks[64], uint64(48<<20), "far less than the 64 MB file")
	assert.Less(t, peaks[64], peaks[16]+8<<20, "no more for 64 MB than for 16 MB, give or take a buffer")
}

// BenchmarkObserveLargeFile stores a 64 MB file as a stream; b.SetBytes
// makes the figure MB/s of source.
func BenchmarkObserveLargeFile(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<20; i++ {
		fmt.Fprintf(&sb, "func f%d(v *Voyage) error { return v.Observe(%q) } // <line %d>\n", i, "mark", i*7)
	}
	require.NoError(b, os.WriteFile(filepath.Join(dir, "big.go"), []byte(sb.String()), 0o600))
	h, err := helm.Open(b.TempDir(), nil)
	require.NoError(b, err)
	m, err := marks.NewFileContents("big.go")
	require.NoError(b, err)
	b.SetBytes(64 << 20)
	for i := 0; b.Loop(); i++ {
		v, err := h.Start(context.Background(), fmt.Sprint("large ", i), helm.ResolveIssue, who, nil)
		require.NoError(b, err)
		_, err = v.Observe(context.Background(), m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
		require.NoError(b, err)
		v.Close()
	}
}
