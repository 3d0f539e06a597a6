package helm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// longVoyage records n bearings, each on one new observation.
func longVoyage(t testing.TB, v *helm.Voyage, n int) {
	ctx := context.Background()
	for i := range n {
		_, err := v.Observe(ctx, &note{Topic: fmt.Sprint("t", i), Text: fmt.Sprint("text ", i)}, who, nil)
		require.NoError(t, err)
		_, err = v.TakeBearing(ctx, fmt.Sprint("reading ", i), who, nil)
		require.NoError(t, err)
	}
}

func TestLogbookPagesAndEntriesAreTheLogbook(t *testing.T) {
	_, v := newVoyage(t, &helm.Options{NoSync: true})
	longVoyage(t, v, 600)
	all := v.Logbook()
	require.Len(t, all, 600)
	assert.Equal(t, 600, v.LogbookLen())

	tests := []struct {
		first, n int
		want     []helm.Entry
	}{
		{1, 10, all[:10]},
		{591, 20, all[590:]},
		{600, 1, all[599:]},
		{601, 5, []helm.Entry{}},
		{0, 3, all[:3]}, // before the first: from the first
		{5, 0, []helm.Entry{}},
		{5, -1, []helm.Entry{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.first, "+", tt.n), func(t *testing.T) {
			assert.Equal(t, tt.want, v.LogbookPage(tt.first, tt.n))
		})
	}

	var got []helm.Entry
	for e := range v.Entries() {
		got = append(got, e)
	}
	assert.Equal(t, all, got, "Entries yields the logbook, page after page")
	n := 0
	for range v.Entries() {
		if n++; n == 300 {
			break
		}
	}
	assert.Equal(t, 300, n, "a caller may stop early")

	// A page is a copy: changing it changes no view.
	p := v.LogbookPage(1, 1)
	p[0].Bearing.Reading.Text = "changed"
	assert.NotEqual(t, "changed", v.LogbookPage(1, 1)[0].Bearing.Reading.Text)
}

func TestArtifactPagesAreTheIndex(t *testing.T) {
	_, v := newVoyage(t, &helm.Options{NoSync: true})
	longVoyage(t, v, 120)
	all := v.Artifacts()
	require.Len(t, all, 120)
	var got []helm.ArtifactInfo
	for after := ""; ; {
		p := v.ArtifactsAfter(after, 50)
		got = append(got, p...)
		if len(p) < 50 {
			break
		}
		after = p[len(p)-1].Hash
	}
	assert.Equal(t, all, got)
	assert.Empty(t, v.ArtifactsAfter(all[len(all)-1].Hash, 10))
	assert.Equal(t, all[0:2], v.ArtifactsAfter(all[0].Hash[:10], 2), "after a prefix: from the first hash that sorts past it")

	a, err := v.ArtifactInfo(all[7].Hash)
	require.NoError(t, err)
	assert.Equal(t, all[7], a)
	_, err = v.ArtifactInfo("ffffffffffff")
	assert.ErrorIs(t, err, helm.ErrNoArtifact)

	// The sorted index follows changes.
	_, err = v.Observe(context.Background(), &note{Topic: "new", Text: "a new sighting"}, who, nil)
	require.NoError(t, err)
	assert.Len(t, v.Artifacts(), 121)
}

// BenchmarkLogbookPage reads 20 entries of a 20k-entry story, against
// Logbook (the whole story copied): the cost of a page does not grow
// with the voyage.
func BenchmarkLogbookPage(b *testing.B) {
	h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
	require.NoError(b, err)
	v, err := h.Start(context.Background(), "long", helm.OpenWaters, who)
	require.NoError(b, err)
	defer v.Close()
	longVoyage(b, v, 20_000)
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if len(v.LogbookPage(10_000, 20)) != 20 {
				b.Fatal("short page")
			}
		}
	})
	b.Run("logbook", func(b *testing.B) {
		for b.Loop() {
			if len(v.Logbook()) != 20_000 {
				b.Fatal("short logbook")
			}
		}
	})
	b.Run("artifacts_page", func(b *testing.B) {
		for b.Loop() {
			if len(v.ArtifactsAfter("8", 20)) != 20 {
				b.Fatal("short page")
			}
		}
	})
	b.Run("artifacts", func(b *testing.B) {
		for b.Loop() {
			if len(v.Artifacts()) != 20_000 {
				b.Fatal("short index")
			}
		}
	})
}
