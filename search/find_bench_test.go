package search_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/search"
)

// BenchmarkFindCommonWord: a word in every one of 300 voyages, found
// through the index, each hit re-checked against its voyage.
func BenchmarkFindCommonWord(b *testing.B) {
	ctx := context.Background()
	h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
	require.NoError(b, err)
	for i := range 300 {
		v, err := h.Start(ctx, "voyage", helm.OpenWaters, who, nil)
		require.NoError(b, err)
		observeFile(b, v, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("common words in file %d, and some more text to make it longer than a line", i))
		_, err = v.TakeBearing(ctx, "read it", who, nil)
		require.NoError(b, err)
		require.NoError(b, v.Complete(ctx, "", "done", who))
		require.NoError(b, v.Close())
	}
	_, err = search.Reindex(ctx, h, nil)
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		res, err := search.Find(ctx, h, &search.Query{Words: "common", Limit: 200})
		require.NoError(b, err)
		require.Len(b, res.Hits, 200)
	}
}
