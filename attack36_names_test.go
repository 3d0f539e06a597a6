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

// TestAttackACopyOfAVoyageUnderAnotherSpellingOfItsIDIsNotListed: the
// agent copies a voyage's directory to names that parse as the same id
// (upper case, braces, urn:uuid:, no dashes), and to a long name. The
// list names each voyage once, by its own id in its canonical spelling;
// the copies are not voyages of the home.
func TestAttackACopyOfAVoyageUnderAnotherSpellingOfItsIDIsNotListed(t *testing.T) {
	ctx := context.Background()
	h, err := Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "the voyage copied", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	observeNote(t, v, "a note")
	id := v.ID()
	require.NoError(t, v.Close())
	// One that is not closed: the index does not vouch for it, so the
	// list reads the voyages' directory for it.
	w, err := h.Start(ctx, "the voyage left open", OpenWaters, indexWho, nil)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })

	src := filepath.Join(h.voyagesDir(), id)
	for _, name := range []string{
		strings.ToUpper(id),
		"{" + id + "}",
		"urn:uuid:" + id,
		strings.ReplaceAll(id, "-", ""),
		strings.ToUpper(w.ID()),
		strings.Repeat("a", 255),
	} {
		require.NoError(t, os.CopyFS(filepath.Join(h.voyagesDir(), name), os.DirFS(src)), name)
	}

	infos, err := h.List(ctx, nil)
	require.NoError(t, err)
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
		u, err := uuid.Parse(in.ID)
		if assert.NoError(t, err) {
			assert.Equal(t, u.String(), in.ID, "listed in its canonical spelling")
		}
	}
	assert.ElementsMatch(t, []string{id, w.ID()}, ids, "each voyage once, the copies not at all")

	// Named by another spelling of its id, it is the voyage itself, not
	// the copy under that name.
	for _, spelling := range []string{strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, strings.ReplaceAll(id, "-", "")} {
		got, err := h.Resolve(ctx, spelling)
		require.NoError(t, err, spelling)
		assert.Equal(t, id, got, spelling)
	}
}
