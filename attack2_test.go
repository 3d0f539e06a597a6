package helm_test

// Issue 31, attack round 2 (through the public API and the adversary's
// tools). Each test asserts the promise, so it fails when it is broken.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/projection"
)

// Round 1's hidden-record attack named a stub far below the witness from a
// forged stow far above it, and the "own commit" rule (a stub is named
// only within its run of blob records and artifact events) caught it. Here
// the hidden record is the witnessed head itself: the forged stow is the
// very next event (the decoy's, its own blob record between), so the run
// rule is met, and the stub keeps the record's true digest, so the
// witness's link is unchanged. The story is told without the note, and
// neither open nor verify with the witness may accept it.
func TestAttack2HiddenWitnessedHeadNamedByTheNextStow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		decoy string
	}{
		{"a decoy in a blob record", strings.Repeat("decoy bytes ", 40)},
		{"a decoy in the pack (no blob record left unnamed)", atkRandomText(256 << 10)},
	} {
		t.Run(tc.name, func(t *testing.T) { hideWitnessedHead(t, tc.decoy) })
	}
}

func atkRandomText(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func hideWitnessedHead(t *testing.T, decoy string) {
	ctx := context.Background()
	const segSize = 4 << 10
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true, SegmentSize: segSize})
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	id := v.ID()
	_, err = v.Note(ctx, "Review: DENIED by security", who)
	require.NoError(t, err)
	witness, err := v.Head(ctx) // pushed in a commit's trailer
	require.NoError(t, err)
	o, err := v.Observe(ctx, &note{Topic: "decoy", Text: decoy}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, o.Record.Artifact, "no longer needed", who))
	require.NoError(t, v.Close())

	recs, err := tamper.Read(ctx, h.Dir(), id)
	require.NoError(t, err)
	target := witness.Seq
	require.Contains(t, string(recs[target-1].Data), "DENIED by security")
	forged := make([]tamper.Record, len(recs))
	for i, r := range recs {
		forged[i] = r
		e, err := projection.Decode(r.Data)
		if err != nil || e.Type != projection.ArtifactStowed || e.Artifact == nil || e.Artifact.Hash != o.Artifact.Hash {
			continue
		}
		e.Artifact.Blob, e.Artifact.Offset = target, 0 // the decoy's stow names the note's record
		d, err := projection.Encode(e)
		require.NoError(t, err)
		forged[i].Data = d
	}
	require.NoError(t, tamper.ForgeStubbed(ctx, h.Dir(), id, forged, segSize, target))
	require.NoError(t, tamper.DropCaches(h.Dir(), id))

	if v, err := h.Voyage(ctx, id); err == nil {
		var story bytes.Buffer
		for e, err := range v.Events(ctx, 0) {
			if err != nil {
				story.WriteString("ERROR " + err.Error())
				break
			}
			story.WriteString(string(e.Type) + " ")
			if e.Note != nil {
				story.WriteString(e.Note.Text + " ")
			}
		}
		v.Close()
		// Reads have no witness: the threat model's limit. The story is
		// told without the note; only a witness can tell.
		t.Logf("read without a witness: %s", story.String())
	}
	rep, err := h.Verify(ctx, id, &helm.VerifyOptions{Heads: []chain.Head{witness}})
	if err == nil {
		t.Logf("verify with the witness: ok %v, problems %v", rep.OK(), rep.Problems)
	}
	assert.True(t, detected(rep, err), "the witnessed note was hidden as a stub named by the next stow, and verify with the witness passed")

	// The same forgery travels in an archive: its stub line keeps the
	// note's digest, its head is recomputed, and an import given the
	// witness must refuse it.
	var archive bytes.Buffer
	if err := h.Export(ctx, id, &archive); err != nil {
		t.Logf("export refuses the forged voyage: %v", err)
		return
	}
	other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	iv, err := other.Import(ctx, &archive, &helm.ImportOptions{Witnesses: []chain.Head{witness}})
	if err == nil {
		iv.Close()
	} else {
		t.Logf("import with the witness: %v", err)
	}
	assert.Error(t, err, "an archive hiding the witnessed note imports against the witness")
}

// The careful adversary rolls the log back and removes the two caches of
// the voyage's own directory (summary.json and the snapshot), which name
// how far the log went, but leaves the home index, which it could not
// edit without rewriting every voyage's line: the index's close record
// still proves the log went further, and the voyage is DAMAGED.
func TestAttack2RollbackWithTheVoyagesCachesRemovedIsProvedByTheIndex(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, &helm.Options{NoSync: true})
	id := v.ID()
	_, err := v.Note(ctx, "Review: DENIED by security", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	backup := t.TempDir() + "/events"
	require.NoError(t, tamper.CopyDir(tamper.Events(h.Dir(), id), backup))
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err)
	for i := range 5 {
		_, err := v.Note(ctx, "later note "+itoa(uint64(i)), who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())

	require.NoError(t, tamper.Restore(h.Dir(), id, backup))
	for _, f := range []string{"summary.json", "snapshot"} {
		require.NoError(t, os.RemoveAll(h.Dir()+"/voyages/"+id+"/"+f))
	}
	_, err = h.Voyage(ctx, id)
	assert.ErrorIs(t, err, helm.ErrDamaged, "the home index records the later seq; the rolled-back voyage opened")
	rep, err := h.Verify(ctx, id, nil)
	assert.True(t, detected(rep, err), "verify passed a rollback the home index proves")
}
