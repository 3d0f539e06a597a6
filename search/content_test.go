package search_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/searchindex"
	"github.com/helmlog/helm/internal/voyagetest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/search"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/store/storetest"
)

// tb is what the observe helpers need of a test: the writer process
// (crashingWriter) has no testing.T.
type tb interface {
	Helper()
	require.TestingT
}

// observeFile records a file-contents sighting of path holding text, and
// returns its artifact's hash.
func observeFile(t tb, v *helm.Voyage, path, text string) string {
	t.Helper()
	m, err := marks.NewFileContents(path)
	require.NoError(t, err)
	o, err := v.Record(context.Background(), helm.Observation{Mark: m, Sighting: &sighting.Files{Contents: []sighting.FileContents{
		{Path: path, Content: sighting.FileContent{Type: sighting.ContentText, Text: text, SizeBytes: uint64(len(text))}},
	}}}, who)
	require.NoError(t, err)
	return o.Artifact.Hash
}

// observeCommand records a command's sighting whose stdout is out.
func observeCommand(t tb, v *helm.Voyage, out string, argv ...string) string {
	t.Helper()
	m, err := marks.NewCommand(".", argv...)
	require.NoError(t, err)
	code := 0
	o, err := v.Record(context.Background(), helm.Observation{Mark: m, Sighting: &sighting.Command{ExitCode: &code, Stdout: out}}, who)
	require.NoError(t, err)
	return o.Artifact.Hash
}

// contentHome holds voyage A (a file and a command's output, sealed by a
// bearing; a note) and voyage B (a file still on the slate), both written
// by this process and closed.
func contentHome(t *testing.T, h *helm.Home) (a, b string) {
	t.Helper()
	ctx := context.Background()
	va, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer va.Close()
	observeFile(t, va, "widget.go", "package widget\n\n// Frobnicate turns the crank; it panics on a nil Gizmo.\nfunc Frobnicate() {}\n")
	observeCommand(t, va, "--- FAIL: TestQuokka (0.00s)\n    quokka_test.go:12: want marsupial\n", "go", "test", "./...")
	_, err = va.TakeBearing(ctx, "The widget panics on a nil gizmo.", who, nil)
	require.NoError(t, err)
	_, err = va.Note(ctx, "The quokka test fails: a marsupial is missing.", bob)
	require.NoError(t, err)
	vb, err := h.Start(ctx, "Read the docs", helm.OpenWaters, bob, nil)
	require.NoError(t, err)
	defer vb.Close()
	observeFile(t, vb, "docs/intro.md", "Welcome. The gizmo is configured in gizmo.toml; see the wombat section.")
	return va.ID(), vb.ID()
}

type hitLine struct {
	Voyage, Kind, Mark, Snippet, Text string
	N                                 int
}

func lines(hits []search.Hit) []hitLine {
	var out []hitLine
	for _, h := range hits {
		l := hitLine{Voyage: h.Voyage, Kind: string(h.Kind), Mark: h.Mark, Snippet: h.Snippet, N: h.N}
		if h.Kind != search.KindSighting {
			l.Text = h.Text
		}
		out = append(out, l)
	}
	return out
}

