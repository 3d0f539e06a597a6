package helm_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// corpusIDs returns the ids of the voyages of a corpus home, sorted.
func corpusIDs(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "views.golden.json"))
	require.NoError(t, err)
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &want))
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// firstFrame reads the first frame of the format-4 segment starting at
// seq first: its CRC32C chain sum and its record.
func firstFrame(t *testing.T, home, id string, first uint64) (sum uint32, data []byte) {
	t.Helper()
	seg, err := os.ReadFile(filepath.Join(tamper.Events(home, id), fmt.Sprintf("%020d.seg", first)))
	require.NoError(t, err)
	const header, frameHeader = 104, 24
	require.Greater(t, len(seg), header+frameHeader)
	f := seg[header:]
	n := binary.LittleEndian.Uint32(f[4:])
	require.Equal(t, first, binary.LittleEndian.Uint64(f[8:]))
	return binary.LittleEndian.Uint32(f[20:]), f[frameHeader : frameHeader+int(n)]
}

var rechainer = logbook.Who{Identity: "ann", Role: "maintainer", Method: "human"}

// Every voyage of every corpus home written in an older segment format
// moves onto the stored BLAKE3 chain by Home.Rechain: the rechain is an
// entry of its story (who, why, where the CRC32C chain ended), the first
// record of its first format-4 segment; verify says BLAKE3 since that
// seq; the head returned is the voyage's; an active voyage takes writes
// afterwards; and a second rechain is refused, writing nothing.
func TestRechainMovesEveryOlderCorpusVoyageOntoTheBLAKE3Chain(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("testdata", "voyages", "*", "views.golden.json"))
	require.NoError(t, err)
	ctx := context.Background()
	rechained := 0
	for _, g := range entries {
		dir := filepath.Dir(g)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			home := copyTree(t, dir)
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			for _, id := range corpusIDs(t, dir) {
				before, err := h.Verify(ctx, id, nil)
				require.NoError(t, err)
				require.True(t, before.OK(), "%v", before.Problems)
				if before.Events.Chain == "blake3" {
					continue // refused: TestRechainRefuses...
				}
				require.Equal(t, "crc32c", before.Events.Chain)
				rechained++
				head, err := h.Rechain(ctx, id, rechainer, "  move it onto the BLAKE3 chain  ")
				require.NoError(t, err, "voyage %s", id)

				rep, err := h.Verify(ctx, id, nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "verify %s after the rechain: %v", id, rep.Problems)
				assert.Equal(t, "blake3", rep.Events.Chain)
				assert.Equal(t, uint32(4), rep.Events.Format)
				assert.Equal(t, before.Events.LastSeq+1, rep.Events.ChainSince, "the rechain's record starts the format-4 segment")
				assert.Equal(t, head, rep.Head)
				assert.Equal(t, head.Seq, before.Events.LastSeq+1)

				v, err := h.Voyage(ctx, id)
				require.NoError(t, err)
				got, err := v.Head(ctx)
				require.NoError(t, err)
				assert.Equal(t, head, got)
				es := entriesOf(t, v)
				require.NotEmpty(t, es)
				last := es[len(es)-1]
				require.Equal(t, logbook.EntryRechain, last.Kind)
				assert.Equal(t, head.Seq, last.Seq)
				assert.Equal(t, rechainer, last.Who)
				require.NotNil(t, last.Rechain)
				assert.Equal(t, before.Events.LastSeq, last.Rechain.Seq)
				assert.Equal(t, "move it onto the BLAKE3 chain", last.Rechain.Why)
				// The CRC32C recorded is where the old chain ended: the
				// rechain's own frame continues the chain from it.
				sum, data := firstFrame(t, home, id, head.Seq)
				old, err := hex.DecodeString(last.Rechain.CRC32C)
				require.NoError(t, err)
				require.Len(t, old, 4)
				assert.Equal(t, sum, crc32.Update(binary.BigEndian.Uint32(old), crc32.MakeTable(crc32.Castagnoli), data))
				assert.Equal(t, head, chain.Head{Seq: head.Seq, Hash: chain.Link(before.Head.Hash, head.Seq, data)}, "the head after the rechain commits to the history before it")

				if v.Info().Status.Resumable() {
					require.NoError(t, v.Resume(ctx, "resumed after the rechain", who))
				}
				if v.Info().Status == logbook.StatusActive {
					m, err := marks.NewContext("written after the rechain")
					require.NoError(t, err)
					_, err = v.Observe(ctx, m, who, nil)
					require.NoError(t, err)
					_, err = v.TakeBearing(ctx, "still writable", who, nil)
					require.NoError(t, err)
				}
				require.NoError(t, v.Close())
				after, err := h.Verify(ctx, id, &helm.VerifyOptions{Heads: []chain.Head{head}})
				require.NoError(t, err)
				assert.True(t, after.OK(), "verify %s after writes, against the rechain's head: %v", id, after.Problems)
				assert.Equal(t, head.Seq, after.Events.ChainSince)

				snap := snapshotTree(t, home)
				_, err = h.Rechain(ctx, id, rechainer, "again")
				require.ErrorIs(t, err, helm.ErrInvalid)
				assert.ErrorContains(t, err, fmt.Sprintf("rechained at seq %d", head.Seq))
				assert.Empty(t, changed(snap, snapshotTree(t, home)), "a refused rechain writes nothing")
			}
		})
	}
	assert.Positive(t, rechained, "the corpus holds voyages of older formats")
}

