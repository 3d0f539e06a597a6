package helm_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// filler returns n bytes of lines with nothing secret in them.
func filler(n int) string {
	line := "ordinary source text, a line of it; nothing to hide here at all.\n"
	s := strings.Repeat(line, n/len(line)+1)
	return s[:n]
}

// An assignment whose NAME= lies before the redacting writer's first cut
// and whose value runs across it is hidden (with 256 KiB reads, the first
// cut is at 1 MiB + 128 KiB into the text).
func TestAStreamedAssignmentAcrossAChunkBorderIsHidden(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	const cut = 1<<20 + 128<<10
	secret := "DB_PASSWORD=correct-horse-battery-staple"
	pre := filler(cut - 6) // the secret starts 6 bytes before the cut
	text := pre + secret + "\n" + filler(5<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.env"), []byte(text), 0o600))
	m, err := marks.NewFileContents("big.env")
	require.NoError(t, err)
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	data, err := readArtifact(ctx, v, o.Record.Artifact)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(data), "correct-horse-battery-staple"), "the secret is in the store")
}

// The observation Observe hands back (its large text read back from the
// voyage's own store) can be recorded again: its text is read while the
// commit holds the voyage's locks, so reading it must take none of them.
func TestTheReturnedObservationCanBeRecordedAgain(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(filler(5<<20)), 0o600))
	m, err := marks.NewFileContents("big.txt")
	require.NoError(t, err)
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	require.True(t, sighting.HasSources(o.Observation.Sighting))
	done := make(chan error, 1)
	go func() {
		_, err := v.TakeBearing(ctx, "it reads as before", who, &helm.BearingOptions{Observations: []helm.Observation{o.Observation}})
		done <- err
	}()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("TakeBearing with the observation Observe returned did not return in 20s (deadlock)")
	}
}

// The same file stored streamed and stored whole has one address, also
// when it holds a secret and HTML characters (both escape < > &).
func TestStreamedAndWholeGiveTheSameAddress(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := "if a < b && c > d { GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 }\n" + filler(5<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.go"), []byte(text), 0o600))
	m, err := marks.NewFileContents("big.go")
	require.NoError(t, err)
	_, v1 := newVoyage(t, nil)
	streamed, err := v1.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	_, v2 := newVoyage(t, nil)
	whole, err := v2.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir, StreamAbove: -1}})
	require.NoError(t, err)
	a, err := readArtifact(ctx, v1, streamed.Record.Artifact)
	require.NoError(t, err)
	b, err := readArtifact(ctx, v2, whole.Record.Artifact)
	require.NoError(t, err)
	n := min(len(a), len(b), 200)
	t.Logf("streamed: %q\nwhole:    %q", a[:n], b[:n])
	assert.Equal(t, whole.Record.Artifact, streamed.Record.Artifact)
}

// An env value inside an assignment's value: the stream counts (and
// hides) the redactions as String does, so "redactions" and the address
// agree with the whole read.
func TestStreamedRedactionsAreCountedAsWhole(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := "PASSWORD=xx" + "supersecretvalue" + "xx\n" + filler(5<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.env"), []byte(text), 0o600))
	m, err := marks.NewFileContents("big.env")
	require.NoError(t, err)
	opts := &helm.Options{Redaction: helm.Redaction{Environ: []string{"MY_TOKEN=supersecretvalue"}}}
	_, v1 := newVoyage(t, opts)
	streamed, err := v1.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	_, v2 := newVoyage(t, opts)
	whole, err := v2.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir, StreamAbove: -1}})
	require.NoError(t, err)
	a, _ := readArtifact(ctx, v1, streamed.Record.Artifact)
	b, _ := readArtifact(ctx, v2, whole.Record.Artifact)
	t.Logf("streamed head %q tail %q", a[:120], a[len(a)-40:])
	t.Logf("whole    head %q tail %q", b[:120], b[len(b)-40:])
	assert.Equal(t, whole.Record.Artifact, streamed.Record.Artifact)
}

