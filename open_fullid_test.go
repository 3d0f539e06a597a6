package helm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVoyageOfAFullIDOpensAsResolveThenOpenDid: Home.Voyage of a full id
// (as written, or in capitals with spaces) opens that voyage, and what it
// refuses it refuses with Resolve's words.
func TestVoyageOfAFullIDOpensAsResolveThenOpenDid(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "the voyage opened by its id", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Close())
	file := uuid.NewString()
	require.NoError(t, os.WriteFile(filepath.Join(h.voyagesDir(), file), []byte("not a voyage"), 0o600))

	for _, tc := range []struct {
		name  string
		given string
		opens bool
		says  string
	}{
		{"its id", id, true, ""},
		{"its id in capitals, with spaces", "  " + strings.ToUpper(id) + " ", true, ""},
		{"the id of no voyage", "00000000-0000-4000-8000-000000000000", false, "in " + h.Dir()},
		{"the id of a file in the voyages' directory", file, false, "in " + h.Dir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := h.Voyage(ctx, tc.given)
			if !tc.opens {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrNoVoyage)
				assert.Contains(t, err.Error(), tc.says)
				_, rerr := h.Resolve(ctx, tc.given)
				assert.EqualError(t, err, rerr.Error(), "the error Resolve gives")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, id, v.ID())
			assert.Equal(t, "the voyage opened by its id", v.Info().Intent)
			require.NoError(t, v.Close())
		})
	}
}
