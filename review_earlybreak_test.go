package helm_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/hometest"
)

// readPathVoyage records a voyage with a story, a large artifact (in the
// pack on disk) and a small one, and closes it.
func readPathVoyage(t *testing.T, h *helm.Home) string {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Resolve #42: read path", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "big", Text: strings.Repeat("a line of a large log, not compressible much 0123456789\n", 40000)}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "The widget crashes on a nil config.", who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "Writing the test for #42.", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	return v.ID()
}

// settledGoroutines polls until no more than n goroutines run, and
// returns how many do (a leak shows as more than n, however long it
// waits).
func settledGoroutines(n int) int {
	got := runtime.NumGoroutine()
	for i := 0; i < 200 && got > n; i++ {
		time.Sleep(10 * time.Millisecond)
		got = runtime.NumGoroutine()
	}
	return got
}

// Leaving an iterator's loop early, or ending its ctx, leaves no
// goroutine behind and no lock held: the same handle, and another
// home's, change the voyage afterwards. On disk and in a shared store.
func TestIteratorsLeftEarlyReleaseEverything(t *testing.T) {
	for _, home := range hometest.Homes(t) {
		t.Run(home.Name, func(t *testing.T) {
			ctx := context.Background()
			id := readPathVoyage(t, home.Home())
			reader, err := home.Other().Voyage(ctx, id)
			require.NoError(t, err)
			defer reader.Close()
			writer, err := home.Home().Voyage(ctx, id)
			require.NoError(t, err)
			defer writer.Close()
			base := runtime.NumGoroutine()

			for _, tt := range []struct {
				name string
				run  func()
			}{
				{"Events", func() {
					for _, err := range reader.Events(ctx, 1) {
						require.NoError(t, err)
						break
					}
				}},
				{"Follow left", func() {
					for _, err := range reader.Follow(ctx, 1) {
						require.NoError(t, err)
						break
					}
				}},
				{"Follow cancelled", func() {
					fctx, cancel := context.WithCancel(ctx)
					defer cancel()
					var last error
					for _, err := range reader.Follow(fctx, 1) {
						if err != nil {
							last = err
							break
						}
						cancel()
					}
					assert.ErrorIs(t, last, context.Canceled)
				}},
				{"Entries", func() {
					for _, err := range reader.Entries(ctx, nil) {
						require.NoError(t, err)
						break
					}
				}},
				{"Artifacts", func() {
					for _, err := range reader.Artifacts(ctx, nil) {
						require.NoError(t, err)
						break
					}
				}},
				{"OpenArtifact unread", func() {
					for a, err := range reader.Artifacts(ctx, nil) {
						require.NoError(t, err)
						r, err := reader.OpenArtifact(ctx, a.Hash)
						require.NoError(t, err)
						require.NoError(t, r.Close())
					}
				}},
			} {
				tt.run()
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second) // a held lock shows as this deadline
				_, err := writer.Note(wctx, "after "+tt.name, who)
				cancel()
				require.NoError(t, err, "after %s, the writer", tt.name)
				_, err = reader.Note(ctx, "reader after "+tt.name, who)
				require.NoError(t, err, "after %s, the reader's own handle", tt.name)
				assert.LessOrEqual(t, settledGoroutines(base), base, "after %s, goroutines", tt.name)
			}

			// Export of a voyage another handle is writing: a whole
			// archive, which imports.
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 20 {
					_, err := writer.Note(ctx, "concurrent "+string(rune('a'+i)), who)
					assert.NoError(t, err)
				}
			}()
			var archive bytes.Buffer
			require.NoError(t, home.Other().Export(ctx, id, &archive))
			<-done
			into, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			imported, err := into.Import(ctx, &archive, nil)
			require.NoError(t, err, "an archive exported while the voyage was written imports")
			require.NoError(t, imported.Close())
		})
	}
}
