package readpathtest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/search"
	storydoc "github.com/helmlog/helm/story"
	"github.com/helmlog/helm/transcript"
)

// flipByte flips a bit of the file at path at off, in place.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := []byte{0}
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x04
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// damageWhereOpeningDoesNotLook flips a bit in the first block of the
// voyage's snapshot after its head (the story's entries), one in its last
// block (the artifact index), and one in the data of the log's first
// record, which opening from the snapshot does not read: every view must
// then fold the log again, and that fails.
func damageWhereOpeningDoesNotLook(t *testing.T, vdir string) string {
	t.Helper()
	snap := filepath.Join(vdir, "snapshot")
	data, err := os.ReadFile(snap)
	require.NoError(t, err)
	at := 8 + 8 + int(binary.LittleEndian.Uint32(data[12:]))
	require.Equal(t, byte('S'), data[at])
	head := int(binary.LittleEndian.Uint32(data[at+2:]))
	flipByte(t, snap, int64(at+2+4+head+4))
	flipByte(t, snap, int64(len(data)-2))
	segs, err := filepath.Glob(filepath.Join(vdir, "events", "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	seg, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	header := int64(72) // format 2; format 4's adds the chain's link
	if binary.LittleEndian.Uint32(seg[8:]) >= 4 {
		header = 104
	}
	// Into the second record's data: opening from a snapshot reads the
	// first (the start, whose identity it checks the snapshot's against).
	n := int64(binary.LittleEndian.Uint32(seg[header+4:]))
	second := header + (24+n+7)/8*8
	require.Equal(t, uint64(2), binary.LittleEndian.Uint64(seg[second+8:]), "the second frame holds seq 2")
	flipByte(t, segs[0], second+24+4)
	return segs[0]
}

// When a snapshot section does not check out and folding the log instead
// fails, every reader of the story says so, naming the voyage: it never
// prints, exports or searches a story cut short.
func TestFeatureReadsOfAStoryWhoseRefoldFailsReturnTheDamage(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		read func(h *helm.Home, id string) (string, error)
	}{
		{"story.WriteText", func(h *helm.Home, id string) (string, error) {
			v, err := h.Voyage(ctx, id)
			if err != nil {
				return "", err
			}
			defer v.Close()
			var b bytes.Buffer
			err = storydoc.WriteText(ctx, &b, v)
			return b.String(), err
		}},
		{"story.WriteMarkdown", func(h *helm.Home, id string) (string, error) {
			v, err := h.Voyage(ctx, id)
			if err != nil {
				return "", err
			}
			defer v.Close()
			var b bytes.Buffer
			err = storydoc.WriteMarkdown(ctx, &b, v)
			return b.String(), err
		}},
		{"story.WriteHTML", func(h *helm.Home, id string) (string, error) {
			v, err := h.Voyage(ctx, id)
			if err != nil {
				return "", err
			}
			defer v.Close()
			var b bytes.Buffer
			err = storydoc.WriteHTML(ctx, &b, v)
			return b.String(), err
		}},
		{"report.Of", func(h *helm.Home, id string) (string, error) {
			r, err := report.Of(ctx, h, id, nil)
			return fmt.Sprint(r), err
		}},
		{"search.Run", func(h *helm.Home, _ string) (string, error) {
			hits, err := search.Run(ctx, h, &search.Query{Text: "note"})
			return fmt.Sprint(hits), err
		}},
		{"transcript.Read", func(h *helm.Home, id string) (string, error) {
			lines, err := transcript.Read(ctx, h, []string{id}, nil)
			return fmt.Sprint(lines), err
		}},
		{"Home.Export", func(h *helm.Home, id string) (string, error) {
			var b bytes.Buffer
			err := h.Export(ctx, id, &b)
			return b.String(), err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			v, err := h.Start(ctx, "snapshotted", helm.OpenWaters, voyagetest.Who, nil)
			require.NoError(t, err)
			for i := range 6 {
				_, err := v.Observe(ctx, &voyagetest.Note{Topic: fmt.Sprint("t", i), Text: fmt.Sprint("note ", i)}, voyagetest.Who, nil)
				require.NoError(t, err)
			}
			// A closing writer writes a snapshot once 4096 events were
			// folded since the last (the default, which no caller sets).
			for i := 0; i < 4100; i++ {
				_, err = v.Note(ctx, fmt.Sprint("a note ", i), voyagetest.Who)
				require.NoError(t, err)
			}
			require.NoError(t, v.Close())
			id := v.ID()
			vdir := filepath.Join(h.Dir(), "voyages", id)
			require.FileExists(t, filepath.Join(vdir, "snapshot"))
			seg := damageWhereOpeningDoesNotLook(t, vdir)
			opened, err := h.Voyage(ctx, id)
			require.NoError(t, err, "opening from the snapshot does not read the damaged record")
			require.NoError(t, opened.Close())

			out, err := tt.read(h, id)
			require.Error(t, err, "a story cut short was read: %s", out)
			assert.ErrorIs(t, err, helm.ErrDamaged)
			assert.Contains(t, err.Error(), id)
			assert.Contains(t, err.Error(), filepath.Base(seg))
		})
	}
}
