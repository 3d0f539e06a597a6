package helm

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

type failing struct{ Fail bool }

func (failing) Kind() string { return "commit" }
func (a failing) Perform(context.Context) (logbook.ActionResult, error) {
	if a.Fail {
		return logbook.ActionResult{}, errors.New("rejected")
	}
	return logbook.ActionResult{SHA: "abc1234"}, nil
}

// TestEntryNumbersThroughSnapshot: a voyage reopened from a snapshot
// taken between a failed action and the entries after it numbers them as
// they were recorded, and numbers the next entry after them.
func TestEntryNumbersThroughSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	who := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	h, err := Open(t.TempDir(), &Options{snapshotEvery: 2})
	require.NoError(t, err)
	v, err := h.Start(ctx, "numbers", OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	_, err = v.Note(ctx, "one", who)
	require.NoError(t, err)
	_, err = v.Perform(ctx, failing{Fail: true}, who, nil)
	require.Error(t, err)
	require.NoError(t, v.Close()) // a snapshot: the failed action is entry 2
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, v.snapFile, "opened from the snapshot")
	e, err := v.Note(ctx, "three", who)
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	_, err = v.Perform(ctx, failing{}, who, nil)
	require.NoError(t, err)
	entries := entriesOf(t, v)
	require.Len(t, entries, 4)
	assert.Equal(t, logbook.ActionFailed, entries[1].Action.Status)
	assert.Equal(t, logbook.ActionPerformed, entries[3].Action.Status)
	assert.Equal(t, 4, entries[3].N)
	require.NoError(t, v.Close())
}
