package helm_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
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
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
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
			stubHolding(t, home, id, "third", true)
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
		assert.False(t, bytes.Contains(data, probe), "%s holds the jettisoned bytes", p)
		return nil
	}))
}

// notesVoyage starts a voyage of notes on h and returns its id.
func notesVoyage(t *testing.T, h *helm.Home, notes ...string) string {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	for _, n := range notes {
		_, err = v.Note(ctx, n, who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	return v.ID()
}

// notesOf returns the texts of v's notes, in order.
func notesOf(t *testing.T, v *helm.Voyage) []string {
	t.Helper()
	var out []string
	for _, e := range entriesOf(t, v) {
		if e.Note != nil {
			out = append(out, e.Note.Text)
		}
	}
	return out
}

// The agent tears a record in the middle of the log (the end of a sealed
// segment cut off, as a crash would leave only the last one) and leaves
// the segments after it intact and well-formed — or forges them, with
// every checksum and chain link recomputed, to say what it likes. A
// torn record that is not the log's tail is damage: salvage and
// ReadIntact stop before it, and nothing after it is carried or shown.
func TestAttackSalvageStopsAtATornRecordInsideTheLog(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	h, err := helm.Open(root, nil)
	require.NoError(t, err)
	var notes []string
	for i := range 24 {
		notes = append(notes, fmt.Sprintf("note %02d %s", i, strings.Repeat("x", 100)))
	}
	id := notesVoyage(t, h, notes...)
	recs, err := tamper.Read(ctx, root, id)
	require.NoError(t, err)
	require.NoError(t, tamper.ForgeStubbed(ctx, root, id, recs, 1024, 0))
	segs, err := filepath.Glob(filepath.Join(tamper.Events(root, id), "*.seg"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 3, "the log is in several segments")
	// Tear the last record of the second segment.
	torn := segs[1]
	b, err := os.ReadFile(torn)
	require.NoError(t, err)
	var inTorn []string
	for _, n := range notes {
		if strings.Contains(string(b), n[:8]) {
			inTorn = append(inTorn, n)
		}
	}
	require.NotEmpty(t, inTorn, "the torn segment holds a note")
	require.NoError(t, os.WriteFile(torn, b[:len(b)-40], 0o600))
	require.NoError(t, tamper.DropCaches(root, id))
	dir := filepath.Join(root, "voyages", id)
	before := dirSums(t, dir)

	var shown []string
	damage, err := h.ReadIntact(ctx, id, nil, func(e helm.Event) error {
		if e.Note != nil {
			shown = append(shown, e.Note.Text)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotNil(t, damage, "a torn record inside the log is damage")
	assert.NotEmpty(t, shown, "what lies before the torn record is shown")
	lastTorn := inTorn[len(inTorn)-1]
	assert.NotContains(t, shown, lastTorn, "the torn record is not shown")
	for _, n := range shown {
		assert.Less(t, indexOf(notes, n), indexOf(notes, lastTorn), "nothing after the torn record is shown: %q", n)
	}

	s, err := h.Salvage(ctx, id, who, nil)
	require.NoError(t, err)
	defer s.Close()
	carried := notesOf(t, s)
	assert.Equal(t, shown, carried, "salvage carries what ReadIntact shows")
	assert.NotContains(t, carried, lastTorn)
	assertSalvagedCleanly(t, h, s, dir, before)
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// A salvage of a salvage: the agent damages the salvaged voyage too.
// The second salvage names the first as its origin, carries what is
// intact of it, and verifies against it; the first is left as it was.
func TestAttackSalvageOfASalvage(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	h, err := helm.Open(root, nil)
	require.NoError(t, err)
	id := notesVoyage(t, h, "alpha", "bravo", "charlie", "delta")
	flipIn(t, tamper.Events(root, id), "delta")
	s1, err := h.Salvage(ctx, id, who, nil)
	require.NoError(t, err)
	first := s1.ID()
	_, err = s1.Note(ctx, "echo", who)
	require.NoError(t, err)
	_, err = s1.Note(ctx, "foxtrot", who)
	require.NoError(t, err)
	require.NoError(t, s1.Close())

	_, err = h.Salvage(ctx, first, who, nil)
	require.ErrorIs(t, err, helm.ErrInvalid, "an intact salvage is forked, not salvaged")

	flipIn(t, tamper.Events(root, first), "foxtrot")
	dir := filepath.Join(root, "voyages", first)
	before := dirSums(t, dir)
	s2, err := h.Salvage(ctx, first, who, nil)
	require.NoError(t, err)
	defer s2.Close()
	assert.Equal(t, []string{"alpha", "bravo", "charlie", "echo"}, notesOf(t, s2))
	assert.Equal(t, first, s2.Info().Salvage.Voyage)
	assert.Equal(t, before, dirSums(t, dir), "the damaged salvage is untouched")
	rep, err := h.Verify(ctx, s2.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%s", problems(rep))
	assert.Contains(t, rep.Origin, "checked against voyage "+first)
}

// ReadIntact of a voyage damaged at its first record shows nothing, says
// where, and writes nothing; of an intact voyage it shows every event
// and says no damage, writing nothing either (no lock, no cache).
func TestAttackReadIntactAtTheEdges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, root, id string)
		want   []string
	}{
		{"intact, caches gone", func(t *testing.T, root, id string) {
			require.NoError(t, tamper.DropCaches(root, id))
		}, []string{"alpha", "bravo"}},
		{"damaged at record 1", func(t *testing.T, root, id string) {
			flipIn(t, tamper.Events(root, id), "Ship it")
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h, err := helm.Open(root, nil)
			require.NoError(t, err)
			id := notesVoyage(t, h, "alpha", "bravo")
			tc.damage(t, root, id)
			before := dirSums(t, root)
			var shown []string
			n := 0
			damage, err := h.ReadIntact(ctx, id, nil, func(e helm.Event) error {
				n++
				if e.Note != nil {
					shown = append(shown, e.Note.Text)
				}
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, tc.want, shown)
			if tc.want == nil {
				require.NotNil(t, damage)
				assert.Equal(t, uint64(1), damage.Seq)
				assert.Zero(t, n, "no event is shown")
			} else {
				assert.Nil(t, damage)
			}
			assert.Equal(t, before, dirSums(t, root), "reading never writes")
		})
	}
}

// The origin stowed an artifact, jettisoned it (not yet compacted), and
// later stowed the same bytes again. A fork taken between the jettison
// and the second stow holds the artifact as jettisoned: its bytes must
// not be in the fork (not in its log, not in its pack), though the
// origin holds them again now. Both sizes: a blob record and a pack
// frame; both backends.
func TestAttackForkBetweenAJettisonAndAStowAgainCarriesNoBytes(t *testing.T) {
	ctx := context.Background()
	for _, hc := range lineageHomes {
		for _, size := range []int{100, 200 << 10} {
			t.Run(fmt.Sprintf("%s/%d bytes", hc.name, size), func(t *testing.T) {
				h := hc.open(t)
				v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, who, nil)
				require.NoError(t, err)
				defer v.Close()
				b := make([]byte, size)
				_, err = crand.Read(b)
				require.NoError(t, err)
				text := hex.EncodeToString(b)
				observe := func() string {
					o, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "secret"}, Sighting: &noteSighting{Text: text}}, who)
					require.NoError(t, err)
					return o.Record.Artifact
				}
				hash := observe()
				require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", who))
				_, err = v.Note(ctx, "after the jettison", who)
				require.NoError(t, err)
				at := len(entriesOf(t, v))
				require.Equal(t, hash, observe(), "the same bytes, stowed again")
				_, err = v.Note(ctx, "later", who)
				require.NoError(t, err)

				f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: v.ID(), ForkAt: at})
				require.NoError(t, err)
				defer f.Close()
				a, err := f.ArtifactInfo(ctx, hash)
				require.NoError(t, err)
				assert.Equal(t, logbook.ArtifactJettisoned, a.Status)
				_, err = f.OpenArtifact(ctx, hash)
				assert.Error(t, err)
				rep, err := h.Verify(ctx, f.ID(), nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "%s", problems(rep))
				if dir := f.Storage().Dir; dir != "" {
					assertNoFileHolds(t, dir, []byte(text))
				}
			})
		}
	}
}

