package searchindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTermsLowerCaseRunsOfLettersAndDigits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"words and punctuation", "Hello, World! x=42", []string{"hello", "world", "x", "42"}},
		{"unicode letters", "Über naïve café", []string{"über", "naïve", "café"}},
		{"a run too long is no term", "ok " + string(bytes.Repeat([]byte("a"), MaxTermLen+1)) + " fine", []string{"ok", "fine"}},
		{"a run exactly long enough is a term", string(bytes.Repeat([]byte("b"), MaxTermLen)), []string{string(bytes.Repeat([]byte("b"), MaxTermLen))}},
		{"nothing", " \n\t--", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			Terms(tt.in, func(b []byte) { got = append(got, string(b)) })
			assert.Equal(t, tt.want, got)
		})
	}
}

func build(t testing.TB, voyages map[string][]string) *Builder {
	b := NewBuilder()
	ids := make([]string, 0, len(voyages))
	for id := range voyages {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b.Cover(id, uint64(len(voyages[id])))
		for i, text := range voyages[id] {
			kind, art := KindArtifact, fmt.Sprintf("%s-a%d", id, i)
			if i == 0 {
				kind, art = KindEntries, ""
			}
			b.Text(b.Doc(id, kind, art), text)
		}
	}
	return b
}

func encode(t testing.TB, b *Builder) []byte {
	var buf bytes.Buffer
	_, err := b.Encode(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func TestSegmentRoundTripFindsDocumentsByTerm(t *testing.T) {
	t.Parallel()
	data := encode(t, build(t, map[string][]string{
		"v1": {"fixed the widget", "panic: nil pointer in widget.go"},
		"v2": {"reviewed", "all tests pass", "nil check added"},
	}))
	s, err := Decode(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	assert.Equal(t, []Covered{{"v1", 2}, {"v2", 3}}, s.Voyages())
	p, err := s.Postings("nil")
	require.NoError(t, err)
	require.Len(t, p, 2)
	d0, err := s.Doc(p[0])
	require.NoError(t, err)
	d1, err := s.Doc(p[1])
	require.NoError(t, err)
	assert.Equal(t, Doc{Voyage: "v1", Kind: KindArtifact, Artifact: "v1-a1"}, d0)
	assert.Equal(t, Doc{Voyage: "v2", Kind: KindArtifact, Artifact: "v2-a2"}, d1)
	none, err := s.Postings("absent")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestDecodeRefusesEveryFlippedByteOfTheCheckedSections(t *testing.T) {
	t.Parallel()
	data := encode(t, build(t, map[string][]string{"v1": {"alpha beta", "gamma"}}))
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		s, err := Decode(bytes.NewReader(bad), int64(len(bad)))
		if err != nil {
			assert.ErrorIs(t, err, ErrMalformed, "byte %d", i)
			continue
		}
		// The footer and voyages are checked at open; a flip elsewhere
		// shows when the entry or postings it hit are read: every byte of a
		// segment is read by looking up its terms.
		var errs int
		for _, w := range []string{"alpha", "beta", "gamma"} {
			p, err := s.Postings(w)
			if err != nil {
				assert.ErrorIs(t, err, ErrMalformed)
				errs++
				continue
			}
			for _, d := range p {
				if _, err := s.Doc(d); err != nil {
					assert.ErrorIs(t, err, ErrMalformed)
					errs++
				}
			}
		}
		assert.Positive(t, errs, "flipping byte %d of %d went unnoticed", i, len(data))
	}
}

func TestWriteThenOpenNewestSegmentOwnsAVoyage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), Dir)
	require.NoError(t, Write(ctx, dir, build(t, map[string][]string{"v1": {"entries", "secret plans"}, "v2": {"notes", "secret too"}}), WriteOptions{NoSync: true}))
	// v1 re-indexed without its artifact (jettisoned): the older
	// segment's posting of v1 no longer counts.
	require.NoError(t, Write(ctx, dir, build(t, map[string][]string{"v1": {"entries", "other"}}), WriteOptions{NoSync: true}))
	ix, err := Open(dir)
	require.NoError(t, err)
	defer ix.Close()
	docs, more, err := ix.Find(ctx, []string{"secret"}, 0)
	require.NoError(t, err)
	assert.False(t, more)
	assert.Equal(t, []Doc{{Voyage: "v2", Kind: KindArtifact, Artifact: "v2-a1"}}, docs)
	seq, ok := ix.Covers("v1")
	assert.True(t, ok)
	assert.Equal(t, uint64(2), seq)

	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), e.Name())
	}
}

