package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// forgedEvent is an archive's event line as an adversary writes it: the
// event and its record, both edited.
type forgedEvent struct {
	VoyageID string `json:"voyage_id"`
	projection.Event
	Record []byte `json:"record"`
}

// forgeArchive rewrites the archive's event at seq with edit, in its JSON and
// its record alike; with rehead it recomputes the header's head over the
// records (the voyage must hold no blob records); it always recomputes
// the trailer's digest. It is the adversary that knows the format.
func forgeArchive(t *testing.T, archive []byte, seq uint64, edit func(*projection.Event), rehead bool) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(archive), "\n"), "\n")
	var hdr map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &hdr))
	var id string
	require.NoError(t, json.Unmarshal(hdr["voyage_id"], &id))
	link := chain.Genesis(id)
	var last uint64
	for i, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, `{"voyage_id":`) {
			continue
		}
		var fe forgedEvent
		require.NoError(t, json.Unmarshal([]byte(l), &fe))
		if fe.Seq == seq {
			e, err := projection.Decode(fe.Record)
			require.NoError(t, err)
			edit(e)
			e.Seq, e.V = 0, 0
			rec, err := projection.Encode(e)
			require.NoError(t, err)
			e.Seq = seq
			out, err := json.Marshal(forgedEvent{VoyageID: id, Event: *e, Record: rec})
			require.NoError(t, err)
			lines[1+i], fe.Record = string(out), rec
		}
		require.Equal(t, last+1, fe.Seq, "forge: the voyage holds blob records")
		last = fe.Seq
		link = chain.Link(link, fe.Seq, fe.Record)
	}
	if rehead {
		h, err := json.Marshal(chain.Head{Seq: last, Hash: link})
		require.NoError(t, err)
		hdr["head"] = h
		var b strings.Builder
		b.WriteString(`{"helm_export":2,"voyage_id":`)
		b.Write(hdr["voyage_id"])
		fmt.Fprintf(&b, `,"events":%s,"artifacts":%s,"head":%s}`, hdr["events"], hdr["artifacts"], h)
		lines[0] = b.String()
	}
	body := strings.Join(lines[:len(lines)-1], "\n") + "\n"
	sum := blake3.Sum256([]byte(body))
	return fmt.Appendf([]byte(body), `{"helm_export_end":2,"digest":"%x"}`+"\n", sum)
}

