package helm

// Issue 31, attack round 2 (internal: the adversary forges archives with
// the archive's own types). Each test is the recorded agent — same user,
// knows every format, recomputes every digest, chain link and head — and
// asserts the promise, so it fails when the promise is broken.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

var atkWho = logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}

// atkExport starts a voyage with a few notes (no artifacts), exports it
// and returns the archive.
func atkExport(t *testing.T, notes ...string) []byte {
	t.Helper()
	ctx := context.Background()
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", ResolveIssue, atkWho, nil)
	require.NoError(t, err)
	for _, n := range notes {
		_, err := v.Note(ctx, n, atkWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	var buf bytes.Buffer
	require.NoError(t, h.Export(ctx, v.ID(), &buf))
	return buf.Bytes()
}

// forgeArchive rewrites an archive of events only (no stubs, no
// artifacts) as its writer would have written it with edit applied to
// every event: each record re-encoded, each line rewritten from its
// record, the head recomputed and the trailer's digest too. Nothing an
// importer can check tells it from an honest archive.
func forgeArchive(t *testing.T, archive []byte, edit func(e *projection.Event)) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(archive, []byte("\n")), []byte("\n"))
	var hdr archiveHeader
	require.NoError(t, json.Unmarshal(lines[0], &hdr))
	require.Zero(t, hdr.Stubs)
	require.Zero(t, hdr.Artifacts)
	require.Len(t, lines, hdr.Events+2)
	link := chain.Genesis(hdr.VoyageID)
	var out [][]byte
	var last uint64
	for _, line := range lines[1 : 1+hdr.Events] {
		var ae archiveEvent
		require.NoError(t, json.Unmarshal(line, &ae))
		e, err := projection.Decode(ae.Record)
		require.NoError(t, err)
		edit(e)
		e.Seq = 0
		rec, err := projection.Encode(e)
		require.NoError(t, err)
		e.Seq = ae.Seq
		data, err := json.Marshal(archiveEvent{VoyageID: hdr.VoyageID, Event: *e, Record: rec})
		require.NoError(t, err)
		out = append(out, data)
		link = chain.Link(link, ae.Seq, rec)
		last = ae.Seq
	}
	hdr.Head = &chain.Head{Seq: last, Hash: link}
	h, err := json.Marshal(hdr)
	require.NoError(t, err)
	var body bytes.Buffer
	body.Write(h)
	body.WriteByte('\n')
	for _, l := range out {
		body.Write(l)
		body.WriteByte('\n')
	}
	sum := blake3.Sum256(body.Bytes())
	tail, err := json.Marshal(archiveTrailer{End: archiveVersion, Digest: hex.EncodeToString(sum[:])})
	require.NoError(t, err)
	body.Write(tail)
	body.WriteByte('\n')
	return body.Bytes()
}

// The forger is faithful: an archive forged with no edit imports (else
// every refusal below would prove nothing).
func TestAttack2ForgedArchiveWithoutEditImports(t *testing.T) {
	forged := forgeArchive(t, atkExport(t, "Review: DENIED by security"), func(*projection.Event) {})
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	v, err := h.Import(context.Background(), bytes.NewReader(forged), nil)
	require.NoError(t, err, "an archive the forger rewrote without an edit is an honest one")
	require.NoError(t, v.Close())
}

// Import checks attribution "exactly as the CLI validates": every
// identity, role and method the archive records must be one helm's own
// writes could have recorded. The voyage's own identity (voyage-started's
// payload, the default identity of every later entry and what `voyage
// show` prints as its owner) is an identity too; an entry (a note, a
// bearing) always records a role and a method, and every event records
// who, with an identity.
func TestAttack2ImportRefusesAttributionHelmNeverWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(e *projection.Event)
	}{
		{"the voyage's identity a path", func(e *projection.Event) {
			if e.Type == projection.VoyageStarted {
				e.Who.Identity = "../../etc"
			}
		}},
		{"an identity with a space and a newline", func(e *projection.Event) {
			if e.Type == projection.NoteAdded {
				e.Who.Identity = "a b\nc"
			}
		}},
		{"a note by no identity", func(e *projection.Event) {
			if e.Type == projection.NoteAdded {
				e.Who.Identity = ""
			}
		}},
		{"a note with no role and no method", func(e *projection.Event) {
			if e.Type == projection.NoteAdded {
				e.Who.Role, e.Who.Method = "", ""
			}
		}},
		{"the start by no identity", func(e *projection.Event) {
			if e.Type == projection.VoyageStarted {
				e.Who.Identity = ""
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			forged := forgeArchive(t, atkExport(t, "Review: DENIED by security"), tc.edit)
			h, err := Open(t.TempDir(), &Options{NoSync: true})
			require.NoError(t, err)
			v, err := h.Import(ctx, bytes.NewReader(forged), nil)
			if err == nil {
				t.Logf("imported: voyage identity %q", v.Info().Identity)
				v.Close()
			}
			assert.ErrorIs(t, err, ErrInvalid, "an archive recording attribution helm never writes imports")
		})
	}
}

// Times: "more than a day ahead of the importing clock" is refused; a day
// ahead exactly is not; the clock's own zone does not matter.
func TestAttack2ImportTimesAroundADayAhead(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		at      time.Time
		refused bool
	}{
		{"a day ahead exactly", now.Add(24 * time.Hour), false},
		{"a day and a nanosecond ahead", now.Add(24*time.Hour + time.Nanosecond), true},
		{"a day and a second ahead, written in a zone 14 hours east", now.Add(24*time.Hour + time.Second).In(time.FixedZone("+14", 14*3600)), true},
		{"year 2999", time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := forgeArchive(t, atkExport(t, "a note"), func(e *projection.Event) {
				if e.Type == projection.NoteAdded {
					e.At = tc.at
				}
			})
			h, err := Open(t.TempDir(), &Options{NoSync: true, Clock: func() time.Time { return now.In(time.FixedZone("-12", -12*3600)) }})
			require.NoError(t, err)
			v, err := h.Import(context.Background(), bytes.NewReader(forged), nil)
			if tc.refused {
				assert.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			v.Close()
		})
	}
}

// An archive whose records say one thing and whose readable JSON another:
// the line is rewritten from the record, so any difference is refused.
func TestAttack2ImportRefusesJSONThatDisagreesWithTheRecord(t *testing.T) {
	archive := atkExport(t, "Review: DENIED by security")
	// Change the JSON only, same length, then re-digest.
	body := bytes.Replace(archive, []byte(`"text":"Review: DENIED by security"`), []byte(`"text":"Review: PASSED by security"`), 1)
	require.NotEqual(t, archive, body, "the note's text is in the JSON")
	lines := bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
	pre := bytes.Join(lines[:len(lines)-1], []byte("\n"))
	pre = append(pre, '\n')
	sum := blake3.Sum256(pre)
	tail, _ := json.Marshal(archiveTrailer{End: archiveVersion, Digest: hex.EncodeToString(sum[:])})
	forged := append(pre, append(tail, '\n')...)
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	_, err = h.Import(context.Background(), bytes.NewReader(forged), nil)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.True(t, err != nil && strings.Contains(err.Error(), "reads otherwise than its record"), "%v", err)
}
