package helm_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/sighting"
)

// Reading a voyage's views in tests: each helper fails t on an error,
// which a test of the error itself reads through the iterators.

// entriesOf returns the story's entries.
func entriesOf(t testing.TB, v *helm.Voyage) []logbook.Entry {
	t.Helper()
	var out []logbook.Entry
	for e, err := range v.Entries(context.Background(), nil) {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// failedOf returns the failed actions outside the story.
func failedOf(t testing.TB, v *helm.Voyage) []logbook.Entry {
	t.Helper()
	var out []logbook.Entry
	for e, err := range v.Entries(context.Background(), &helm.EntriesOptions{OutsideStory: true}) {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// artifactsOf returns the artifact index.
func artifactsOf(t testing.TB, v *helm.Voyage) []helm.ArtifactInfo {
	t.Helper()
	var out []helm.ArtifactInfo
	for a, err := range v.Artifacts(context.Background(), nil) {
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}

// readArtifact reads the sighting JSON stored under hash to its end.
func readArtifact(ctx context.Context, v *helm.Voyage, hash string) ([]byte, error) {
	r, err := v.OpenArtifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// readSighting reads and decodes the sighting stored under hash.
func readSighting(ctx context.Context, v *helm.Voyage, hash string) (sighting.Sighting, error) {
	r, err := v.OpenArtifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return sighting.Read(r)
}