func TestFindWordsInEntriesAndInsideSightings(t *testing.T) {
	ctx := context.Background()
	for _, indexed := range []bool{false, true} {
		h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
		require.NoError(t, err)
		a, b := contentHome(t, h)
		if indexed {
			rep, err := search.Reindex(ctx, h, nil)
			require.NoError(t, err)
			require.Equal(t, 2, rep.Indexed)
		}
		tests := []struct {
			name  string
			q     search.Query
			want  []hitLine
			count int // voyages answered by the index, when indexed
		}{
			{"a word inside a file's contents", search.Query{Words: "frobnicate"}, []hitLine{
				{Voyage: a, Kind: "sighting", Mark: `file-contents:"widget.go"`, N: 1, Snippet: "package widget // Frobnicate turns the crank; it panics on a nil Gizmo. func Frobnicate(…"},
			}, 2},
			{"a word inside a command's output", search.Query{Words: "TESTQUOKKA"}, []hitLine{
				{Voyage: a, Kind: "sighting", Mark: `command:"." "go" "test" "./..."`, N: 1, Snippet: "--- FAIL: TestQuokka (0.00s) quokka_test.go:12: want marsupial"},
			}, 2},
			{"words in entries and sightings, across voyages", search.Query{Words: "gizmo"}, []hitLine{
				{Voyage: a, Kind: "sighting", Mark: `file-contents:"widget.go"`, N: 1, Snippet: "…e widget // Frobnicate turns the crank; it panics on a nil Gizmo. func Frobnicate() {}"},
				{Voyage: a, Kind: "bearing", N: 1, Text: "The widget panics on a nil gizmo."},
				{Voyage: b, Kind: "sighting", Mark: `file-contents:"docs/intro.md"`, Snippet: "Welcome. The gizmo is configured in gizmo.toml; see the wombat section."},
			}, 2},
			{"only entries", search.Query{Words: "gizmo", In: search.InEntries}, []hitLine{
				{Voyage: a, Kind: "bearing", N: 1, Text: "The widget panics on a nil gizmo."},
			}, 2},
			{"only sightings, by who observed", search.Query{Words: "marsupial", In: search.InSightings, Who: who.Identity}, []hitLine{
				{Voyage: a, Kind: "sighting", Mark: `command:"." "go" "test" "./..."`, N: 1, Snippet: "--- FAIL: TestQuokka (0.00s) quokka_test.go:12: want marsupial"},
			}, 2},
			{"every word, in one sighting", search.Query{Words: "gizmo wombat"}, []hitLine{
				{Voyage: b, Kind: "sighting", Mark: `file-contents:"docs/intro.md"`, Snippet: "Welcome. The gizmo is configured in gizmo.toml; see the wombat section."},
			}, 2},
			{"words in no one place", search.Query{Words: "frobnicate wombat"}, nil, 2},
			{"a word nowhere", search.Query{Words: "aardvark"}, nil, 2},
			{"a word of a key is no hit", search.Query{Words: "stdout"}, nil, 2},
			{"a note's words", search.Query{Words: "missing marsupial"}, []hitLine{
				{Voyage: a, Kind: "note", N: 2, Text: "The quokka test fails: a marsupial is missing."},
			}, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, err := search.Find(ctx, h, &tt.q)
				require.NoError(t, err)
				assert.Equal(t, tt.want, lines(res.Hits))
				if indexed {
					assert.Equal(t, tt.count, res.Indexed)
					assert.Zero(t, res.Scanned)
				} else {
					assert.Equal(t, 2, res.Scanned, "no index: every voyage is read")
				}
			})
		}
	}
}

func TestFindLimitsHitsAndSaysThereWereMore(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	contentHome(t, h)
	res, err := search.Find(ctx, h, &search.Query{Words: "gizmo", Limit: 1})
	require.NoError(t, err)
	assert.Len(t, res.Hits, 1)
	assert.True(t, res.More)
}

func TestFindRefusesBadWordsQueries(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	tests := []struct {
		name string
		q    search.Query
	}{
		{"words of no letter", search.Query{Words: "-- !!"}},
		{"a place without words", search.Query{In: search.InSightings, Who: "bob"}},
		{"an unknown place", search.Query{Words: "x", In: "logs"}},
		{"a negative limit", search.Query{Words: "x", Limit: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := search.Find(ctx, h, &tt.q)
			assert.ErrorIs(t, err, helm.ErrInvalid)
		})
	}
}

// snapshotDir returns every file under dir with its contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	return out
}

func TestFindNeverWritesTheIndex(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, h *helm.Home)
	}{
		{"no index yet", func(*testing.T, *helm.Home) {}},
		{"an index that lags", func(t *testing.T, h *helm.Home) {
			_, err := search.Reindex(ctx, h, nil)
			require.NoError(t, err)
			v, err := h.Start(ctx, "Later", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			observeFile(t, v, "late.txt", "gizmo again")
			require.NoError(t, v.Close())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
			require.NoError(t, err)
			contentHome(t, h)
			tt.setup(t, h)
			before := snapshotDir(t, filepath.Join(h.Dir(), searchindex.Dir))
			_, err = search.Find(ctx, h, &search.Query{Words: "gizmo"})
			require.NoError(t, err)
			assert.Equal(t, before, snapshotDir(t, filepath.Join(h.Dir(), searchindex.Dir)))
		})
	}
}

