package helm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/storetest"
)

// A shared store's summary of a voyage describes a record after the last
// its log holds: the log lost records the store had acknowledged (its
// tail, or all of them), and List shows the voyage damaged, never as its
// summary tells it, and never leaves it out as a start that wrote
// nothing. The store here is a storetest.Dir whose summaries the test writes,
// as an attacker with the store's credentials could.
func TestSharedListShowsAVoyageWhoseSummaryOutrunsItsLogDamaged(t *testing.T) {
	for _, tc := range []struct {
		name string
		// empty: the voyage is one whose log holds no record, as a
		// start that wrote nothing leaves it.
		empty bool
		seq   func(last uint64) uint64
		want  string
	}{
		{"its tail is gone", false, func(last uint64) uint64 { return last + 2 }, "but its log ends at record"},
		{"its every record is gone", true, func(uint64) uint64 { return 5 }, "but its log ends at record 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
			h, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", &helm.Options{NoSync: true})
			require.NoError(t, err)
			who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
			v, err := h.Start(ctx, "Its summary says more", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			_, err = v.Note(ctx, "one", who)
			require.NoError(t, err)
			last := v.Info().Seq
			require.NoError(t, v.Close())
			other, err := h.Start(ctx, "Healthy", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			require.NoError(t, other.Close())

			id := v.ID()
			if tc.empty {
				id = "0b9d7e4c-6a1f-4a52-9c1e-3c2b1a0f9e8d"
				l, err := st.Create(ctx, id)
				require.NoError(t, err)
				require.NoError(t, l.Close())
			}
			list, err := h.List(ctx, nil)
			require.NoError(t, err, "before the summary lies")
			require.NotEmpty(t, list)

			sums, err := st.Voyages(ctx)
			require.NoError(t, err)
			require.NoError(t, st.PutSummary(ctx, id, store.Summary{Seq: tc.seq(last), Data: sums[v.ID()].Data}))

			list, err = h.List(ctx, nil)
			var le *helm.ListError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, []string{id}, le.Voyages)
			assert.ErrorIs(t, le.Errs[0], helm.ErrDamaged)
			assert.ErrorContains(t, le.Errs[0], tc.want)
			assert.ErrorContains(t, le.Errs[0], "lost records it had acknowledged")
			var ids []string
			for _, i := range list {
				ids = append(ids, i.ID)
			}
			assert.NotContains(t, ids, id)
			assert.Contains(t, ids, other.ID())
		})
	}
}