// noteVoyage records a voyage of events only (no artifact), whose note
// says "DENIED by security", and returns it and its archive.
func noteVoyage(t *testing.T) (*helm.Voyage, []byte) {
	t.Helper()
	ctx := t.Context()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v, err := h.Start(ctx, "Ship the release", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	_, err = v.Note(ctx, "DENIED by security", who)
	require.NoError(t, err)
	_, err = v.Note(ctx, "waiting for the fix", who)
	require.NoError(t, err)
	return v, exportArchive(t, h, v.ID())
}

// noteSeq is the seq of the voyage's first note in the archive.
func noteSeq(t *testing.T, archive []byte) uint64 {
	t.Helper()
	for _, l := range strings.Split(string(archive), "\n") {
		if strings.Contains(l, "DENIED by security") {
			var e struct{ Seq uint64 }
			require.NoError(t, json.Unmarshal([]byte(l), &e))
			return e.Seq
		}
	}
	t.Fatal("no note")
	return 0
}

func pass(e *projection.Event) { e.Note.Text = "PASSED by security" }

func TestImportRefusesAnEditedArchiveWhoseChainNoLongerMatchesItsHead(t *testing.T) {
	ctx := context.Background()
	_, archive := noteVoyage(t)
	edited := forgeArchive(t, archive, noteSeq(t, archive), pass, false)
	require.True(t, digestMatches(edited), "the byte digest was recomputed")
	other := homeWithAVoyage(t)
	before := treeSum(t, other.Dir())
	_, err := other.Import(ctx, bytes.NewReader(edited), nil)
	require.ErrorIs(t, err, helm.ErrDamaged)
	assert.NotErrorIs(t, err, helm.ErrInvalid, "damage, not bad input")
	assert.Contains(t, err.Error(), "its header claims")
	assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
}

func TestImportOfAnArchiveWithItsHeadRecomputedIsRefusedOnlyByAWitness(t *testing.T) {
	ctx := context.Background()
	v, archive := noteVoyage(t)
	witness, err := v.Head(ctx)
	require.NoError(t, err)
	edited := forgeArchive(t, archive, noteSeq(t, archive), pass, true)

	// With a witness, it is refused, naming the witness.
	other := homeWithAVoyage(t)
	before := treeSum(t, other.Dir())
	_, err = other.Import(ctx, bytes.NewReader(edited), &helm.ImportOptions{Witnesses: []chain.Head{witness}})
	require.ErrorIs(t, err, helm.ErrDamaged)
	assert.Contains(t, err.Error(), "witness "+witness.String())
	assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
	// A witness of an earlier head still fails: the edit is below it.
	early := chain.Head{Seq: witness.Seq - 1}
	_, err = other.Import(ctx, bytes.NewReader(edited), &helm.ImportOptions{Witnesses: []chain.Head{early}})
	require.ErrorIs(t, err, helm.ErrDamaged)

	// Without one, nothing local tells: it imports, forgery and all.
	imported, err := other.Import(ctx, bytes.NewReader(edited), nil)
	require.NoError(t, err)
	defer imported.Close()
	assert.Contains(t, viewsJSON(t, imported), "PASSED by security")

	// The intact archive imports with its witness.
	third, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	ok, err := third.Import(ctx, bytes.NewReader(archive), &helm.ImportOptions{Witnesses: []chain.Head{witness}})
	require.NoError(t, err)
	ok.Close()
}

func TestImportOfACleanExportKeepsTheSourcesHead(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	for _, name := range []string{"events only", "pack, blobs, a reduction and a jettisoned pack artifact"} {
		t.Run(name, func(t *testing.T) {
			v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
			require.NoError(t, err)
			defer v.Close()
			_, err = v.Note(ctx, "starting", who)
			require.NoError(t, err)
			if name != "events only" {
				big := "fn init() { cfg.apply() }"
				large, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "big.txt"}, Sighting: &noteSighting{Text: randomText(96 << 10)}}, who)
				require.NoError(t, err)
				require.Zero(t, large.Artifact.Blob)
				gone, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "gone.txt"}, Sighting: &noteSighting{Text: randomText(80 << 10)}}, who)
				require.NoError(t, err)
				_, err = v.Observe(ctx, &note{Topic: "small.rs", Text: big}, who, nil)
				require.NoError(t, err)
				_, err = v.Reduce(ctx, large.Record.Artifact, helm.Reduction{Summary: &noteSighting{Text: "96 KiB of letters"}, Method: "human"}, who)
				require.NoError(t, err)
				require.NoError(t, v.Jettison(ctx, gone.Record.Artifact, "a customer's", who))
			}
			head, err := v.Head(ctx)
			require.NoError(t, err)
			archive := exportArchive(t, h, v.ID())
			other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			imported, err := other.Import(ctx, bytes.NewReader(archive), &helm.ImportOptions{Witnesses: []chain.Head{head}})
			require.NoError(t, err)
			defer imported.Close()
			got, err := imported.Head(ctx)
			require.NoError(t, err)
			assert.Equal(t, head, got, "the imported voyage's head is the source's")
			assert.Equal(t, string(archive), string(exportArchive(t, other, v.ID())), "exported again, byte for byte")
		})
	}
}

func TestImportChecksAttributionAsTheCLIDoes(t *testing.T) {
	ctx := context.Background()
	_, archive := noteVoyage(t)
	seq := noteSeq(t, archive)
	future := time.Now().Add(48 * time.Hour)
	cases := []struct {
		name  string
		edit  func(*projection.Event)
		field string
	}{
		{"identity with a path", func(e *projection.Event) { e.Who.Identity = "../../etc" }, "who.identity"},
		{"identity with a space and a newline", func(e *projection.Event) { e.Who.Identity = "a b\nc" }, "who"},
		{"identity with a control character", func(e *projection.Event) { e.Who.Identity = "eve\x1b[2J" }, "who"},
		{"role not UTF-8", func(e *projection.Event) { e.Who.Role = "coder\xff" }, "who"},
		{"method not UTF-8", func(e *projection.Event) { e.Who.Method = "gpt\xc3" }, "who"},
		{"dated 2999", func(e *projection.Event) { e.At = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC) }, "at"},
		{"dated two days ahead", func(e *projection.Event) { e.At = future }, "at"},
	}
	other := homeWithAVoyage(t)
	before := treeSum(t, other.Dir())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forged := forgeArchive(t, archive, seq, c.edit, true)
			_, err := other.Import(ctx, bytes.NewReader(forged), nil)
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.Contains(t, err.Error(), fmt.Sprintf("event %d: %s", seq, c.field))
			assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
		})
	}
	// root is a name the CLI takes (--as root): so does import.
	forged := forgeArchive(t, archive, seq, func(e *projection.Event) { e.Who = logbook.Who{Identity: "root", Role: "coder", Method: "human"} }, true)
	v, err := other.Import(ctx, bytes.NewReader(forged), nil)
	require.NoError(t, err)
	v.Close()
}

// randomText returns n random lowercase letters: text that does not
// compress below the inline limit, so it goes to the pack.
func randomText(n int) string {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return string(b)
}

// homeWithAVoyage is a home that holds a voyage already (its directories
// made), for imports that must leave it as it was.
func homeWithAVoyage(t *testing.T) *helm.Home {
	t.Helper()
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Start(t.Context(), "already here", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	return h
}