// TestMain lets this test binary be a writer the test kills: with
// HELM_SEARCH_TEST_WRITER=HOME it records a voyage in HOME, completes it,
// and exits mid-indexing (after the new segment, before the manifest).
func TestMain(m *testing.M) {
	if home := os.Getenv("HELM_SEARCH_TEST_WRITER"); home != "" {
		crashingWriter(home)
		return
	}
	os.Exit(m.Run())
}

func crashingWriter(home string) {
	ctx := context.Background()
	fail := func(err error) {
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
	}
	h, err := helm.Open(home, nil)
	fail(err)
	v, err := h.Start(ctx, "Chase the flaky test", helm.OpenWaters, who, nil)
	fail(err)
	t := exitT{}
	observeFile(t, v, "notes/plan.txt", "Step one: replace the marmalade cache with a ring buffer.")
	observeCommand(t, v, "ok  \tflaky/pkg\t0.3s\nPASS xylophone\n", "go", "test")
	_, err = v.TakeBearing(ctx, "The flake is gone.", who, nil)
	fail(err)
	fail(v.Complete(ctx, logbook.OutcomeCompleted, "Fixed.", who))
	searchindex.AfterSegment = func() { os.Exit(137) } // killed mid-indexing
	_, err = search.Reindex(ctx, h, &search.ReindexOptions{Voyages: []string{v.ID()}})
	fail(err)
	os.Exit(0) // not reached: the hook exits
}

// exitT is the writer process's test: a failed require exits.
type exitT struct{}

func (exitT) Helper()                   {}
func (exitT) Errorf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (exitT) FailNow()                  { os.Exit(1) }

func TestFindAfterACrashMidIndexingScansWhatTheIndexLacks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	a, _ := contentHome(t, h)
	_, err = search.Reindex(ctx, h, nil)
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HELM_SEARCH_TEST_WRITER="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, 137, exit.ExitCode(), "the writer died mid-indexing: %s", out)
	segs, err := filepath.Glob(filepath.Join(dir, searchindex.Dir, "*.seg"))
	require.NoError(t, err)
	require.Len(t, segs, 2, "the crashed writer left its segment, which no manifest names")

	infos, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, infos, 3)
	crashed := infos[2].ID
	tests := []struct {
		words, mark, voyage string
	}{
		{"marmalade", `file-contents:"notes/plan.txt"`, crashed},
		{"xylophone", `command:"." "go" "test"`, crashed},
		{"frobnicate", `file-contents:"widget.go"`, a},
	}
	check := func(t *testing.T, scanned int) {
		for _, tt := range tests {
			res, err := search.Find(ctx, h, &search.Query{Words: tt.words})
			require.NoError(t, err)
			require.Len(t, res.Hits, 1, tt.words)
			assert.Equal(t, tt.voyage, res.Hits[0].Voyage)
			assert.Equal(t, tt.mark, res.Hits[0].Mark)
			assert.Equal(t, scanned, res.Scanned, "voyages read whole")
		}
	}
	t.Run("search still finds what the crashed writer recorded", func(t *testing.T) { check(t, 1) })

	rep, err := search.Reindex(ctx, h, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Indexed)
	assert.Equal(t, 2, rep.Current)
	t.Run("reindex repairs: nothing is scanned", func(t *testing.T) { check(t, 0) })
	segs, err = filepath.Glob(filepath.Join(dir, searchindex.Dir, "*.seg"))
	require.NoError(t, err)
	assert.Len(t, segs, 2, "the orphan is gone; two segments in force")
}