// A voyage's artifact is jettisoned (not yet compacted) after a record
// that the agent then damages: salvage carries nothing from the damage
// on, but the jettison it cannot carry must not be undone by the
// salvage. The salvaged voyage holds the artifact as jettisoned, its
// bytes nowhere in its files; the damaged voyage keeps them, untouched.
func TestAttackSalvageDoesNotResurrectAnArtifactJettisonedAfterTheDamage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, root, id string)
		hole   string
	}{
		{name: "a note before the jettison turned into a stub", damage: func(t *testing.T, root, id string) {
			stubHolding(t, root, id, "bravo", true)
		}},
		{name: "a note before the jettison flipped", hole: "a record's checksum stops the log's reader, so the jettison after it is never read", damage: func(t *testing.T, root, id string) {
			flipIn(t, tamper.Events(root, id), "bravo")
		}},
	} {
		for _, size := range []int{100, 200 << 10} {
			t.Run(fmt.Sprintf("%s/%d bytes", tc.name, size), func(t *testing.T) {
				if tc.hole != "" {
					t.Skip("KNOWN HOLE: " + tc.hole)
				}
				root := t.TempDir()
				h, err := helm.Open(root, nil)
				require.NoError(t, err)
				v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
				require.NoError(t, err)
				id := v.ID()
				hash, data := observeRandom(t, v, "secret", size)
				for _, n := range []string{"alpha", "bravo"} {
					_, err = v.Note(ctx, n, who)
					require.NoError(t, err)
				}
				require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", who))
				_, err = v.Note(ctx, "charlie", who)
				require.NoError(t, err)
				require.NoError(t, v.Close())
				tc.damage(t, root, id)
				dir := filepath.Join(root, "voyages", id)
				before := dirSums(t, dir)

				s, err := h.Salvage(ctx, id, who, nil)
				require.NoError(t, err)
				defer s.Close()
				assert.Equal(t, []string{"alpha"}, notesOf(t, s))
				a, err := s.ArtifactInfo(ctx, hash)
				require.NoError(t, err)
				assert.Equal(t, logbook.ArtifactJettisoned, a.Status, "the jettison is not undone")
				assert.Contains(t, a.Reason, "holds a customer's data")
				_, err = s.OpenArtifact(ctx, hash)
				assert.Error(t, err)
				assertNoFileHolds(t, filepath.Join(root, "voyages", s.ID()), data)
				assertSalvagedCleanly(t, h, s, dir, before)
			})
		}
	}
}

