package helm_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// homes are the two backends a fork and a salvage work on.
var lineageHomes = []struct {
	name string
	open func(t *testing.T) *helm.Home
}{
	{"disk", func(t *testing.T) *helm.Home {
		h, err := helm.Open(t.TempDir(), nil)
		require.NoError(t, err)
		return h
	}},
	{"shared store", func(t *testing.T) *helm.Home { return sharedHome(t, t.TempDir(), nil) }},
}

// forkScene is an origin voyage of three entries with a small artifact
// (a blob record) and a large one (a pack frame) observed before entry
// 2, the small one jettisoned after entry 3.
type forkScene struct {
	h            *helm.Home
	origin       string
	small, large string
}

func newForkScene(t *testing.T, h *helm.Home) *forkScene {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	s := &forkScene{h: h, origin: v.ID()}
	_, err = v.Note(ctx, "first", who)
	require.NoError(t, err)
	s.small, _ = observeRandom(t, v, "small", 100)
	s.large, _ = observeRandom(t, v, "large", 200<<10)
	_, err = v.TakeBearing(ctx, "the widget crashes on empty input", who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "third", who)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, s.small, "holds a customer's data", who))
	return s
}

func TestForkCarriesEntriesUpToNAndDiverges(t *testing.T) {
	for _, home := range lineageHomes {
		t.Run(home.name, func(t *testing.T) {
			ctx := context.Background()
			s := newForkScene(t, home.open(t))
			before, err := s.h.Voyage(ctx, s.origin)
			require.NoError(t, err)
			originHead, err := before.Head(ctx)
			require.NoError(t, err)
			before.Close()

			f, err := s.h.Start(ctx, "What if the widget had a guard", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin[:8], ForkAt: 2})
			require.NoError(t, err)
			defer f.Close()
			info := f.Info()
			require.NotNil(t, info.Fork, "the fork names its origin")
			assert.Equal(t, s.origin, info.Fork.Voyage)
			assert.Equal(t, 2, info.Fork.Entry)
			assert.Len(t, info.Fork.Head, 64)
			got := entriesOf(t, f)
			require.Len(t, got, 2, "entries 1..2 of the origin")
			assert.Equal(t, "first", got[0].Note.Text)
			assert.Equal(t, "the widget crashes on empty input", got[1].Bearing.Reading.Text)
			assert.Equal(t, info.Fork.Seq, got[1].Seq, "the fork point is entry 2's record")

			large, err := f.OpenArtifact(ctx, s.large)
			require.NoError(t, err, "the large artifact's bytes are carried")
			_, err = io.ReadAll(large)
			require.NoError(t, err)
			large.Close()
			small, err := f.ArtifactInfo(ctx, s.small)
			require.NoError(t, err)
			assert.Equal(t, logbook.ArtifactJettisoned, small.Status, "jettisoned in the origin after the fork point: never resurrected")
			assert.Contains(t, small.Reason, s.origin)

			e, err := f.Note(ctx, "the fork goes on", who)
			require.NoError(t, err)
			assert.Equal(t, 3, e.N, "the fork numbers on from its entry")

			rep, err := s.h.Verify(ctx, f.ID(), nil)
			require.NoError(t, err)
			assert.True(t, rep.OK(), "the fork verifies: %v", rep.Problems)
			if home.name == "disk" {
				_, err = f.Compact(ctx)
				require.NoError(t, err, "the fork compacts like any voyage")
				rep, err = s.h.Verify(ctx, f.ID(), nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "the compacted fork verifies: %v", rep.Problems)
				assert.Contains(t, rep.Origin, "checked against voyage "+s.origin)
			}

			after, err := s.h.Voyage(ctx, s.origin)
			require.NoError(t, err)
			defer after.Close()
			head, err := after.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, originHead, head, "the origin is untouched")
			assert.Len(t, entriesOf(t, after), 3)
		})
	}
}

