package helm_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
)

// The recorded agent asks for a fork of a voyage that names no voyage of
// this home: a path into another home, a path out of the home, an id
// with a separator. Nothing is started, and no file outside the home is
// read as an origin.
func TestAttackForkOfAnOriginNamedByAPathIsRefused(t *testing.T) {
	ctx := context.Background()
	otherRoot := t.TempDir()
	other, err := helm.Open(otherRoot, nil)
	require.NoError(t, err)
	elsewhere := newForkScene(t, other)
	for _, tc := range []struct {
		name   string
		origin func(home string) string
	}{
		{"another home's voyage directory", func(string) string {
			return filepath.Join(otherRoot, "voyages", elsewhere.origin)
		}},
		{"a relative path out of the home", func(string) string {
			return filepath.Join("..", "..", filepath.Base(otherRoot), "voyages", elsewhere.origin)
		}},
		{"an id with a separator", func(string) string { return elsewhere.origin[:8] + "/" + elsewhere.origin[8:] }},
		{"another home's voyage id", func(string) string { return elsewhere.origin }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			_, err = h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: tc.origin(home), ForkAt: 1})
			require.Error(t, err)
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			assert.Empty(t, list, "nothing was started")
		})
	}
}

// A fork at an entry the agent picks: negative, beyond the end, the
// entry of a refused action, the entry of an action still in flight.
// The first two are refused; the others give a fork that verifies
// against its origin and holds exactly entries 1..N.
func TestAttackForkAtAnEntryTheAgentPicks(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	s := newForkScene(t, h)
	for _, at := range []int{-1, -1 << 62, 1 << 40} {
		_, err = h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: at})
		require.ErrorIs(t, err, helm.ErrInvalid, "fork at %d", at)
	}
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list, 1, "nothing was started")
}

// The agent damages the origin after the fork point so that open does
// not see it (a record's bytes flipped in the log, a rollback a cache
// proves), then forks before the damage: a DAMAGED voyage is salvaged,
// not forked, and a fork never records a head of a log verify rejects.
func TestAttackForkOfADamagedVoyageIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, home, id string)
	}{
		{"a record after the fork point flipped", func(t *testing.T, home, id string) {
			flipIn(t, tamper.Events(home, id), "third")
		}},
		{"a record in a sealed segment after the fork point flipped", func(t *testing.T, home, id string) {
			recs, err := tamper.Read(ctx, home, id)
			require.NoError(t, err)
			require.NoError(t, tamper.ForgeStubbed(ctx, home, id, recs, 1024, 0))
			segs, err := filepath.Glob(filepath.Join(tamper.Events(home, id), "*"))
			require.NoError(t, err)
			require.Greater(t, len(segs), 2, "the log is in several segments")
			flipIn(t, tamper.Events(home, id), "crashes on empty")
			last, err := os.ReadFile(segs[len(segs)-1])
			require.NoError(t, err)
			require.NotContains(t, string(last), "crashes on empty", "the flip is in a sealed segment")
		}},
		{"a rollback a cache proves", func(t *testing.T, home, id string) {
			recs, err := tamper.Read(ctx, home, id)
			require.NoError(t, err)
			require.NoError(t, tamper.Forge(ctx, home, id, recs[:len(recs)-1]))
		}},
		{"a note after the fork point turned into a stub", func(t *testing.T, home, id string) {
			recs, err := tamper.Read(ctx, home, id)
			require.NoError(t, err)
			for _, r := range recs {
				if strings.Contains(string(r.Data), "third") {
					require.NoError(t, tamper.Stub(ctx, home, id, r.Seq))
					require.NoError(t, tamper.DropCaches(home, id))
					return
				}
			}
			t.Fatal("no record holds the note")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			s := newForkScene(t, h)
			tc.damage(t, home, s.origin)
			rep, err := h.Verify(ctx, s.origin, nil)
			require.NoError(t, err)
			require.False(t, rep.OK(), "the origin is damaged")

			_, err = h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: 1})
			require.ErrorIs(t, err, helm.ErrDamaged, "a damaged voyage is salvaged, not forked")
			t.Logf("refused: %v", err)
			list, err := h.List(ctx, &helm.ListOptions{Status: "all"})
			if err == nil {
				for _, v := range list {
					assert.Equal(t, s.origin, v.ID, "nothing was started")
				}
			}
		})
	}
}

// Fork, then jettison in the origin: the origin's copy is gone; the fork
// made before the jettison is a voyage of its own and keeps its copy
// (as two voyages holding one artifact do), and both still verify.
// A fork made after the jettison never holds the bytes.
func TestAttackForkAfterAJettisonInTheOriginHoldsNoBytes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	s := newForkScene(t, h)
	v, err := h.Voyage(ctx, s.origin)
	require.NoError(t, err)
	r, err := v.OpenArtifact(ctx, s.large)
	require.NoError(t, err)
	largeBytes, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, v.Jettison(ctx, s.large, "holds a secret", who))
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: 2})
	require.NoError(t, err)
	defer f.Close()
	for _, hash := range []string{s.small, s.large} {
		a, err := f.ArtifactInfo(ctx, hash)
		require.NoError(t, err)
		assert.Equal(t, logbook.ArtifactJettisoned, a.Status, "artifact %s", hash)
		_, err = f.OpenArtifact(ctx, hash)
		assert.Error(t, err, "its bytes are not in the fork")
	}
	rep, err := h.Verify(ctx, f.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%s", problems(rep))
	assertNoFileHolds(t, filepath.Join(home, "voyages", f.ID()), largeBytes)
}

func assertNoFileHolds(t *testing.T, dir string, b []byte) {
	t.Helper()
	if len(b) == 0 {
		return
	}
	probe := b[len(b)/2 : len(b)/2+64]
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		assert.NotContains(t, string(data), string(probe), "%s holds the jettisoned bytes", p)
		return nil
	}))
}