func TestFindNeverShowsJettisonedContent(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		reindex bool // after the jettison
		reduce  bool // reduced to a summary, not jettisoned
	}{
		{"the index lags the jettison", false, false},
		{"the index forgot it", true, false},
		{"the index lags the reduction", false, true},
		{"the index holds the summary, not the original", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
			require.NoError(t, err)
			v, err := h.Start(ctx, "Look at the config", helm.OpenWaters, who, nil)
			require.NoError(t, err)
			defer v.Close()
			hash := observeFile(t, v, "customer.csv", "name,card\nAda Lovelace,hunter-kumquat\n")
			observeFile(t, v, "other.txt", "kumquat season")
			_, err = search.Reindex(ctx, h, nil)
			require.NoError(t, err)
			if tt.reduce {
				_, err = v.Reduce(ctx, hash, helm.Reduction{Summary: &sighting.Context{Description: "a customer list, redacted by hand: one armadillo"}, Method: "human"}, bob)
				require.NoError(t, err)
			} else {
				require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", bob))
			}
			if tt.reindex {
				_, err = search.Reindex(ctx, h, nil)
				require.NoError(t, err)
				raw := snapshotDir(t, filepath.Join(h.Dir(), searchindex.Dir))
				for p, b := range raw {
					assert.NotContains(t, b, "lovelace", p)
				}
			}
			for _, words := range []string{"lovelace", "kumquat", "ada hunter"} {
				res, err := search.Find(ctx, h, &search.Query{Words: words})
				require.NoError(t, err)
				for _, hit := range res.Hits {
					assert.NotEqual(t, hash, hit.Artifact, words)
					assert.NotContains(t, strings.ToLower(hit.Snippet), "lovelace")
				}
			}
			res, err := search.Find(ctx, h, &search.Query{Words: "kumquat"})
			require.NoError(t, err)
			assert.Len(t, res.Hits, 1, "the kept file still is found")
			res, err = search.Find(ctx, h, &search.Query{Words: "armadillo"})
			require.NoError(t, err)
			if tt.reduce {
				require.Len(t, res.Hits, 1, "the summary is found, as a sighting of the reduced file's mark")
				assert.Equal(t, `file-contents:"customer.csv"`, res.Hits[0].Mark)
			} else {
				assert.Empty(t, res.Hits)
			}
		})
	}
}

func TestReindexHoldsNoSecretRedactionRemoved(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Deploy", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	observeCommand(t, v, "token="+secret+" deployed the pelican", "env")
	_, err = search.Reindex(ctx, h, nil)
	require.NoError(t, err)
	for p, b := range snapshotDir(t, filepath.Join(h.Dir(), searchindex.Dir)) {
		assert.NotContains(t, strings.ToLower(b), strings.ToLower(secret), p)
	}
	res, err := search.Find(ctx, h, &search.Query{Words: "pelican"})
	require.NoError(t, err)
	require.Len(t, res.Hits, 1)
	assert.NotContains(t, res.Hits[0].Snippet, secret)
	res, err = search.Find(ctx, h, &search.Query{Words: secret})
	require.NoError(t, err)
	assert.Empty(t, res.Hits)
}

func TestFindWordsInASharedHome(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	h, err := helm.OpenStore(filepath.Join(dir, "local"), st, "the test's store", voyagetest.Fixed())
	require.NoError(t, err)
	a, b := contentHome(t, h)
	for _, reindex := range []bool{false, true} {
		if reindex {
			rep, err := search.Reindex(ctx, h, nil)
			require.NoError(t, err)
			require.Equal(t, 2, rep.Indexed)
		}
		res, err := search.Find(ctx, h, &search.Query{Words: "gizmo", In: search.InSightings})
		require.NoError(t, err)
		var got []string
		for _, hit := range res.Hits {
			got = append(got, hit.Voyage)
		}
		assert.Equal(t, []string{a, b}, got)
		assert.Equal(t, !reindex, res.Scanned == 2)
	}
	assert.False(t, slices.Contains([]string{a, b}, ""))
}

