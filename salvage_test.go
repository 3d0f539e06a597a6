package helm_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
)

// dirSums returns the SHA-256 of every file under dir, by path.
func dirSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = sha256.Sum256(b)
		return nil
	}))
	return out
}

// Salvage meets every forgery of the tamper matrix, with each set of
// witnesses: it refuses, saying why (no damage found, or none that can
// be placed), or carries what lies before the damage into a new voyage
// that verifies, with its origin at hand; the damaged voyage's files are
// left byte for byte as they were.
func TestSalvageOfEachTamperCase(t *testing.T) {
	ctx := context.Background()
	for _, tc := range tamperCases(ctx) {
		for _, w := range []struct {
			name string
			opts func(s *tamperScene) *helm.VerifyOptions
		}{
			{"no witness", func(*tamperScene) *helm.VerifyOptions { return nil }},
			{"the given head", func(s *tamperScene) *helm.VerifyOptions { return &helm.VerifyOptions{Heads: []chain.Head{s.head}} }},
			{"the commit's trailer", func(s *tamperScene) *helm.VerifyOptions {
				return &helm.VerifyOptions{Repositories: []string{s.repo}}
			}},
			{"both", func(s *tamperScene) *helm.VerifyOptions {
				return &helm.VerifyOptions{Heads: []chain.Head{s.head}, Repositories: []string{s.repo}}
			}},
		} {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				s := newTamperScene(t)
				tc.forge(t, s)
				if !strings.Contains(tc.name, "caches left") {
					require.NoError(t, tamper.DropCaches(s.home, s.id))
				}
				dir := filepath.Join(s.home, "voyages", s.id)
				before := dirSums(t, dir)
				h, err := helm.Open(s.home, nil)
				require.NoError(t, err)

				v, err := h.Salvage(ctx, s.id, who, w.opts(s))
				assert.Equal(t, before, dirSums(t, dir), "the damaged voyage is untouched")
				if err != nil {
					t.Logf("refused: %v", err)
					switch {
					case errors.Is(err, helm.ErrInvalid):
						assert.Contains(t, err.Error(), "verify finds no damage")
					default:
						require.ErrorIs(t, err, helm.ErrDamaged)
						assert.Contains(t, err.Error(), "nothing of voyage "+s.id+" can be told intact before its damage")
					}
					voyages, rerr := os.ReadDir(filepath.Join(s.home, "voyages"))
					require.NoError(t, rerr)
					assert.Len(t, voyages, 1, "nothing was started")
					return
				}
				defer v.Close()
				rep := v.Info().Salvage
				require.NotNil(t, rep, "the salvage names its origin")
				require.NotNil(t, rep.Lost, "and what was lost")
				t.Logf("carried up to %d of %d; lost: %+v", rep.Seq, s.head.Seq, rep.Lost)
				assert.Equal(t, s.id, rep.Voyage)
				assert.NotEmpty(t, rep.Lost.Reason, "what was lost is said")
				if rep.Lost.Seq != 0 && len(rep.Lost.Artifacts) == 0 {
					assert.Less(t, rep.Seq, rep.Lost.Seq, "nothing at or after the damage is carried")
				}
				for _, hash := range rep.Lost.Artifacts {
					a, err := v.ArtifactInfo(ctx, hash)
					require.NoError(t, err)
					assert.Equal(t, logbook.ArtifactJettisoned, a.Status, "a damaged artifact's bytes are not carried, and the salvage says so")
					assert.Contains(t, a.Reason, "damaged in voyage "+s.id)
				}
				assert.Len(t, rep.Head, 64)
				got, err := h.Verify(ctx, v.ID(), nil)
				require.NoError(t, err)
				assert.True(t, got.OK(), "the salvaged voyage verifies: %s", problems(got))
				assert.Contains(t, got.Origin, "checked against voyage "+s.id)
			})
		}
	}
}

func TestSalvageRefusesAnIntactVoyage(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	_, err := v.Note(ctx, "fine", who)
	require.NoError(t, err)
	_, err = h.Salvage(ctx, v.ID(), who, nil)
	require.ErrorIs(t, err, helm.ErrInvalid)
	assert.Contains(t, err.Error(), "verify finds no damage")
	var ve *helm.VoyageError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.Hint.Text, "fork")
}

// flipIn flips one byte of the first file under dir whose bytes hold
// marker, inside the marker: a record no longer matches its checksum.
func flipIn(t *testing.T, dir, marker string) {
	t.Helper()
	done := false
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || done {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if i := strings.Index(string(b), marker); i >= 0 {
			b[i] ^= 0x20
			done = true
			return os.WriteFile(p, b, 0o600)
		}
		return nil
	}))
	require.True(t, done, "no file under %s holds %q", dir, marker)
}

