package helm_test

// Issue 31's tamper evidence, attacked: each test is the recorded agent
// (same user, write access to the home and to its local repositories,
// full knowledge of every format) trying to break one promise, and
// asserts that helm detects it. A test that fails is a broken promise.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// detected reports whether Verify found the forgery: a problem in the
// report, or a check that refused to run.
func detected(rep *helm.VerifyReport, err error) bool {
	return err != nil || !rep.OK()
}

// The witness repository is a local repository the recorded party can
// configure. A pushed commit's trailer is unchanged, but the repository's
// own configuration decides how `git log` prints it: a repository whose
// log output is re-encoded (i18n.logOutputEncoding) shows helm no
// Helm-Voyage line at all, so a forged log checks out "against" it. And a
// repository that holds no witness of the voyage (its witness branch
// deleted locally; the pushed remote still has it) is a check that
// checked nothing, reported as a pass.
func TestAttackWitnessRepositoryThatShowsNoWitness(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		hide  func(t *testing.T, w *witnessed)
		cause string
	}{
		{"log output re-encoded to UTF-16 by the repository's config", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "config", "i18n.logOutputEncoding", "UTF-16")
		}, "git config i18n.logOutputEncoding"},
		{"the witness branch deleted locally", func(t *testing.T, w *witnessed) {
			w.git.Git(t, "checkout", "-q", "--orphan", "elsewhere")
			w.git.Git(t, "commit", "-q", "--allow-empty", "-m", "nothing to see")
			for _, ref := range strings.Fields(w.git.Git(t, "for-each-ref", "--format=%(refname)")) {
				if ref != "refs/heads/elsewhere" {
					w.git.Git(t, "update-ref", "-d", ref)
				}
			}
			w.git.Git(t, "reflog", "expire", "--expire=now", "--all")
		}, "no commit reachable names the voyage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitnessed(t)
			_, err := w.v.Note(ctx, "Review: DENIED by security", who)
			require.NoError(t, err)
			w.commit(t, "widget.go", "Fix null check")
			require.Len(t, ours(t, w.git, "HEAD", w.v.ID()), 1, "the commit is a witness")
			rep, err := w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
			require.NoError(t, err)
			require.Len(t, rep.Witnesses, 1, "before the attack, verify finds the witness")
			require.NoError(t, w.v.Close())

			_, err = tamper.Replace(ctx, w.dir, w.v.ID(), "DENIED by security", "PASSED by security")
			require.NoError(t, err)
			require.NoError(t, tamper.DropCaches(w.dir, w.v.ID()))
			tc.hide(t, w)

			rep, err = w.home.Verify(ctx, w.v.ID(), &helm.VerifyOptions{Repositories: []string{w.git.Dir}})
			if err == nil {
				t.Logf("witnesses found: %d, problems: %v", len(rep.Witnesses), rep.Problems)
			}
			assert.True(t, detected(rep, err), "a witness repository in which verify found no witness (%s) passed a forged log", tc.cause)
		})
	}
}

// An honest voyage whose jettisoned artifact's blob record was reclaimed
// by Compact (the record keeps its BLAKE3 digest in a format-4 stub) is
// intact: verified against the head it had before, and its head after,
// it passes. (Promise: an intact voyage with its witnesses exits 0.)
func TestAttackHonestCompactedVoyageVerifiesWithItsWitnesses(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, &helm.Options{NoSync: true})
	o, err := v.Observe(ctx, &note{Topic: "small", Text: strings.Repeat("a customer's address ", 60)}, who, nil)
	require.NoError(t, err)
	require.NotZero(t, o.Artifact.Blob, "a small artifact lives in a blob record of the log")
	before, err := v.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, o.Record.Artifact, "a customer's", who))
	rep, err := v.Compact(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.LogRecords, "the blob record is a stub now")
	after, err := v.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	vr, err := h.Verify(ctx, v.ID(), &helm.VerifyOptions{Heads: []chain.Head{before, after}})
	require.NoError(t, err, "verifying an intact compacted voyage against its witnesses runs")
	assert.True(t, vr.OK(), "%v", vr.Problems)
	assert.Equal(t, after, vr.Head)

	alone, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, alone.OK(), "without a witness: %v", alone.Problems)
	v, err = h.Voyage(ctx, v.ID())
	require.NoError(t, err, "the stub is named by the stow of its commit: the voyage opens")
	defer v.Close()
	for _, err := range v.Events(ctx, 0) {
		require.NoError(t, err, "reads take the stub")
	}
	again, err := v.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, after, again, "the head computed from the records, the stub by its digest")
}

