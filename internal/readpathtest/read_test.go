// Package readpathtest_test checks, over homes on disk and in a shared
// store, the promises of the read path that the feature packages built on
// the root (report, story, search, transcript) share with it: reading
// writes nothing; a story that cannot be read whole is an error.
package readpathtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/hometest"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/search"
	storydoc "github.com/helmlog/helm/story"
	"github.com/helmlog/helm/transcript"
)

// statTree returns every file and directory under dir with its mode,
// size, mtime and a digest of its contents: what a reader must not touch.
func statTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		desc := fmt.Sprintf("%v %d %s", fi.Mode(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[rel] = desc
		return nil
	}))
	return out
}

// readPathVoyage records a voyage with a story, a large artifact (in the
// pack on disk) and a small one, and closes it.
func readPathVoyage(t *testing.T, h *helm.Home) string {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Resolve #42: read path", helm.ResolveIssue, voyagetest.Who, nil)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &voyagetest.Note{Topic: "big", Text: strings.Repeat("a line of a large log, not compressible much 0123456789\n", 40000)}, voyagetest.Who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "The widget crashes on a nil config.", voyagetest.Who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "Writing the test for #42.", voyagetest.Who)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &voyagetest.Action{Of: "fix"}, voyagetest.Who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	return v.ID()
}

// Every read of the library and of the feature packages on its read path
// leaves a home's bytes, modes and mtimes as they were, on disk and in a
// shared store alike: Export, Entries, Artifacts (stopped early too),
// OpenArtifact, Storage, Events, Follow, report.Of, story, search.Run,
// transcript.Read, List and Verify.
func TestEveryReadLeavesTheHomeAsItWas(t *testing.T) {
	ctx := context.Background()
	for _, home := range hometest.Homes(t) {
		t.Run(home.Name, func(t *testing.T) {
			id := readPathVoyage(t, home.Home())
			root := filepath.Dir(home.Home().Dir())
			time.Sleep(20 * time.Millisecond) // a write after this shows in an mtime
			before := statTree(t, root)

			h := home.Other()
			reads := []struct {
				name string
				read func(*testing.T, *helm.Home)
			}{
				{"List", func(t *testing.T, h *helm.Home) { _, err := h.List(ctx, nil); require.NoError(t, err) }},
				{"Export", func(t *testing.T, h *helm.Home) { require.NoError(t, h.Export(ctx, id[:8], io.Discard)) }},
				{"Verify", func(t *testing.T, h *helm.Home) { _, err := h.Verify(ctx, id, nil); require.NoError(t, err) }},
				{"report.Of", func(t *testing.T, h *helm.Home) { _, err := report.Of(ctx, h, id, nil); require.NoError(t, err) }},
				{"search.Run", func(t *testing.T, h *helm.Home) {
					hits, err := search.Run(ctx, h, &search.Query{Text: "widget"})
					require.NoError(t, err)
					assert.NotEmpty(t, hits)
				}},
				{"transcript.Read", func(t *testing.T, h *helm.Home) {
					_, err := transcript.Read(ctx, h, []string{id}, nil)
					require.NoError(t, err)
				}},
				{"voyage reads", func(t *testing.T, h *helm.Home) {
					v, err := h.Voyage(ctx, id)
					require.NoError(t, err)
					defer v.Close()
					_ = v.Storage()
					_ = v.Info()
					_ = v.Slate()
					_ = v.Info().Counts
					for _, err := range v.Entries(ctx, nil) {
						require.NoError(t, err)
						break
					}
					_, err = collectSeq(v.Entries(ctx, nil))
					require.NoError(t, err)
					arts, err := collectSeq(v.Artifacts(ctx, nil))
					require.NoError(t, err)
					require.NotEmpty(t, arts)
					for _, a := range arts {
						r, err := v.OpenArtifact(ctx, a.Hash)
						require.NoError(t, err)
						_, err = io.Copy(io.Discard, r)
						require.NoError(t, err)
						require.NoError(t, r.Close())
					}
					for _, err := range v.Events(ctx, 1) {
						require.NoError(t, err)
					}
					fctx, cancel := context.WithCancel(ctx)
					n := 0
					for _, err := range v.Follow(fctx, 1) {
						if err != nil {
							break
						}
						if n++; n == 3 {
							cancel()
						}
					}
					cancel()
					var b bytes.Buffer
					require.NoError(t, storydoc.WriteText(ctx, &b, v))
					require.NoError(t, storydoc.WriteMarkdown(ctx, &b, v))
					require.NoError(t, storydoc.WriteHTML(ctx, &b, v))
				}},
			}
			for _, r := range reads {
				r.read(t, h)
				assert.Equal(t, before, statTree(t, root), "%s wrote to the home", r.name)
			}
		})
	}
}

// collectSeq gathers what seq yields, up to its first error.
func collectSeq[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for x, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}
