package helm_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
)

// payloadSizes are the two places an artifact's bytes can be: a blob
// record in the event log (small) and a frame of the pack (large).
var payloadSizes = []struct {
	name string
	size int // random bytes, hex-encoded: twice as many letters
	blob bool
}{
	{"small, in a blob record", 1500, true},
	{"large, in the pack", 60 << 10, false},
}

// storedMark returns a distinctive run of the bytes the voyage stores for
// the sighting JSON data (its zstd form, as the voyage compresses it).
func storedMark(data []byte) []byte {
	c := artifact.Encode(data).Compressed
	return bytes.Clone(c[len(c)/2 : len(c)/2+48])
}

// filesHolding lists the files under dir that hold mark.
func filesHolding(t *testing.T, dir string, mark []byte) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, mark) {
			out = append(out, path)
		}
		return nil
	}))
	return out
}

// observeRandom stows a sighting of size random bytes (hex) and returns
// its artifact's hash and its JSON.
func observeRandom(t *testing.T, v *helm.Voyage, topic string, size int) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, size)
	crand.Read(b)
	// The sighting alone holds the text (an observed note's mark would
	// record it in its event too).
	o, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: topic}, Sighting: &noteSighting{Text: hex.EncodeToString(b)}}, who)
	require.NoError(t, err)
	data, err := readArtifact(ctx, v, o.Record.Artifact)
	require.NoError(t, err)
	return o.Record.Artifact, data
}

func infoOf(t *testing.T, v *helm.Voyage, hash string) helm.ArtifactInfo {
	t.Helper()
	for _, a := range artifactsOf(t, v) {
		if a.Hash == hash {
			return a
		}
	}
	require.FailNow(t, "no such artifact", hash)
	return helm.ArtifactInfo{}
}

func TestReduceThenCompactReclaimsThePayload(t *testing.T) {
	for _, tc := range payloadSizes {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h, v := newVoyage(t, nil)
			hash, data := observeRandom(t, v, "payload", tc.size)
			require.Equal(t, tc.blob, infoOf(t, v, hash).Blob != 0)
			keep, _ := observeRandom(t, v, "kept", tc.size)
			summary, err := v.Reduce(ctx, hash, helm.Reduction{Summary: &noteSighting{Text: "a summary of it"}, Method: "human"}, who)
			require.NoError(t, err)
			dir := v.Storage().Dir
			mark := storedMark(data)
			require.NotEmpty(t, filesHolding(t, dir, mark), "before compaction the payload is stored (the mark is found)")

			rep, err := v.Compact(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, rep.Artifacts)
			assert.Equal(t, 1, rep.Reduced, "the reduced payload is counted")
			if tc.blob {
				assert.Equal(t, 1, rep.LogRecords)
				assert.Positive(t, rep.LogBytes)
			} else {
				assert.Zero(t, rep.LogRecords)
				assert.Positive(t, rep.PackBytes)
			}
			assert.Empty(t, filesHolding(t, dir, mark), "no file of the voyage holds the payload")
			assert.Empty(t, filesHolding(t, h.Dir(), mark), "nor any file of the home")

			vr, err := h.Verify(ctx, v.ID(), nil)
			require.NoError(t, err)
			assert.True(t, vr.OK(), "%v", vr.Problems)
			assert.Equal(t, 1, vr.Skipped)
			assert.Equal(t, 1, vr.SkippedReduced)
			assert.Zero(t, vr.SkippedJettisoned)

			// The original says it was reduced and offers its summary;
			// the summary and the other artifact read as before.
			_, err = readArtifact(ctx, v, hash)
			require.ErrorIs(t, err, helm.ErrArtifactGone)
			assert.Equal(t, hint.ReadSummary, helm.HintOf(err).Kind)
			assert.Contains(t, helm.HintOf(err).Text, summary)
			s, err := readSighting(ctx, v, summary)
			require.NoError(t, err)
			assert.Equal(t, "a summary of it", s.(*noteSighting).Text)
			_, err = readArtifact(ctx, v, keep)
			require.NoError(t, err)

			again, err := v.Compact(ctx)
			require.NoError(t, err)
			assert.Zero(t, again.Artifacts, "compacting again reclaims nothing")

			// The voyage travels: the archive carries what remains.
			archive := exportArchive(t, h, v.ID())
			assert.False(t, bytes.Contains(archive, mark))
			other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			c, err := other.Import(ctx, bytes.NewReader(archive), nil)
			require.NoError(t, err)
			defer c.Close()
			verifyOK(t, other, v.ID())
			assert.Equal(t, story(t, v), story(t, c))
			_, err = readArtifact(ctx, c, hash)
			assert.ErrorIs(t, err, helm.ErrArtifactGone)
			s, err = readSighting(ctx, c, summary)
			require.NoError(t, err)
			assert.Equal(t, "a summary of it", s.(*noteSighting).Text)
			assert.Empty(t, filesHolding(t, other.Dir(), mark))
		})
	}
}