// A record below a witnessed head is turned into a stub that keeps its
// true digest (so the chain, and the witness's link, are unchanged), and
// an artifact event forged above the witness names it as its blob record
// (then jettisons it), so the "a stub no artifact names" rule is
// satisfied: the story is told without the record. Verify with the
// witness must still find it.
func TestAttackHiddenRecordNamedByAForgedArtifactAboveTheWitness(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		hide func(t *testing.T, v *helm.Voyage) string // records the entry to hide, returns its text
	}{
		{"a note", func(t *testing.T, v *helm.Voyage) string {
			_, err := v.Note(ctx, "Review: DENIED by security", who)
			require.NoError(t, err)
			return "DENIED by security"
		}},
		{"an observation", func(t *testing.T, v *helm.Voyage) string {
			_, err := v.Observe(ctx, &note{Topic: "security review", Text: "DENIED by security"}, who, nil)
			require.NoError(t, err)
			return "security review"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const segSize = 4 << 10
			h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true, SegmentSize: segSize})
			require.NoError(t, err)
			v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
			require.NoError(t, err)
			id := v.ID()
			text := tc.hide(t, v)
			for i := range 30 { // seal the hidden record's segment
				_, err := v.Note(ctx, "filler note to roll the segment over sooner "+itoa(uint64(i)), who)
				require.NoError(t, err)
			}
			witness, err := v.Head(ctx)
			require.NoError(t, err)
			o, err := v.Observe(ctx, &note{Topic: "decoy", Text: strings.Repeat("decoy bytes ", 40)}, who, nil)
			require.NoError(t, err)
			require.NotZero(t, o.Artifact.Blob)
			require.NoError(t, v.Jettison(ctx, o.Record.Artifact, "no longer needed", who))
			require.NoError(t, v.Close())

			// The adversary: find the record to hide, and the decoy's stow.
			recs, err := tamper.Read(ctx, h.Dir(), id)
			require.NoError(t, err)
			var target uint64
			for _, r := range recs {
				if bytes.Contains(r.Data, []byte(text)) {
					if e, err := projection.Decode(r.Data); err == nil && e.Type != projection.ArtifactStowed {
						target = r.Seq
						break
					}
				}
			}
			require.NotZero(t, target)
			require.Less(t, target, witness.Seq)
			forged := make([]tamper.Record, len(recs))
			for i, r := range recs {
				forged[i] = r
				e, err := projection.Decode(r.Data)
				if err != nil || e.Type != projection.ArtifactStowed || e.Artifact == nil || e.Artifact.Blob != o.Artifact.Blob {
					continue
				}
				require.Greater(t, r.Seq, witness.Seq)
				e.Artifact.Blob = target // the decoy's stow now names the hidden record
				d, err := projection.Encode(e)
				require.NoError(t, err)
				forged[i].Data = d
			}
			// Rewrite the log with helm's writer (small segments, so the
			// hidden record's segment is sealed), then stub the record
			// with its true digest, as Compact would.
			require.NoError(t, tamper.ForgeStubbed(ctx, h.Dir(), id, forged, segSize, target))
			require.NoError(t, tamper.DropCaches(h.Dir(), id))

			if v, err := h.Voyage(ctx, id); err == nil {
				var story []string
				for e, err := range v.Events(ctx, 0) {
					if err != nil {
						story = append(story, "ERROR "+err.Error())
						break
					}
					b, _ := json.Marshal(e)
					story = append(story, string(b))
				}
				v.Close()
				t.Logf("the voyage opens; its events hold %q: %v", text, strings.Contains(strings.Join(story, "\n"), text))
				t.Errorf("a record below the witness was hidden, and the voyage opens")
			} else {
				t.Logf("the voyage refuses to open: %v", err)
			}
			alone, err := h.Verify(ctx, id, nil)
			assert.True(t, detected(alone, err), "a record was hidden, and verify without a witness passed")

			rep, err := h.Verify(ctx, id, &helm.VerifyOptions{Heads: []chain.Head{witness}})
			if err != nil {
				t.Logf("verify with the witness: error %v", err)
			} else {
				t.Logf("verify with the witness: ok %v %v", rep.OK(), rep.Problems)
			}
			assert.True(t, detected(rep, err), "a record below the witness was hidden, and verify with the witness passed")
			// The forged log's chain still passes through the witness (a
			// stub keeps its record's digest): what finds the forgery is
			// the rule of stubs, not the chain.
			link := chain.Genesis(id)
			require.NoError(t, segment.ScanDir(ctx, tamper.Events(h.Dir(), id), 1, func(r segment.Record) error {
				link = r.Link(link)
				if r.Seq == witness.Seq {
					assert.Equal(t, witness.Hash, link, "the stub keeps the true digest: the witness's link is unchanged")
				}
				return nil
			}))
		})
	}
}