func TestMergeKeepsWhatEachVoyageOwns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	last := map[string]int{} // voyage -> the write that indexed it last
	for i := range 5 * maxSegments {
		// Writes of one voyage and of several, of different sizes.
		voyages := map[string][]string{}
		for k := range 1 + i%3 {
			v := fmt.Sprintf("v%d", (i*7+k*3)%6)
			voyages[v] = []string{"entries", fmt.Sprintf("word%d common %s", i, strings.Repeat("pad ", i%5*50))}
			last[v] = i
		}
		require.NoError(t, Write(ctx, dir, build(t, voyages), WriteOptions{NoSync: true}))
		names, _, err := readManifest(dir)
		require.NoError(t, err)
		require.LessOrEqual(t, len(names), maxSegments)
	}
	names, _, err := readManifest(dir)
	require.NoError(t, err)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, len(names)+2, "no orphan segments: the manifest, the lock and the segments")

	ix, err := Open(dir)
	require.NoError(t, err)
	defer ix.Close()
	docs, _, err := ix.Find(ctx, []string{"common"}, 0)
	require.NoError(t, err)
	var got []string
	for _, d := range docs {
		got = append(got, d.Voyage)
	}
	slices.Sort(got)
	assert.Equal(t, []string{"v0", "v1", "v2", "v3", "v4", "v5"}, got, "each voyage once: its owner's document")
	for i := range 5 * maxSegments {
		docs, _, err := ix.Find(ctx, []string{fmt.Sprintf("word%d", i)}, 0)
		require.NoError(t, err)
		var want []string
		for v, w := range last {
			if w == i {
				want = append(want, v)
			}
		}
		var gotV []string
		for _, d := range docs {
			gotV = append(gotV, d.Voyage)
		}
		assert.ElementsMatch(t, want, gotV, "word%d", i)
	}
}

func TestOpenMalformedManifestIsAnError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest string
	}{
		{"bad checksum", manifestHeader + "\n00000001.seg 10\ncrc 0\n"},
		{"no checksum", manifestHeader + "\n"},
		{"a path out of the directory", func() string {
			b := manifestHeader + "\n../../x.seg 10\n"
			return b + "crc " + fmt.Sprintf("%x", checksum([]byte(b))) + "\n"
		}()},
		{"a missing segment", func() string {
			b := manifestHeader + "\n00000009.seg 10\n"
			return b + "crc " + fmt.Sprintf("%x", checksum([]byte(b))) + "\n"
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestName), []byte(tt.manifest), 0o600))
			_, err := Open(dir)
			assert.ErrorIs(t, err, ErrMalformed)
		})
	}
}

func TestOpenWithoutIndexVouchesForNothing(t *testing.T) {
	t.Parallel()
	ix, err := Open(filepath.Join(t.TempDir(), "none"))
	require.NoError(t, err)
	_, ok := ix.Covers("v1")
	assert.False(t, ok)
	assert.Zero(t, ix.Voyages())
}

func FuzzDecodeSegment(f *testing.F) {
	f.Add(encode(f, build(f, map[string][]string{"v1": {"alpha beta", "gamma"}, "v2": {"beta"}})))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, w := range []string{"alpha", "beta", "gamma", "v1", ""} {
			p, err := s.Postings(w)
			if err != nil {
				continue
			}
			for _, d := range p {
				if doc, err := s.Doc(d); err == nil {
					assert.Contains(t, []Kind{KindEntries, KindArtifact}, doc.Kind)
				}
			}
		}
		_ = s.terms(func(string, []uint32) error { return nil })
	})
}

func BenchmarkBuilderText(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.07, 2, 199_999)
	var sb strings.Builder
	for sb.Len() < 4<<20 {
		fmt.Fprintf(&sb, "w%x ", z.Uint64())
	}
	text := sb.String()
	const doc = 20 << 10
	b.SetBytes(int64(len(text)))
	bl := NewBuilder()
	for i := 0; b.Loop(); i++ {
		for off := 0; off < len(text); off += doc {
			bl.Text(bl.Doc("v", KindArtifact, fmt.Sprint(i, off)), text[off:min(off+doc, len(text))])
		}
	}
}

// BenchmarkOpenFind100kVoyages: what one helm search pays in the index
// over 100k voyages (small documents: the per-voyage costs).
func BenchmarkOpenFind100kVoyages(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	for part := range 4 {
		bl := NewBuilder()
		for i := part * 25_000; i < (part+1)*25_000; i++ {
			id := fmt.Sprintf("a3b0fc12-0000-4000-8000-%012d", i)
			bl.Cover(id, 9)
			bl.Text(bl.Doc(id, KindEntries, ""), fmt.Sprintf("common words of voyage %d", i))
			bl.Text(bl.Doc(id, KindArtifact, fmt.Sprintf("%064x", i)), fmt.Sprintf("file text common rare%d", i))
		}
		require.NoError(b, Write(ctx, dir, bl, WriteOptions{NoSync: true}))
	}
	for b.Loop() {
		ix, err := Open(dir)
		require.NoError(b, err)
		docs, _, err := ix.Find(ctx, []string{"common", "text"}, 50)
		require.NoError(b, err)
		require.Len(b, docs, 50)
		for i := range 100_000 {
			ix.Covers(fmt.Sprintf("a3b0fc12-0000-4000-8000-%012d", i))
		}
		ix.Close()
	}
}