// The agent hides an event (its record turned into a stub, as
// compaction leaves a jettisoned artifact's blob record) and renumbers
// the entries after it so that they fold, recomputing every checksum and
// chain link: the log's own checks see only the stub no artifact event
// names. Salvage and ReadIntact stop before the stub: nothing after it
// is carried or shown, and the salvaged voyage's loss names the record.
func TestAttackSalvageCarriesNothingAfterAHiddenEvent(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	h, err := helm.Open(root, nil)
	require.NoError(t, err)
	id := notesVoyage(t, h, "alpha", "bravo", "charlie", "delta")
	recs, err := tamper.Read(ctx, root, id)
	require.NoError(t, err)
	var hidden uint64
	for i, r := range recs {
		e, err := projection.Decode(r.Data)
		require.NoError(t, err)
		if e.Note == nil {
			continue
		}
		switch {
		case e.Note.Text == "bravo":
			hidden = r.Seq
		case hidden != 0:
			e.N-- // renumbered so that the story folds without the hidden entry
			b, err := projection.Encode(e)
			require.NoError(t, err)
			recs[i].Data = b
		}
	}
	require.NotZero(t, hidden)
	require.NoError(t, tamper.ForgeStubbed(ctx, root, id, recs, 0, hidden))
	require.NoError(t, tamper.DropCaches(root, id))
	dir := filepath.Join(root, "voyages", id)
	before := dirSums(t, dir)

	var shown []string
	damage, err := h.ReadIntact(ctx, id, nil, func(e helm.Event) error {
		if e.Note != nil {
			shown = append(shown, e.Note.Text)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotNil(t, damage)
	assert.Equal(t, []string{"alpha"}, shown, "nothing after the hidden event is shown")
	assert.Equal(t, hidden, damage.Seq)

	s, err := h.Salvage(ctx, id, who, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"alpha"}, notesOf(t, s), "nothing after the hidden event is carried")
	assert.Equal(t, hidden, s.Info().Salvage.Lost.Seq, "the loss names the hidden record")
	assertSalvagedCleanly(t, h, s, dir, before)
}

// The agent hides an event (a stub no artifact event names) and forges,
// right after it, an event that folds without an entry number (a
// jettison of the voyage's evidence), leaving the entries after it as
// they were, so that the story no longer folds there and open fails
// before it can name the stub. Salvage stops before the stub: the forged
// jettison is not carried, and the loss names the stub. The artifact's
// bytes are not carried either (a salvage never undoes a jettison it can
// read, however placed), and the new voyage says where that jettison
// was; the damaged voyage keeps them.
func TestAttackSalvageCarriesNoForgedEventRightAfterAHiddenOne(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	h, err := helm.Open(root, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	hash, data := observeRandom(t, v, "evidence", 100)
	for _, n := range []string{"alpha", "bravo", "charlie"} {
		_, err = v.Note(ctx, n, who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	recs, err := tamper.Read(ctx, root, id)
	require.NoError(t, err)
	var out []tamper.Record
	var hidden uint64
	for _, r := range recs {
		out = append(out, tamper.Record{Data: r.Data})
		if strings.Contains(string(r.Data), "bravo") {
			hidden = uint64(len(out))
			forged, err := projection.Encode(&projection.Event{Type: projection.ArtifactJettisoned, At: time.Now(), Who: logbook.Who{Identity: "forger", Role: who.Role, Method: who.Method},
				Artifact: &projection.ArtifactRef{Hash: hash, Reason: "cleanup"}})
			require.NoError(t, err)
			out = append(out, tamper.Record{Data: forged})
		}
	}
	require.NotZero(t, hidden)
	require.NoError(t, tamper.ForgeStubbed(ctx, root, id, out, 0, hidden))
	require.NoError(t, tamper.DropCaches(root, id))
	dir := filepath.Join(root, "voyages", id)
	before := dirSums(t, dir)

	s, err := h.Salvage(ctx, id, who, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"alpha"}, notesOf(t, s))
	a, err := s.ArtifactInfo(ctx, hash)
	require.NoError(t, err)
	assert.Equal(t, logbook.ArtifactJettisoned, a.Status)
	assert.Contains(t, a.Reason, fmt.Sprintf("at record %d, after its damage (not carried): cleanup", hidden+1), "the salvage says where the jettison was")
	if assert.NotNil(t, a.CuratedBy) {
		assert.Equal(t, who.Identity, a.CuratedBy.Identity, "the jettison in the new voyage is the salvager's, not the forged event's")
	}
	assertNoFileHolds(t, filepath.Join(root, "voyages", s.ID()), data)
	assert.Equal(t, hidden, s.Info().Salvage.Lost.Seq, "the loss names the hidden record")
	assertSalvagedCleanly(t, h, s, dir, before)
}

// The agent rewrites what the fork's start records of its origin,
// recomputing the fork's chain: another voyage of the home as the
// origin (with its own head at the seq), or a seq beyond the records
// carried (with the origin's true head there, so that the fork's own
// records are taken for carried ones). Verify, with the origin at hand,
// reports it.
func TestAttackForkedOriginForged(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, home string, o *projection.Origin, other string)
	}{
		{"another voyage of the home as the origin", func(t *testing.T, home string, o *projection.Origin, other string) {
			o.Voyage = other
			o.Head = headAt(t, home, other, o.Seq)
		}},
		{"a seq beyond the records carried", func(t *testing.T, home string, o *projection.Origin, _ string) {
			o.Seq += 2
			o.Head = headAt(t, home, o.Voyage, o.Seq)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			s := newForkScene(t, h)
			other := newForkScene(t, h)
			f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: 1})
			require.NoError(t, err)
			for _, n := range []string{"mine one", "mine two", "mine three"} {
				_, err = f.Note(ctx, n, who)
				require.NoError(t, err)
			}
			fork := f.ID()
			require.NoError(t, f.Close())

			require.NoError(t, tamper.Edit(ctx, home, fork, func(r tamper.Record) []byte {
				if r.Seq != 1 {
					return r.Data
				}
				e, err := projection.Decode(r.Data)
				require.NoError(t, err)
				tc.forge(t, home, e.Voyage.Fork, other.origin)
				b, err := projection.Encode(e)
				require.NoError(t, err)
				return b
			}))
			require.NoError(t, tamper.DropCaches(home, fork))
			rep, err := h.Verify(ctx, fork, nil)
			require.NoError(t, err)
			assert.False(t, rep.OK(), "the forged origin is found")
			assert.Contains(t, problems(rep), "the carried records were changed")
		})
	}
}