// A large file emptied between Observe and store is stored in Marshal's
// form of an empty text, {"type":"text"}.
func TestALargeFileEmptiedBeforeItIsStoredIsStoredAsEmpty(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(p, []byte(filler(5<<20)), 0o600))
	m, err := marks.NewFileContents("big.txt")
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir, StreamAbove: 4 << 20})
	require.NoError(t, err)
	require.True(t, sighting.HasSources(s))
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	enc, err := sighting.Marshal(s) // Encode, reading the (now empty) file
	require.NoError(t, err)
	back, err := sighting.Unmarshal(enc)
	require.NoError(t, err)
	again, err := sighting.Marshal(back)
	require.NoError(t, err)
	assert.Equal(t, string(again), string(enc))
}

// Many large binary files are recorded as binary, as a whole read records
// them (one binary from its first byte is not streamed at all).
func TestManyLargeBinaryFilesAreRecordedAsBinary(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	var names []string
	for i := range 66 {
		name := filepath.Join(dir, "blob"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)))
		f, err := os.Create(name)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(5<<20)) // sparse: all NUL, binary
		f.Close()
		names = append(names, filepath.Base(name))
	}
	m, err := marks.NewFileContents(names...)
	require.NoError(t, err)
	_, err = v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir, StreamAbove: -1}})
	require.NoError(t, err, "read whole")
	start := time.Now()
	_, err = v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	t.Logf("streamed: %v after %v", err, time.Since(start))
	require.NoError(t, err, "streamed")
}

// A streamed sighting whose bytes the voyage held already as a blob record
// (a large but very compressible file, once read whole) reads its text
// back from the log, also while it is recorded again.
func TestAStreamedSightingHeldAsABlobReadsBack(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, nil)
	dir := t.TempDir()
	text := strings.Repeat("all the same\n", 400_000) // 5.2 MB, compressed to little
	require.NoError(t, os.WriteFile(filepath.Join(dir, "same.log"), []byte(text), 0o600))
	m, err := marks.NewFileContents("same.log")
	require.NoError(t, err)
	whole, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir, StreamAbove: -1}})
	require.NoError(t, err)
	require.NotZero(t, whole.Artifact.Blob, "small enough for the log")
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
	require.NoError(t, err)
	assert.Equal(t, whole.Record.Artifact, o.Record.Artifact, "held")

	done := make(chan error, 1)
	go func() {
		_, err := v.Record(ctx, o.Observation, who)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("recording the observation again hangs")
	}
	r, err := o.Observation.Sighting.(*sighting.Files).Contents[0].Content.Source.OpenText()
	require.NoError(t, err)
	back, err := io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	assert.True(t, text == string(back))
}

// cancelling is a large text whose reading cancels the context part way.
type cancelling struct {
	text   string
	cancel context.CancelFunc
}

func (c cancelling) OpenText() (io.ReadCloser, error) {
	return io.NopCloser(&cancelAfter{r: strings.NewReader(c.text), cancel: c.cancel, after: 2 << 20}), nil
}

type cancelAfter struct {
	r      io.Reader
	cancel context.CancelFunc
	n      int
	after  int
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n += len(p); c.n > c.after {
		c.cancel()
	}
	return c.r.Read(p)
}

// A cancelled context stops the reading of a large file part way, and
// nothing is stored of it.
func TestACancelledObservationOfALargeFileStoresNothing(t *testing.T) {
	_, v := newVoyage(t, nil)
	m, err := marks.NewFileContents("big.go")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &sighting.Files{Contents: []sighting.FileContents{{Path: "big.go",
		Content: sighting.FileContent{Type: sighting.ContentText, Source: cancelling{text: filler(8 << 20), cancel: cancel}}}}}
	_, err = v.Record(ctx, helm.Observation{Mark: m, Sighting: s}, who)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, artifactsOf(t, v))
	assert.Empty(t, v.Slate())
	info, err := os.Stat(filepath.Join(v.Storage().Dir, "artifacts.pack"))
	if err == nil {
		assert.Equal(t, int64(8), info.Size(), "nothing after the pack's header")
	}
}