// flipAt flips a byte of file at off.
func flipAt(t *testing.T, file string, off int64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x20
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// flipStored flips a byte in the middle of the stored bytes of the
// artifact a (a pack frame's body) and returns the pack's path.
func flipStored(t *testing.T, v *helm.Voyage, a helm.ArtifactInfo) string {
	t.Helper()
	require.Zero(t, a.Blob, "in the pack")
	pack := filepath.Join(v.Storage().Dir, artifact.PackName)
	const frameHead = 4 + 4 + 32 // size, crc, hash
	flipAt(t, pack, a.Offset+frameHead+a.StoredSize/2)
	return pack
}

// problemNaming returns the problem of rep that names artifact hash.
func problemNaming(rep *helm.VerifyReport, hash string) *helm.DamageError {
	for _, p := range rep.Problems {
		if p.Artifact == hash {
			return p
		}
	}
	return nil
}

func TestVerifyFindsADamagedByteOfAReducedArtifact(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	hash, data := observeRandom(t, v, "payload", 60<<10)
	_, err := v.Reduce(ctx, hash, helm.Reduction{Summary: &noteSighting{Text: "short"}, Method: "human"}, who)
	require.NoError(t, err)
	verifyOK(t, h, v.ID())

	// Before compaction: the payload is still held, and checked.
	pack := flipStored(t, v, infoOf(t, v, hash))
	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.False(t, rep.OK())
	p := problemNaming(rep, hash)
	require.NotNil(t, p, "the damage names the reduced artifact: %v", rep.Problems)
	assert.Equal(t, pack, p.File)
	assert.Zero(t, rep.Skipped, "its bytes are there: not skipped")
	err = h.Export(ctx, v.ID(), new(bytes.Buffer))
	require.NoError(t, err, "the export leaves the reduced payload out")
	flipStored(t, v, infoOf(t, v, hash)) // mended
	verifyOK(t, h, v.ID())

	// After compaction, what remains is checked: a reclaimed frame whose
	// body is not all zeros holds bytes, and they are not the artifact's.
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	verifyOK(t, h, v.ID())
	require.Empty(t, filesHolding(t, v.Storage().Dir, storedMark(data)))
	flipStored(t, v, infoOf(t, v, hash))
	rep, err = h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	require.NotNil(t, problemNaming(rep, hash), "%v", rep.Problems)
	flipStored(t, v, infoOf(t, v, hash))
	verifyOK(t, h, v.ID())

	// An artifact reduced after the compaction keeps its payload until
	// the next one: checked too.
	later, _ := observeRandom(t, v, "later", 60<<10)
	_, err = v.Reduce(ctx, later, helm.Reduction{Summary: &noteSighting{Text: "later, short"}, Method: "human"}, who)
	require.NoError(t, err)
	flipStored(t, v, infoOf(t, v, later))
	rep, err = h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	require.NotNil(t, problemNaming(rep, later), "%v", rep.Problems)
	assert.Equal(t, 1, rep.SkippedReduced, "the first one's payload is gone")
}

func TestVerifyFindsADamagedByteOfAReducedArtifactInABlobRecord(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	hash, data := observeRandom(t, v, "payload", 1500)
	require.NotZero(t, infoOf(t, v, hash).Blob)
	_, err := v.Reduce(ctx, hash, helm.Reduction{Summary: &noteSighting{Text: "short"}, Method: "human"}, who)
	require.NoError(t, err)
	mark := storedMark(data)
	files := filesHolding(t, v.Storage().Dir, mark)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	flipAt(t, files[0], int64(bytes.Index(b, mark)+len(mark)/2))
	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.False(t, rep.OK(), "a flipped byte of a reduced artifact's blob record is found")
}

// A jettisoned artifact's bytes, held until compaction, are checked as
// a reduced one's are; once reclaimed they are skipped as jettisoned.
func TestVerifyChecksAJettisonedArtifactUntilCompaction(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	hash, _ := observeRandom(t, v, "payload", 60<<10)
	require.NoError(t, v.Jettison(ctx, hash, "stale", who))
	flipStored(t, v, infoOf(t, v, hash))
	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	require.NotNil(t, problemNaming(rep, hash), "%v", rep.Problems)
	flipStored(t, v, infoOf(t, v, hash))
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	rep, err = h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 1, rep.SkippedJettisoned)
	assert.Zero(t, rep.SkippedReduced)
}