// The recorded agent forks a voyage, then edits what the fork carried
// (with helm's own writer: every checksum and the fork's chain
// recomputed, its caches removed), or the head the fork's start recorded:
// verify, with the origin in the home, names the difference.
func TestAttackForkedPrefixEditedIsFoundAgainstTheOrigin(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, home, fork string)
		want  string
	}{
		{name: "a carried note's text", want: "the carried records were changed", forge: func(t *testing.T, home, fork string) {
			n, err := tamper.Replace(ctx, home, fork, "first", "FIRST")
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}},
		{name: "a carried observation dropped, the rest renumbered", want: "the carried records were changed", forge: func(t *testing.T, home, fork string) {
			require.NoError(t, tamper.Edit(ctx, home, fork, func(r tamper.Record) []byte {
				if strings.Contains(string(r.Data), `"topic":"large"`) {
					return nil
				}
				return r.Data
			}))
		}},
		{name: "the recorded head", want: "the start recorded", forge: func(t *testing.T, home, fork string) {
			require.NoError(t, tamper.Edit(ctx, home, fork, func(r tamper.Record) []byte {
				if r.Seq != 1 {
					return r.Data
				}
				e, err := projection.Decode(r.Data)
				require.NoError(t, err)
				e.Voyage.Fork.Head = strings.Repeat("ab", 32)
				b, err := projection.Encode(e)
				require.NoError(t, err)
				return b
			}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			s := newForkScene(t, h)
			f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: 2})
			require.NoError(t, err)
			fork := f.ID()
			require.NoError(t, f.Close())
			rep, err := h.Verify(ctx, fork, nil)
			require.NoError(t, err)
			require.True(t, rep.OK(), "%v", rep.Problems)
			require.Contains(t, rep.Origin, "checked against voyage "+s.origin)

			tc.forge(t, home, fork)
			require.NoError(t, tamper.DropCaches(home, fork))

			rep, err = h.Verify(ctx, fork, nil)
			require.NoError(t, err)
			require.False(t, rep.OK(), "the origin shows the edit")
			assert.Contains(t, problems(rep), s.origin, "the report names the origin")
			assert.Contains(t, problems(rep), tc.want)
			assert.NotContains(t, rep.Origin, "checked against")
		})
	}
}

func TestForkWithoutItsOriginVerifiesAndSaysItCannotCheck(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	s := newForkScene(t, h)
	f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: 3})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	other, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	_, err = h.Copy(ctx, f.ID(), other)
	require.NoError(t, err)

	rep, err := other.Verify(ctx, f.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "the fork's log is self-contained: %v", rep.Problems)
	assert.Contains(t, rep.Origin, "not checked: the origin, voyage "+s.origin+", is not in")
	v, err := other.Voyage(ctx, f.ID())
	require.NoError(t, err)
	defer v.Close()
	assert.Len(t, entriesOf(t, v), 3)
	assert.Equal(t, s.origin, v.Info().Fork.Voyage)
	events, cut, err := helm.ReadVoyageDir(ctx, v.Storage().Dir)
	require.NoError(t, err, "the fork's directory reads on its own (replay)")
	assert.Nil(t, cut)
	assert.Equal(t, s.origin, events[0].Voyage.Fork.Voyage)
}

func TestForkRefusesAnEntryTheOriginLacks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		at   int
		want string
	}{
		{"zero", 0, "say which entry"},
		{"beyond the story", 4, "has no entry 4 (its story holds 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := helm.Open(t.TempDir(), nil)
			require.NoError(t, err)
			s := newForkScene(t, h)
			_, err = h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: s.origin, ForkAt: tc.at})
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			assert.Len(t, list, 1, "nothing was started")
		})
	}
}

// Every corpus voyage, of every format helm wrote, forks at its first
// entry and at its last: the fork opens, folds the carried entries, and
// verifies against its origin.
func TestForkOfEveryCorpusVoyage(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("testdata", "voyages", "*", "views.golden.json"))
	require.NoError(t, err)
	ctx := context.Background()
	for _, g := range entries {
		dir := filepath.Dir(g)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := helm.Open(copyTree(t, dir), nil)
			require.NoError(t, err)
			list, err := h.List(ctx, &helm.ListOptions{Status: helm.ListAll})
			require.NoError(t, err)
			for _, info := range list {
				v, err := h.Voyage(ctx, info.ID)
				require.NoError(t, err)
				origin := entriesOf(t, v)
				require.NoError(t, v.Close())
				if len(origin) == 0 {
					continue
				}
				for _, at := range []int{1, len(origin)} {
					f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: info.ID, ForkAt: at})
					require.NoError(t, err, "fork %s at %d", info.ID, at)
					got := entriesOf(t, f)
					require.Len(t, got, at)
					assert.Equal(t, origin[at-1].Kind, got[at-1].Kind)
					require.NoError(t, f.Close())
					rep, err := h.Verify(ctx, f.ID(), nil)
					require.NoError(t, err)
					assert.True(t, rep.OK(), "fork of %s at %d: %s", info.ID, at, problems(rep))
					assert.Contains(t, rep.Origin, "checked against voyage "+info.ID)
				}
			}
		})
	}
}

// The fork holds the voyage as it stood once entry N was recorded: an
// observation made after it is not on the fork's slate, one made before
// it (and not sealed by a bearing) is.
func TestForkKeepsTheSlateAsItStoodAtTheEntry(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	_, err := v.Note(ctx, "one", who)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "ci", Text: "green"}, who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "two", who)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		at    int
		slate int
	}{
		{"before the observation", 1, 0},
		{"after it", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: v.ID(), ForkAt: tc.at})
			require.NoError(t, err)
			defer f.Close()
			assert.Len(t, f.Slate(), tc.slate)
		})
	}
}