// snapshotTree returns every regular file under dir and its bytes.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(data)
		}
		return nil
	}))
	return out
}

// changed lists the files that differ between two snapshotTrees.
func changed(before, after map[string]string) []string {
	var out []string
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// A voyage on the BLAKE3 chain from its genesis (a new one, the format-4
// corpus entry) is refused, and so is a rechain that says no why or
// names no role: nothing is written.
func TestRechainRefusesAVoyageOnTheBLAKE3ChainAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "a new voyage", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Close())
	snap := snapshotTree(t, home)
	for _, tc := range []struct {
		name string
		who  logbook.Who
		why  string
		want string
	}{
		{"on the BLAKE3 chain", rechainer, "upgrade", "on the BLAKE3 chain already (segment format 4, from its first record)"},
		{"no why", rechainer, "  ", "say why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Rechain(ctx, id, tc.who, tc.why)
			require.Error(t, err)
			assert.ErrorIs(t, err, helm.ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
			assert.Empty(t, changed(snap, snapshotTree(t, home)), "nothing written")
		})
	}

	v6 := filepath.Join("testdata", "voyages", "v0.6-2026-11-27")
	corpus := copyTree(t, v6)
	hc, err := helm.Open(corpus, nil)
	require.NoError(t, err)
	snap = snapshotTree(t, corpus)
	refused := 0
	for _, id := range corpusIDs(t, v6) {
		rep, err := hc.Verify(ctx, id, nil)
		require.NoError(t, err)
		if rep.Events.Chain != "blake3" {
			continue
		}
		refused++
		_, err = hc.Rechain(ctx, id, rechainer, "upgrade")
		assert.ErrorIs(t, err, helm.ErrInvalid)
	}
	assert.Empty(t, changed(snap, snapshotTree(t, corpus)), "nothing written")
	t.Logf("%d format-4 corpus voyages refused", refused)
}

// A rechain needs an entry's who: without a role it records nothing.
func TestRechainWithoutARoleRecordsNothing(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join("testdata", "voyages", "v0.5-2026-11-27")
	home := copyTree(t, src)
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	id := corpusIDs(t, src)[0]
	snap := snapshotTree(t, home)
	_, err = h.Rechain(ctx, id, logbook.Who{Identity: "ann", Method: "human"}, "upgrade")
	require.ErrorIs(t, err, helm.ErrMissingWho)
	assert.Empty(t, changed(snap, snapshotTree(t, home)), "nothing written")
}

// An edit below the rechain point, made by an adversary who rewrites the
// whole log with helm's own writer (every checksum, link and WATERMARK
// recomputed, the caches dropped), passes a verify without a witness and
// is found by one taken after the rechain.
func TestRechainHeadWitnessesAnEditOfTheRecordsBeforeIt(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join("testdata", "voyages", "v0.5-2026-11-27")
	home := copyTree(t, src)
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	id := corpusIDs(t, src)[0]
	head, err := h.Rechain(ctx, id, rechainer, "witness it")
	require.NoError(t, err)
	recs, err := tamper.Read(ctx, home, id)
	require.NoError(t, err)
	intent := ""
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	intent = v.Info().Intent
	require.NoError(t, v.Close())
	require.NotEmpty(t, intent)
	require.True(t, strings.Contains(string(recs[0].Data), intent), "the start records the intent")
	n, err := tamper.Replace(ctx, home, id, intent, strings.ToUpper(intent))
	require.NoError(t, err)
	require.Positive(t, n)
	require.NoError(t, tamper.DropCaches(home, id))

	h, err = helm.Open(home, nil)
	require.NoError(t, err)
	plain, err := h.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.True(t, plain.OK(), "a forgery by helm's own writer checks out without a witness: %v", plain.Problems)
	rep, err := h.Verify(ctx, id, &helm.VerifyOptions{Heads: []chain.Head{head}})
	require.NoError(t, err)
	require.False(t, rep.OK(), "the rechain's head witnesses the records before it")
	require.Len(t, rep.Witnesses, 1)
	assert.NotEmpty(t, rep.Witnesses[0].Problem)
}
