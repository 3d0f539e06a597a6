package helm

import (
	"context"
	"io"
	"iter"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/segment"
)

// Reaching into a home on disk, for tests that damage or watch its files.

func (h *Home) voyagesDir() string { return filepath.Join(h.dir, "voyages") }

func (h *Home) indexedViews() map[string]VoyageInfo { return h.back.(*disk).indexedViews() }

// indexedViews returns the voyages the home index vouches for, by id;
// nil when there is no index or it is damaged (every voyage is then read
// itself).
func (d *disk) indexedViews() map[string]VoyageInfo {
	v, ok := d.readVouchers()
	if !ok {
		return nil
	}
	d.stampVouchers(&v)
	out := map[string]VoyageInfo{}
	for i := range v.infos {
		if v.held[i] {
			out[v.infos[i].ID] = v.infos[i]
		}
	}
	return out
}

// segmentLog returns the segment log of a voyage of a home on disk.
func (v *Voyage) segmentLog() *segment.Log { return v.rec.(*diskJournal).log }

// entriesOf returns the story's entries, failing t on an error.
func entriesOf(t testing.TB, v *Voyage) []logbook.Entry {
	t.Helper()
	out, err := collect(v.Entries(context.Background(), nil))
	require.NoError(t, err)
	return out
}

// failedOf returns the failed actions outside the story.
func failedOf(t testing.TB, v *Voyage) []logbook.Entry {
	t.Helper()
	out, err := collect(v.Entries(context.Background(), &EntriesOptions{OutsideStory: true}))
	require.NoError(t, err)
	return out
}

// artifactsOf returns the artifact index, failing t on an error.
func artifactsOf(t testing.TB, v *Voyage) []ArtifactInfo {
	t.Helper()
	out, err := collect(v.Artifacts(context.Background(), nil))
	require.NoError(t, err)
	return out
}

// collect gathers what seq yields, up to its first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for x, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}

// readArtifact reads the sighting JSON stored under hash to its end.
func readArtifact(ctx context.Context, v *Voyage, hash string) ([]byte, error) {
	r, err := v.OpenArtifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
