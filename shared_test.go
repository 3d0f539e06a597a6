package helm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/store"
)

// A start that failed on a shared store before its first event leaves
// the voyage's key there, empty: listing leaves it out, and a copy of the
// voyage (an import) takes it over rather than being refused.
func TestACopyTakesOverAVoyageWhoseStartFailed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := store.OpenDir(filepath.Join(dir, "shared"), &store.DirOptions{NoSync: true})
	shared, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	disk, err := helm.Open(filepath.Join(dir, "disk"), &helm.Options{NoSync: true})
	require.NoError(t, err)
	who := helm.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := disk.Start(ctx, "Copied over an empty start", helm.OpenWaters, who)
	require.NoError(t, err)
	defer v.Close()

	empty, err := st.Create(ctx, v.ID()) // the failed start
	require.NoError(t, err)
	empty.Close()
	list, err := shared.List(ctx, helm.ListAll)
	require.NoError(t, err)
	assert.Empty(t, list)

	rep, err := disk.Copy(ctx, v.ID(), shared)
	require.NoError(t, err)
	assert.True(t, rep.Created)
	assert.Equal(t, uint64(1), rep.Records)
	list, err = shared.List(ctx, helm.ListAll)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "Copied over an empty start", list[0].Intent)
}