// summary.json caches the voyage's view for List, and List trusts it
// while the log has not changed since its mark. The agent edits the
// view (a failed voyage listed as completed, with a kinder summary) and
// keeps the mark and head: List shows the forgery, and Verify — even with
// a witness of the whole voyage — must report a summary whose view is not
// the events', as it does for a snapshot's.
func TestAttackEditedSummaryViewIsFoundByVerify(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, &helm.Options{NoSync: true})
	_, err := v.Note(ctx, "tests FAILED badly", who)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeFailed, "tests FAILED badly", who))
	head, err := v.Head(ctx)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, logbook.OutcomeFailed, list[0].Outcome)

	path := filepath.Join(h.Dir(), "voyages", v.ID(), "summary.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	view := s["voyage"].(map[string]any)
	require.Equal(t, string(logbook.OutcomeFailed), view["outcome"])
	view["outcome"] = string(logbook.OutcomeCompleted)
	view["summary"] = "all tests PASSED"
	forged, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, forged, 0o600))
	// The home index caches views too; a cache is optional: remove it,
	// so List reads the summary.
	require.NoError(t, os.Remove(filepath.Join(h.Dir(), homeindex.Name)))

	list, err = h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	t.Logf("list shows outcome %q, summary %q", list[0].Outcome, list[0].Summary)

	for _, opts := range []*helm.VerifyOptions{nil, {Heads: []chain.Head{head}}} {
		rep, err := h.Verify(ctx, v.ID(), opts)
		require.NoError(t, err)
		listed := list[0].Outcome == logbook.OutcomeFailed
		assert.True(t, listed || !rep.OK(), "list shows the forged outcome %q and verify (witnesses %d) says OK", list[0].Outcome, len(rep.Witnesses))
		var named bool
		for _, p := range rep.Problems {
			named = named || (p.File == path && strings.Contains(p.Reason, `summary.json says outcome "completed"`) && strings.Contains(p.Reason, "the cache was edited"))
		}
		assert.True(t, named, "the problem names summary.json and what it says: %v", rep.Problems)
	}
}