// TestAttackForgedIndexNeverShowsWhatTheLogDoesNotHold: the recorded
// agent, running helm as the same user, knows the index's format (it
// uses the package that writes it, checksums and all) and plants or edits
// index files. Search re-checks every hit against the voyage's log, and
// treats an index that does not decode, or that claims a seq a voyage
// does not have, as unable to vouch: it scans, so no hit is hidden by
// these forgeries either.
func TestAttackForgedIndexNeverShowsWhatTheLogDoesNotHold(t *testing.T) {
	ctx := context.Background()
	type home struct {
		h                  *helm.Home
		dir                string
		a, b, c            string // voyage ids
		jettisoned, secret string // A's jettisoned artifact's hash; C's unindexed word
		bFile              string // B's artifact
	}
	setup := func(t *testing.T) home {
		h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
		require.NoError(t, err)
		va, err := h.Start(ctx, "Audit", helm.OpenWaters, who, nil)
		require.NoError(t, err)
		defer va.Close()
		j := observeFile(t, va, "customers.csv", "Ada Lovelace, card lemming-7741")
		observeFile(t, va, "kept.txt", "nothing to see")
		vb, err := h.Start(ctx, "Other", helm.OpenWaters, bob, nil)
		require.NoError(t, err)
		defer vb.Close()
		bFile := observeFile(t, vb, "b.txt", "plain words")
		vc, err := h.Start(ctx, "Third", helm.OpenWaters, bob, nil)
		require.NoError(t, err)
		defer vc.Close()
		observeFile(t, vc, "c.txt", "first look")
		_, err = search.Reindex(ctx, h, nil)
		require.NoError(t, err)
		// After the index: a jettison in A, a new word in C.
		require.NoError(t, va.Jettison(ctx, j, "customer data", bob))
		observeFile(t, vc, "c2.txt", "the narwhal appears later")
		return home{h: h, dir: filepath.Join(h.Dir(), searchindex.Dir), a: va.ID(), b: vb.ID(), c: vc.ID(), jettisoned: j, secret: "narwhal", bFile: bFile}
	}
	seqOf := func(t *testing.T, h *helm.Home, id string) uint64 {
		infos, err := h.List(ctx, nil)
		require.NoError(t, err)
		for _, i := range infos {
			if i.ID == id {
				return i.Seq
			}
		}
		t.Fatalf("no voyage %s", id)
		return 0
	}
	plant := func(t *testing.T, hm home, replace bool, fill func(b *searchindex.Builder)) {
		b := searchindex.NewBuilder()
		fill(b)
		require.NoError(t, searchindex.Write(ctx, hm.dir, b, searchindex.WriteOptions{Replace: replace, NoSync: true}))
	}
	tests := []struct {
		name  string
		forge func(t *testing.T, hm home)
	}{
		{"A claimed indexed at its seq after the jettison, with the jettisoned words", func(t *testing.T, hm home) {
			plant(t, hm, false, func(b *searchindex.Builder) {
				b.Cover(hm.a, seqOf(t, hm.h, hm.a))
				b.Text(b.Doc(hm.a, searchindex.KindArtifact, hm.jettisoned), "ada lovelace card lemming 7741")
			})
		}},
		{"a prefix of a hash in a posting", func(t *testing.T, hm home) {
			plant(t, hm, false, func(b *searchindex.Builder) {
				b.Cover(hm.a, seqOf(t, hm.h, hm.a))
				b.Text(b.Doc(hm.a, searchindex.KindArtifact, hm.jettisoned[:8]), "lovelace lemming")
			})
		}},
		{"C claimed indexed beyond its seq", func(t *testing.T, hm home) {
			plant(t, hm, false, func(b *searchindex.Builder) {
				b.Cover(hm.c, seqOf(t, hm.h, hm.c)+100)
			})
		}},
		{"postings that point another voyage at A's jettisoned artifact", func(t *testing.T, hm home) {
			plant(t, hm, false, func(b *searchindex.Builder) {
				b.Cover(hm.b, seqOf(t, hm.h, hm.b))
				b.Text(b.Doc(hm.b, searchindex.KindArtifact, hm.jettisoned), "lovelace lemming narwhal")
				b.Text(b.Doc(hm.b, searchindex.KindEntries, ""), "lovelace lemming narwhal")
				b.Text(b.Doc(hm.b, searchindex.KindArtifact, hm.bFile), "plain words") // B's true content kept: the forgery aims to show, not hide
			})
		}},
		{"a voyage that does not exist", func(t *testing.T, hm home) {
			plant(t, hm, false, func(b *searchindex.Builder) {
				id := "a3b0fc12-0000-4000-8000-0000000000ff"
				b.Cover(id, 3)
				b.Text(b.Doc(id, searchindex.KindArtifact, hm.jettisoned), "lovelace narwhal")
			})
		}},
		{"a segment's bytes edited without its checksums", func(t *testing.T, hm home) {
			segs, err := filepath.Glob(filepath.Join(hm.dir, "*.seg"))
			require.NoError(t, err)
			require.NotEmpty(t, segs)
			raw, err := os.ReadFile(segs[0])
			require.NoError(t, err)
			for i := 100; i < len(raw)-120; i += 7 {
				raw[i] ^= 0x5a
			}
			require.NoError(t, os.WriteFile(segs[0], raw, 0o600))
		}},
		{"a segment truncated", func(t *testing.T, hm home) {
			segs, err := filepath.Glob(filepath.Join(hm.dir, "*.seg"))
			require.NoError(t, err)
			require.NoError(t, os.Truncate(segs[0], 40))
		}},
		{"a manifest naming a file outside the index", func(t *testing.T, hm home) {
			body := "helm-search-index 1\n../../voyages.seg 10\n"
			require.NoError(t, os.WriteFile(filepath.Join(hm.dir, searchindex.ManifestName), []byte(body+"crc 0\n"), 0o600))
		}},
		{"the index removed", func(t *testing.T, hm home) {
			require.NoError(t, os.RemoveAll(hm.dir))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hm := setup(t)
			tt.forge(t, hm)
			for _, words := range []string{"lovelace", "lemming", "7741", "ada"} {
				res, err := search.Find(ctx, hm.h, &search.Query{Words: words})
				require.NoError(t, err)
				assert.Empty(t, res.Hits, "%q: jettisoned or forged content shown", words)
			}
			res, err := search.Find(ctx, hm.h, &search.Query{Words: hm.secret})
			require.NoError(t, err)
			require.Len(t, res.Hits, 1, "the word C's log holds is found")
			assert.Equal(t, hm.c, res.Hits[0].Voyage)
			assert.Positive(t, res.Scanned, "C, which the index cannot vouch for, was read")
			res, err = search.Find(ctx, hm.h, &search.Query{Words: "plain"})
			require.NoError(t, err)
			require.Len(t, res.Hits, 1, "B's own words are still found")
			assert.Equal(t, hm.b, res.Hits[0].Voyage)
		})
	}
}