// flipLargest flips a byte in the middle of the largest file under dir:
// there, an artifact's stored bytes.
func flipLargest(t *testing.T, dir string) {
	t.Helper()
	var path string
	var size int64
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Size() > size {
			path, size = p, fi.Size()
		}
		return err
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[len(b)/2] ^= 0x20
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// The recorded agent damages a voyage so that what follows the damage
// (records intact in themselves) might be carried as if it were sound:
// a record's bytes flipped (its checksum no longer holds), or an event
// turned into a stub no jettison names (every checksum and chain
// recomputed). Salvage carries nothing from the damage on.
func TestAttackSalvageCarriesNothingAfterTheDamage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		shared bool
		damage func(t *testing.T, root, id string)
		want   []string // the notes carried
		// lostArtifact: the large artifact's bytes are lost, its events carried
		lostArtifact bool
	}{
		{name: "a record's bytes flipped, on disk", want: []string{"alpha", "bravo"}, damage: func(t *testing.T, root, id string) {
			flipIn(t, filepath.Join(root, "voyages", id, "events"), "charlie")
		}},
		{name: "an artifact's stored bytes flipped, on disk", want: []string{"alpha", "bravo", "charlie", "delta"}, lostArtifact: true, damage: func(t *testing.T, root, id string) {
			flipLargest(t, filepath.Join(root, "voyages", id))
		}},
		{name: "an artifact's stored bytes flipped, in a shared store", shared: true, want: []string{"alpha", "bravo", "charlie", "delta"}, lostArtifact: true, damage: func(t *testing.T, root, id string) {
			flipLargest(t, filepath.Join(root, "voyages", id))
		}},
		{name: "a note turned into a stub", want: []string{"alpha"}, damage: func(t *testing.T, root, id string) {
			stubHolding(t, root, id, "bravo", true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var h *helm.Home
			if tc.shared {
				h = sharedHome(t, root, nil)
			} else {
				var err error
				h, err = helm.Open(root, nil)
				require.NoError(t, err)
			}
			v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			id := v.ID()
			large, _ := observeRandom(t, v, "large", 300<<10)
			for _, n := range []string{"alpha", "bravo", "charlie", "delta"} {
				_, err = v.Note(ctx, n, who)
				require.NoError(t, err)
			}
			require.NoError(t, v.Close())
			tc.damage(t, root, id)
			dir := filepath.Join(root, "voyages", id)
			before := dirSums(t, dir)

			s, err := h.Salvage(ctx, id, who, nil)
			require.NoError(t, err)
			defer s.Close()
			rep := s.Info().Salvage
			require.NotNil(t, rep)
			assert.Equal(t, before, dirSums(t, dir), "the damaged voyage is untouched")
			var notes []string
			for _, e := range entriesOf(t, s) {
				notes = append(notes, e.Note.Text)
			}
			assert.Equal(t, tc.want, notes, "nothing after the damage is carried")
			assert.NotEmpty(t, rep.Lost.Reason)
			a, err := s.ArtifactInfo(ctx, large)
			require.NoError(t, err)
			if tc.lostArtifact {
				assert.Equal(t, []string{large}, rep.Lost.Artifacts)
				assert.Equal(t, logbook.ArtifactJettisoned, a.Status)
			} else {
				assert.Positive(t, rep.Lost.Records+uint64(rep.Lost.Bytes), "what was not carried is counted: %+v", rep.Lost)
				assert.Equal(t, logbook.ArtifactStowed, a.Status, "its bytes are carried")
			}
			got, err := h.Verify(ctx, s.ID(), nil)
			require.NoError(t, err)
			assert.True(t, got.OK(), "%s", problems(got))
			assert.Equal(t, id, s.Info().Salvage.Voyage)
			t.Logf("lost: %+v", rep.Lost)
		})
	}
}

func TestReadIntactStopsAtTheDamageAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage bool
		want   []string
	}{
		{"intact", false, []string{"alpha", "bravo", "charlie"}},
		{"a record's bytes flipped", true, []string{"alpha", "bravo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h, err := helm.Open(root, nil)
			require.NoError(t, err)
			v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			id := v.ID()
			for _, n := range []string{"alpha", "bravo", "charlie"} {
				_, err = v.Note(ctx, n, who)
				require.NoError(t, err)
			}
			require.NoError(t, v.Close())
			if tc.damage {
				flipIn(t, filepath.Join(root, "voyages", id, "events"), "charlie")
			}
			before := dirSums(t, root)
			var notes []string
			damage, err := h.ReadIntact(ctx, id, nil, func(e helm.Event) error {
				if e.Note != nil {
					notes = append(notes, e.Note.Text)
				}
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, tc.want, notes)
			if tc.damage {
				require.NotNil(t, damage)
				assert.Equal(t, id, damage.Voyage)
				assert.NotZero(t, damage.Seq)
				assert.Contains(t, damage.Reason, "checksum")
			} else {
				assert.Nil(t, damage)
			}
			assert.Equal(t, before, dirSums(t, root), "reading never writes")
		})
	}
}

func TestSalvageRefusesAVoyageDamagedFromItsStart(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	h, err := helm.Open(root, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Ship the widget", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	_, err = v.Note(ctx, "alpha", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	flipIn(t, filepath.Join(root, "voyages", id, "events"), "Ship the widget")
	before := dirSums(t, root)

	_, err = h.Salvage(ctx, id, who, nil)
	require.ErrorIs(t, err, helm.ErrDamaged)
	assert.Contains(t, err.Error(), "nothing of voyage "+id+" can be told intact before its damage")
	var ve *helm.VoyageError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.Hint.Text, "backup")
	assert.Equal(t, before, dirSums(t, root), "nothing was written")
}
