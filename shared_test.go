package helm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/storetest"
)

// A start that failed on a shared store before its first event leaves
// the voyage's key there, empty: listing leaves it out, and a copy of the
// voyage (an import) takes it over rather than being refused.
func TestACopyTakesOverAVoyageWhoseStartFailed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	shared, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	disk, err := helm.Open(filepath.Join(dir, "disk"), &helm.Options{NoSync: true})
	require.NoError(t, err)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := disk.Start(ctx, "Copied over an empty start", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()

	empty, err := st.Create(ctx, v.ID()) // the failed start
	require.NoError(t, err)
	empty.Close()
	list, err := shared.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, list)

	rep, err := disk.Copy(ctx, v.ID(), shared)
	require.NoError(t, err)
	assert.True(t, rep.Created)
	assert.Equal(t, uint64(1), rep.Records)
	list, err = shared.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "Copied over an empty start", list[0].Intent)
}

// A refusal is decided on the store's tail, not on the tail a handle last
// knew: a bearing taken through a handle that has not seen another
// home's observation seals it, rather than finding the slate empty; a
// second bearing then finds it empty, and says so.
func TestASharedRefusalIsDecidedOnTheStoresTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	a, err := helm.OpenStore(filepath.Join(dir, "a"), st, "the test's store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	b, err := helm.OpenStore(filepath.Join(dir, "b"), st, "the test's store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	va, err := a.Start(ctx, "Stale handles", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer va.Close()
	vb, err := b.Voyage(ctx, va.ID())
	require.NoError(t, err)
	defer vb.Close()

	_, err = va.Observe(ctx, &marks.Context{Description: "seen through a"}, who, nil)
	require.NoError(t, err)
	e, err := vb.TakeBearing(ctx, "sealed through b", who, nil)
	require.NoError(t, err, "b's handle had not seen a's observation: the store had")
	assert.Equal(t, 1, e.N)
	_, err = va.TakeBearing(ctx, "nothing left", who, nil)
	require.ErrorIs(t, err, helm.ErrEmptySlate)
}

// lossyStore's logs answer every append as a store that lost records
// would: their last record is the first.
type lossyStore struct{ store.Store }

func (s lossyStore) Open(ctx context.Context, id string) (store.Log, error) {
	l, err := s.Store.Open(ctx, id)
	return lossyLog{l}, err
}

type lossyLog struct{ store.Log }

func (l lossyLog) AppendIf(_ context.Context, expect uint64, _ ...[]byte) (uint64, error) {
	return 0, &store.ConflictError{Expected: expect, Actual: 1}
}

// A store whose log ends before records a handle read from it lost
// acknowledged records: a change says so, as damage, at once, rather
// than deciding again until it gives up on other writers that are not
// there.
func TestASharedStoreThatLostRecordsIsDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	good, err := helm.OpenStore(filepath.Join(dir, "a"), st, "the test's store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := good.Start(ctx, "Lost records", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "two", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	lossy, err := helm.OpenStore(filepath.Join(dir, "b"), lossyStore{st}, "a lossy store", &helm.Options{NoSync: true})
	require.NoError(t, err)
	w, err := lossy.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Note(ctx, "three", who)
	require.ErrorIs(t, err, helm.ErrDamaged)
	assert.Contains(t, err.Error(), "lost records it had acknowledged")
	assert.Contains(t, err.Error(), "a lossy store")
}