// TestAttackConsistentForgeryHidesOnlyFromTheIndex: an index rewritten
// consistently (a voyage covered at its true current seq, its words left
// out) cannot be told from a true one without reading the voyage: the
// agent can compute whatever a reader could check. What holds: nothing
// false is shown, and a search that ignores the index (NoIndex, helm
// search --scan) finds what the forgery hid.
func TestAttackConsistentForgeryHidesOnlyFromTheIndex(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), voyagetest.Fixed())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Audit", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	observeFile(t, v, "x.txt", "the platypus was here")
	infos, err := h.List(ctx, nil)
	require.NoError(t, err)
	b := searchindex.NewBuilder()
	b.Cover(v.ID(), infos[0].Seq)
	b.Text(b.Doc(v.ID(), searchindex.KindArtifact, v.ID()), "platypus decoy")
	require.NoError(t, searchindex.Write(ctx, filepath.Join(h.Dir(), searchindex.Dir), b, searchindex.WriteOptions{NoSync: true}))

	res, err := search.Find(ctx, h, &search.Query{Words: "platypus"})
	require.NoError(t, err)
	assert.Empty(t, res.Hits, "the forged posting names no artifact the voyage holds: nothing false is shown")
	assert.Equal(t, 1, res.Indexed)
	res, err = search.Find(ctx, h, &search.Query{Words: "platypus", NoIndex: true})
	require.NoError(t, err)
	require.Len(t, res.Hits, 1, "read whole, the voyage gives up its hit")
	assert.Equal(t, 1, res.Scanned)
}

// TestFindAsksTheIndexForMoreWhenReChecksFallShort: with a limit, the
// index is asked for a few documents more than hits are wanted; when the
// re-checks (here: --in entries leaves out every sighting) leave too
// few, it is asked again, for more.
func TestFindAsksTheIndexForMoreWhenReChecksFallShort(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	for i := range 40 {
		v, err := h.Start(ctx, fmt.Sprintf("voyage %d", i), helm.OpenWaters, who, nil)
		require.NoError(t, err)
		observeFile(t, v, "f.txt", "a lemur in a file")
		require.NoError(t, v.Close())
	}
	v, err := h.Start(ctx, "the last", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "A lemur in a note.", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	_, err = search.Reindex(ctx, h, nil)
	require.NoError(t, err)

	res, err := search.Find(ctx, h, &search.Query{Words: "lemur", In: search.InEntries, Limit: 1})
	require.NoError(t, err)
	require.Len(t, res.Hits, 1)
	assert.Equal(t, "A lemur in a note.", res.Hits[0].Text)
	assert.False(t, res.More)
	res, err = search.Find(ctx, h, &search.Query{Words: "lemur", Limit: 3})
	require.NoError(t, err)
	assert.Len(t, res.Hits, 3)
	assert.True(t, res.More)
	res, err = search.Find(ctx, h, &search.Query{Words: "lemur"})
	require.NoError(t, err)
	assert.Len(t, res.Hits, 41)
	assert.False(t, res.More)
}
