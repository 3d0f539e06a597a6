package helm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
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

// page reads up to n of the entries opts selects.
func page(t testing.TB, v *helm.Voyage, opts *helm.EntriesOptions, n int) []logbook.Entry {
	t.Helper()
	out := []logbook.Entry{}
	if n <= 0 {
		return out
	}
	for e, err := range v.Entries(context.Background(), opts) {
		require.NoError(t, err)
		if out = append(out, e); len(out) == n {
			break
		}
	}
	return out
}

func TestEntriesFromAnyNumberAreTheLogbook(t *testing.T) {
	t.Parallel()
	_, v := newVoyage(t, &helm.Options{NoSync: true})
	longVoyage(t, v, 600)
	all := entriesOf(t, v)
	require.Len(t, all, 600)
	assert.Equal(t, 600, v.Info().Counts.Entries)

	tests := []struct {
		name     string
		first, n int
		want     []logbook.Entry
	}{
		{"the first page", 1, 10, all[:10]},
		{"the last page, cut short", 591, 20, all[590:]},
		{"the last entry", 600, 1, all[599:]},
		{"after the last", 601, 5, []logbook.Entry{}},
		{"before the first: from the first", 0, 3, all[:3]},
		{"across a page of the copy", 250, 10, all[249:259]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, page(t, v, &helm.EntriesOptions{From: tt.first}, tt.n))
		})
	}
	assert.Equal(t, all, page(t, v, nil, 1000), "nil options: every entry, page after page")
	assert.Len(t, page(t, v, nil, 300), 300, "a caller may stop early")

	// An entry yielded is a copy: changing it changes no view.
	p := page(t, v, nil, 1)
	p[0].Bearing.Reading.Text = "changed"
	assert.NotEqual(t, "changed", page(t, v, nil, 1)[0].Bearing.Reading.Text)
}

func TestArtifactsAfterAHashAreTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, v := newVoyage(t, &helm.Options{NoSync: true})
	longVoyage(t, v, 600) // more than a page of the copy
	all := artifactsOf(t, v)
	require.Len(t, all, 600)
	after := func(hash string, n int) []helm.ArtifactInfo {
		var out []helm.ArtifactInfo
		for a, err := range v.Artifacts(ctx, &helm.ArtifactsOptions{After: hash}) {
			require.NoError(t, err)
			if out = append(out, a); len(out) == n {
				break
			}
		}
		return out
	}
	var got []helm.ArtifactInfo
	for from := ""; ; {
		p := after(from, 50)
		got = append(got, p...)
		if len(p) < 50 {
			break
		}
		from = p[len(p)-1].Hash
	}
	assert.Equal(t, all, got)
	assert.Empty(t, after(all[len(all)-1].Hash, 10))
	assert.Equal(t, all[0:2], after(all[0].Hash[:10], 2), "after a prefix: from the first hash that sorts past it")

	a, err := v.ArtifactInfo(ctx, all[7].Hash)
	require.NoError(t, err)
	assert.Equal(t, all[7], a)
	_, err = v.ArtifactInfo(ctx, "ffffffffffff")
	assert.ErrorIs(t, err, helm.ErrNoArtifact)

	// The sorted index follows changes.
	_, err = v.Observe(context.Background(), &note{Topic: "new", Text: "a new sighting"}, who, nil)
	require.NoError(t, err)
	assert.Len(t, artifactsOf(t, v), 601)
}

// BenchmarkEntriesPage reads 20 entries of a 20k-entry story, against
// the whole story: the cost of a page does not grow with the voyage.
func BenchmarkEntriesPage(b *testing.B) {
	h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
	require.NoError(b, err)
	v, err := h.Start(context.Background(), "long", helm.OpenWaters, who, nil)
	require.NoError(b, err)
	defer v.Close()
	longVoyage(b, v, 20_000)
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if len(page(b, v, &helm.EntriesOptions{From: 10_000}, 20)) != 20 {
				b.Fatal("short page")
			}
		}
	})
	b.Run("logbook", func(b *testing.B) {
		for b.Loop() {
			if len(entriesOf(b, v)) != 20_000 {
				b.Fatal("short logbook")
			}
		}
	})
	b.Run("artifacts_page", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, err := range v.Artifacts(context.Background(), &helm.ArtifactsOptions{After: "8"}) {
				require.NoError(b, err)
				if n++; n == 20 {
					break
				}
			}
			if n != 20 {
				b.Fatal("short page")
			}
		}
	})
	b.Run("artifacts", func(b *testing.B) {
		for b.Loop() {
			if len(artifactsOf(b, v)) != 20_000 {
				b.Fatal("short index")
			}
		}
	})
}
