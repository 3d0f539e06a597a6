package helm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/hometest"
)

// A voyage's head is the chain's link after its last record, from a
// genesis that commits to its id: every record moves it, on every store.
func TestHeadMovesWithEveryRecord(t *testing.T) {
	ctx := context.Background()
	for _, home := range hometest.Homes(t) {
		t.Run(home.Name, func(t *testing.T) {
			v, err := home.Home().Start(ctx, "Resolve #42", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			defer v.Close()
			first, err := v.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, v.Info().Seq, first.Seq)
			assert.NotEqual(t, chain.Genesis(v.ID()), first.Hash)

			_, err = v.Note(ctx, "Writing the test.", who)
			require.NoError(t, err)
			next, err := v.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, v.Info().Seq, next.Seq)
			assert.Greater(t, next.Seq, first.Seq)
			assert.NotEqual(t, first.Hash, next.Hash)

			again, err := v.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, next, again, "reading the head changes nothing")
		})
	}
}