// The witness is only as good as the head helm hands out. A format-4 log's
// head is the last segment's stored header link carried over that
// segment's records (Log.Head); open checks it against WATERMARK alone,
// which the agent rewrites too. So before a witness is taken, the agent
// rewrites the last segment's header link to the link a forged history F
// (a note's DENIED turned PASSED, in an earlier segment) would have there,
// and WATERMARK's links to match: the log still reads honestly (DENIED),
// every write works, and the head helm prints — the one a commit trailer
// or a pasted head carries — is F's. Later the agent swaps in F, and F
// passes verify with that witness. Promise: any edit below a witnessed
// head is detected.
func TestAttackPoisonedStoredHeadMakesTheWitnessCertifyAForgery(t *testing.T) {
	ctx := context.Background()
	const segSize = 4 << 10
	h, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true, SegmentSize: segSize})
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(t, err)
	id := v.ID()
	_, err = v.Note(ctx, "Review: DENIED by security", who)
	require.NoError(t, err)
	for i := range 120 {
		_, err := v.Note(ctx, "filler note to roll the segment over sooner "+itoa(uint64(i)), who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	events := tamper.Events(h.Dir(), id)

	// F: the records with the note edited; its links by seq.
	recs, err := tamper.Read(ctx, h.Dir(), id)
	require.NoError(t, err)
	linkF := map[uint64]chain.Hash{0: chain.Genesis(id)}
	for _, r := range recs {
		d := bytes.ReplaceAll(r.Data, []byte("DENIED by security"), []byte("PASSED by security"))
		linkF[r.Seq] = chain.Link(linkF[r.Seq-1], r.Seq, d)
	}
	// The last segment's header link, and WATERMARK's, set to F's.
	names, err := filepath.Glob(filepath.Join(events, "*.seg"))
	require.NoError(t, err)
	require.Greater(t, len(names), 1, "the note is in an earlier segment")
	last := names[len(names)-1]
	seg, err := os.ReadFile(last)
	require.NoError(t, err)
	require.Equal(t, uint32(4), le32(seg[8:]), "format 4")
	first := le64(seg[16:])
	require.Greater(t, first, uint64(2))
	lf := linkF[first-1]
	copy(seg[64:96], lf[:])
	putLE32(seg[100:], crc32c(seg[:100]))
	require.NoError(t, os.WriteFile(last, seg, 0o600))
	wm, err := os.ReadFile(filepath.Join(events, "WATERMARK"))
	require.NoError(t, err)
	for _, off := range []int{0, 512} {
		slot := wm[off : off+72]
		if string(slot[:8]) != "HELMWM4\n" {
			continue
		}
		l := linkF[le64(slot[8:])]
		copy(slot[32:64], l[:])
		putLE32(slot[64:], crc32c(slot[:64]))
	}
	require.NoError(t, os.WriteFile(filepath.Join(events, "WATERMARK"), wm, 0o600))
	require.NoError(t, tamper.DropCaches(h.Dir(), id)) // summary.json's head would tell

	// The voyage reads honestly and takes writes; the head it gives out
	// — the witness — is F's.
	v, err = h.Voyage(ctx, id)
	require.NoError(t, err, "open checks the stored head only against WATERMARK")
	_, err = v.Note(ctx, "merging now", who)
	require.NoError(t, err)
	witness, err := v.Head(ctx)
	var damage *helm.DamageError
	if errors.As(err, &damage) {
		// The fix: a head is computed from the records and compared with
		// the stored one; a poisoned stored head is damage, and no head
		// is handed out for a witness to certify.
		assert.Contains(t, err.Error(), "does not match the records: the log was edited")
		assert.Equal(t, last, damage.File, "names the segment whose header holds the stored link")
		assert.NotZero(t, damage.Seq)
		rep, err := h.Verify(ctx, id, nil)
		require.NoError(t, err)
		assert.False(t, rep.OK(), "verify reports the poisoned stored head")
		require.NoError(t, v.Close())
		return
	}
	require.NoError(t, err)
	var story strings.Builder
	for e, err := range v.Events(ctx, 0) {
		require.NoError(t, err)
		b, _ := json.Marshal(e)
		story.Write(b)
	}
	assert.Contains(t, story.String(), "DENIED by security", "the log still reads honestly")
	require.NoError(t, v.Close())
	if rep, err := h.Verify(ctx, id, nil); err == nil {
		t.Logf("a full verify before the swap (nobody runs it): ok %v %v", rep.OK(), rep.Problems)
	}

	// Later: F swapped in, with helm's writer.
	_, err = tamper.Replace(ctx, h.Dir(), id, "DENIED by security", "PASSED by security")
	require.NoError(t, err)
	require.NoError(t, tamper.DropCaches(h.Dir(), id))
	rep, err := h.Verify(ctx, id, &helm.VerifyOptions{Heads: []chain.Head{witness}})
	require.NoError(t, err)
	assert.False(t, rep.OK(), "the witness %s, handed out by helm while the log said DENIED, certifies the log that says PASSED", witness)
}

func le32(b []byte) uint32       { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64       { return binary.LittleEndian.Uint64(b) }
func putLE32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
func crc32c(b []byte) uint32     { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