// headAt is the chain's head of voyage id's log in home after record seq,
// as `helm voyage head` would have printed it then.
func headAt(t *testing.T, home, id string, seq uint64) string {
	t.Helper()
	link := chain.Genesis(id)
	require.NoError(t, segment.ScanDir(context.Background(), tamper.Events(home, id), 1, func(r segment.Record) error {
		if r.Seq <= seq {
			link = r.Link(link)
		}
		return nil
	}))
	return link.String()
}

// A person handed the origin off to an identity of theirs (with its
// credentials) before the fork point; the agent forks it. The fork is
// started by the forker, with the forker's identity: the carried
// handoff does not make the fork act as the identity the origin was
// handed to (its credentials are not the forker's to use). The same for
// a salvage by the agent.
func TestAttackForkDoesNotInheritAnIdentityHandedOffInTheOrigin(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	agent := logbook.Who{Identity: "bot", Role: "coder", Method: "claude-code"}
	person := logbook.Who{Identity: "alice", Role: "lead", Method: "human"}
	v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, person, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "first", person)
	require.NoError(t, err)
	_, err = h.Handoff(ctx, v.ID(), person, logbook.Handoff{To: "alice-admin", Why: "needs the admin token"})
	require.NoError(t, err)
	require.NoError(t, v.Refresh(ctx))
	require.Equal(t, "alice-admin", v.Info().CurrentIdentity)
	n := len(entriesOf(t, v))

	f, err := h.Start(ctx, "What if", helm.OpenWaters, agent, &helm.StartOptions{ForkOf: v.ID(), ForkAt: n})
	require.NoError(t, err)
	defer f.Close()
	info := f.Info()
	assert.Equal(t, "bot", info.Identity)
	assert.Equal(t, "bot", info.CurrentIdentity, "the fork acts as its forker, not as the identity the origin was handed to")
	entries := entriesOf(t, f)
	last := entries[len(entries)-1]
	if assert.NotNil(t, last.Handoff, "the fork's story says the identity is handed back") {
		assert.Equal(t, "alice-admin", last.Handoff.From)
		assert.Equal(t, "bot", last.Handoff.To)
		assert.Equal(t, "bot", last.Who.Identity)
	}
	rep, err := h.Verify(ctx, f.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%s", problems(rep))
	assert.Contains(t, rep.Origin, "checked against voyage "+v.ID())
}

// The agent forks a closed voyage at its last entry (its completion, a
// lifecycle entry): the fork continues independently — it is active and
// takes entries — and the origin stays closed.
func TestAttackForkOfAClosedVoyageAtItsLastEntryContinues(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	s := newForkScene(t, h)
	v, err := h.Voyage(ctx, s.origin)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
	n := len(entriesOf(t, v))
	require.NoError(t, v.Close())

	f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: n})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, logbook.StatusActive, f.Info().Status, "the fork continues")
	_, err = f.Note(ctx, "diverge", who)
	assert.NoError(t, err)
}

// assertSalvagedCleanly checks a salvage's two promises: the damaged
// voyage's directory dir is byte for byte as it was (before: dirSums),
// and the salvaged voyage s verifies.
func assertSalvagedCleanly(t *testing.T, h *helm.Home, s *helm.Voyage, dir string, before map[string][32]byte) {
	t.Helper()
	assert.Equal(t, before, dirSums(t, dir), "the damaged voyage is untouched")
	rep, err := h.Verify(context.Background(), s.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%s", problems(rep))
}
