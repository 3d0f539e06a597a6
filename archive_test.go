package helm_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
)

// exportAction is an action that touches nothing and reports result.
type exportAction struct {
	kind    string
	Message string `json:"message,omitempty"`
	result  logbook.ActionResult
	fail    error
}

func (a *exportAction) Kind() string { return a.kind }
func (a *exportAction) Perform(ctx context.Context) (logbook.ActionResult, error) {
	return a.result, a.fail
}

// richVoyage records a voyage with every kind of event an archive
// carries: small and large artifacts (one in the pack), a challenge,
// actions performed and failed, a note, a reduced and a jettisoned
// artifact, a slate left open, a completion and a judgement.
func richVoyage(t *testing.T, h *helm.Home) *helm.Voyage {
	t.Helper()
	ctx := context.Background()
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, &helm.StartOptions{Repo: "octo/widgets", Base: "1a2b3c4d5e6f", Branch: "main"})

	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	rng := rand.New(rand.NewPCG(4, 2))
	big := make([]byte, 96<<10) // compresses to more than the inline limit: goes to the pack
	for i := range big {
		big[i] = 'a' + byte(rng.IntN(26))
	}
	large, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "big.txt"}, Sighting: &noteSighting{Text: string(big)}}, who)
	require.NoError(t, err)
	require.Zero(t, large.Artifact.Blob, "the large sighting is in the pack")
	_, err = v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() { cfg.apply() }"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(t, err)
	bob := logbook.Who{Identity: "bob", Role: "reviewer", Method: "human"}
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "cfg is a reference: it cannot be null", Reading: "init() panics when apply() fails."}, bob)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "commit", result: logbook.ActionResult{SHA: "abc1234def5678"}}, who, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "push", fail: errors.New("remote rejected: protected branch")}, who, nil)
	require.Error(t, err)
	_, err = v.Perform(ctx, &exportAction{kind: "create-pull-request", result: logbook.ActionResult{Number: 45, URL: "https://github.com/octo/widgets/pull/45"}}, who, nil)
	require.NoError(t, err)
	_, err = v.Note(ctx, "Waiting for CI on PR #45.", bob)
	require.NoError(t, err)
	secret, err := v.Observe(ctx, &note{Topic: "customer.csv", Text: "name,card\nann,4111"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, secret.Record.Artifact, "holds a customer's data", who))
	_, err = v.Reduce(ctx, large.Record.Artifact, helm.Reduction{Summary: &noteSighting{Text: "96 KiB of letters"}, Method: "human"}, who)
	require.NoError(t, err)
	_, err = v.Observe(ctx, &note{Topic: "left.txt", Text: "left on the slate"}, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init. PR #45 merged.", who))
	_, err = v.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "The fix is right."}, logbook.Who{Identity: "carol", Role: "judge", Method: "human"})
	require.NoError(t, err)
	return v
}

// quickOptions are fixedOptions without fsync: for tests of logic.
func quickOptions() *helm.Options {
	opts := fixedOptions()
	opts.NoSync = true
	return opts
}

// readerViews are a voyage's views as a reader sees them: where an
// artifact's bytes lie (Offset, Blob) is left out.
type readerViews struct {
	Info          helm.VoyageInfo             `json:"info"`
	Slate         []logbook.ObservationRecord `json:"slate"`
	Logbook       []logbook.Entry             `json:"logbook"`
	FailedActions []logbook.Entry             `json:"failed_actions"`
	Artifacts     []helm.ArtifactInfo         `json:"artifacts"`
	Story         string                      `json:"story"`
	// Bytes are the SHA-256 of each stowed artifact's bytes, by hash.
	Bytes map[string]string `json:"bytes"`
}

func viewsOf(t *testing.T, v *helm.Voyage) readerViews {
	t.Helper()
	ctx := context.Background()
	var story strings.Builder
	require.NoError(t, writeStory(ctx, v, &story))
	rv := readerViews{Info: v.Info(), Slate: v.Slate(), Logbook: entriesOf(t, v), FailedActions: failedOf(t, v),
		Story: story.String(), Bytes: map[string]string{}}
	for _, a := range artifactsOf(t, v) {
		a.Offset, a.Blob = 0, 0
		rv.Artifacts = append(rv.Artifacts, a)
		if a.Status != logbook.ArtifactStowed {
			continue
		}
		data, err := readArtifact(ctx, v, a.Hash)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		rv.Bytes[a.Hash] = hex.EncodeToString(sum[:])
	}
	return rv
}

func viewsJSON(t *testing.T, v *helm.Voyage) string {
	t.Helper()
	data, err := json.MarshalIndent(viewsOf(t, v), "", "  ")
	require.NoError(t, err)
	return string(data) + "\n"
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenFile compares got with path, rewriting it under -update.
func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), got, "%s", path)
}

// exportArchive exports voyage id of h (Home.Export).
func exportArchive(t *testing.T, h *helm.Home, id string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, h.Export(t.Context(), id, &buf))
	return buf.Bytes()
}

// treeSum hashes every file under dir, by path: what a home holds.
func treeSum(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestArchiveRoundTrip(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v := richVoyage(t, h)
	archive := exportArchive(t, h, v.ID())

	// The archive's form: a header, the events, the artifacts, a trailer
	// whose digest covers the rest.
	lines := strings.Split(strings.TrimSuffix(string(archive), "\n"), "\n")
	var hdr struct {
		Export    int         `json:"helm_export"`
		VoyageID  string      `json:"voyage_id"`
		Events    int         `json:"events"`
		Stubs     int         `json:"stubs"`
		Artifacts int         `json:"artifacts"`
		Head      *chain.Head `json:"head"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &hdr))
	assert.Equal(t, 2, hdr.Export)
	assert.Equal(t, v.ID(), hdr.VoyageID)
	srcHead, err := v.Head(ctx)
	require.NoError(t, err)
	require.NotNil(t, hdr.Head)
	assert.Equal(t, srcHead, *hdr.Head, "the archive's head is the voyage's")
	assert.Equal(t, 1, hdr.Stubs, "the jettisoned blob record's place")
	require.Equal(t, 1+hdr.Events+hdr.Stubs+hdr.Artifacts+1, len(lines))
	var events bytes.Buffer
	require.NoError(t, exportEvents(ctx, &events, v))
	exported := strings.Split(strings.TrimSuffix(events.String(), "\n"), "\n")
	require.Len(t, exported, hdr.Events, "every event, the artifacts' too")
	for i, line := range exported {
		// The event as the read path yields it, with voyage_id first and
		// its stored record last.
		assert.True(t, strings.HasPrefix(lines[1+i], `{"voyage_id":"`+v.ID()+`",`+line[1:len(line)-1]+`,"record":"`), "line %d: %s", 2+i, lines[1+i])
	}
	assert.Contains(t, events.String(), `"type":"artifact-jettisoned"`)
	stowed := 0
	for _, a := range artifactsOf(t, v) {
		if a.Status == logbook.ArtifactStowed {
			stowed++
		}
	}
	assert.Equal(t, stowed, hdr.Artifacts, "every stowed artifact: neither the jettisoned one nor the reduced one's payload")
	for _, line := range lines[1+hdr.Events+hdr.Stubs : len(lines)-1] {
		assert.True(t, strings.HasPrefix(line, `{"artifact":{"hash":"`), line[:40])
		assert.Contains(t, line, `"encoding":"zstd","data":"`)
	}
	sum := blake3.Sum256(archive[:len(archive)-len(lines[len(lines)-1])-1])
	assert.Equal(t, `{"helm_export_end":2,"digest":"`+hex.EncodeToString(sum[:])+`"}`, lines[len(lines)-1])

	// Imported into another home, the voyage reads the same.
	other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	imported, err := other.Import(ctx, bytes.NewReader(archive), nil)
	require.NoError(t, err)
	defer imported.Close()
	assert.Equal(t, v.ID(), imported.ID())
	want := viewsJSON(t, v)
	goldenFile(t, filepath.Join("testdata", "export", "views.golden.json"), want)
	assert.Equal(t, want, viewsJSON(t, imported))
	reopened, err := other.Voyage(ctx, v.ID())
	require.NoError(t, err)
	assert.Equal(t, want, viewsJSON(t, reopened), "opened afresh")
	reopened.Close()
	for _, home := range []*helm.Home{h, other} {
		rep, err := home.Verify(ctx, v.ID(), nil)
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%+v", rep.Problems)
	}
	// The large artifact went to the pack again, the small ones to the log.
	for _, a := range artifactsOf(t, imported) {
		orig, err := v.ArtifactInfo(ctx, a.Hash)
		require.NoError(t, err)
		assert.Equal(t, orig.Blob == 0, a.Blob == 0, "artifact %s stays where it was", a.Hash)
	}
	// Exported again, it is the same archive, head and stub included: the
	// jettisoned blob record, whose bytes never travelled, is a stub in
	// the new home, by the length and digest the archive gave.
	assert.Equal(t, string(archive), string(exportArchive(t, other, imported.ID())))
	impHead, err := imported.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, srcHead, impHead)

	// The imported voyage compacts: the stub is reclaimed already.
	crep, err := imported.Compact(ctx)
	require.NoError(t, err)
	assert.Zero(t, crep.Artifacts, "the jettisoned blob record arrived reclaimed")
	rep, err := other.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Problems)

	// Importing twice is refused, and says what to do.
	before := treeSum(t, other.Dir())
	_, err = other.Import(ctx, bytes.NewReader(archive), nil)
	require.ErrorIs(t, err, helm.ErrInvalid)
	assert.Contains(t, err.Error(), "holds voyage "+v.ID()+" already")
	assert.Equal(t, hint.OtherHome, helm.HintOf(err).Kind)
	assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
	_, err = h.Import(ctx, bytes.NewReader(archive), nil)
	require.ErrorIs(t, err, helm.ErrInvalid, "nor into the home it came from")
}

// lineStart returns the offset of line n (from 1) in data.
func lineStart(data []byte, n int) int {
	off := 0
	for range n - 1 {
		off += bytes.IndexByte(data[off:], '\n') + 1
	}
	return off
}

func TestImportRefusesATamperedArchive(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v := richVoyage(t, h)
	archive := exportArchive(t, h, v.ID())
	n := bytes.Count(archive, []byte("\n"))
	var events int
	for i := 2; i < n; i++ {
		if bytes.HasPrefix(archive[lineStart(archive, i):], []byte(`{"artifact"`)) {
			events = i - 2
			break
		}
	}
	require.NotZero(t, events)
	dataOf := func(line int) int { // the middle of an artifact line's data
		start := lineStart(archive, line)
		end := start + bytes.IndexByte(archive[start:], '\n')
		data := start + bytes.Index(archive[start:end], []byte(`"data":"`)) + len(`"data":"`)
		return data + (end-data)/2
	}
	type flip struct {
		name string
		line int
		at   int
	}
	flips := []flip{
		{"header's voyage id", 1, lineStart(archive, 1) + bytes.Index(archive, []byte(v.ID()[:8])) + 2},
		{"header's event count", 1, lineStart(archive, 1) + bytes.Index(archive, []byte(`"events":`)) + len(`"events":`)},
		{"the reading of a bearing", 0, bytes.Index(archive, []byte("null check missing")) + 2},
		{"an event's time", 0, bytes.Index(archive, []byte(`"at":"2026-02-26T17:0`)) + len(`"at":"2026-02-26T17:0`)},
		{"the first artifact's data", events + 2, dataOf(events + 2)},
		{"the last artifact's data", n - 1, dataOf(n - 1)},
		{"the trailer's digest", n, lineStart(archive, n) + len(`{"helm_export_end":1,"digest":"`) + 5},
		{"the trailer's newline", n, len(archive) - 1},
	}
	for i := range 5 { // and a few anywhere
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		at := rng.IntN(len(archive))
		flips = append(flips, flip{fmt.Sprintf("byte %d", at), 0, at})
	}
	other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
	require.NoError(t, err)
	_, err = other.Start(ctx, "already here", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	before := treeSum(t, other.Dir())
	for _, f := range flips {
		t.Run(f.name, func(t *testing.T) {
			bad := bytes.Clone(archive)
			bad[f.at] ^= 0x04
			_, err := other.Import(ctx, bytes.NewReader(bad), nil)
			require.Error(t, err)
			t.Log(err)
			assert.ErrorIs(t, err, helm.ErrInvalid)
			if f.line == 0 {
				f.line = bytes.Count(bad[:f.at], []byte("\n")) + 1
			}
			assert.Regexp(t, `archive line \d+`, err.Error())
			if f.line >= events+2 {
				// Where the flip is found: the artifact's line, or the
				// trailer (whose digest no longer matches).
				assert.True(t, strings.Contains(err.Error(), fmt.Sprintf("archive line %d:", f.line)) ||
					strings.Contains(err.Error(), fmt.Sprintf("archive line %d:", n)), "%v", err)
			}
			assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
		})
	}
	// Cut short anywhere, it is refused too.
	for _, cut := range []int{0, 10, lineStart(archive, 3), lineStart(archive, events+3) - 20, len(archive) - 2} {
		_, err := other.Import(ctx, bytes.NewReader(archive[:cut]), nil)
		assert.ErrorIs(t, err, helm.ErrInvalid, "cut at %d", cut)
	}
	// And with something after the trailer.
	_, err = other.Import(ctx, bytes.NewReader(append(bytes.Clone(archive), '\n')), nil)
	assert.ErrorIs(t, err, helm.ErrInvalid)
	assert.Equal(t, before, treeSum(t, other.Dir()), "nothing written")
	// The intact archive imports.
	_, err = other.Import(ctx, bytes.NewReader(archive), nil)
	require.NoError(t, err)
}

// TestImportOfCorpusVoyages: every voyage written by a landed version
// (compacted ones among them) travels through an archive to another home
// and reads the same there.
func TestImportOfCorpusVoyages(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("testdata", "voyages", "*", "voyages"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	ctx := context.Background()
	for _, e := range entries {
		home := filepath.Dir(e)
		t.Run(filepath.Base(home), func(t *testing.T) {
			h, err := helm.Open(copyHome(t, home), &helm.Options{NoSync: true})
			require.NoError(t, err)
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			require.NotEmpty(t, list)
			sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
			other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
			require.NoError(t, err)
			for _, info := range list {
				v, err := h.Voyage(ctx, info.ID)
				require.NoError(t, err)
				archive := exportArchive(t, h, info.ID)
				imported, err := other.Import(ctx, bytes.NewReader(archive), nil)
				require.NoError(t, err, "voyage %s", info.ID)
				assert.Equal(t, viewsJSON(t, v), viewsJSON(t, imported), "voyage %s", info.ID)
				assert.Equal(t, headOf(t, v), headOf(t, imported), "voyage %s: the imported voyage's head is the source's", info.ID)
				again := exportArchive(t, other, info.ID)
				assert.Equal(t, string(archive), string(again), "voyage %s exported again", info.ID)
				rep, err := other.Verify(ctx, info.ID, nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "voyage %s: %+v", info.ID, rep.Problems)
				_, err = imported.Compact(ctx)
				require.NoError(t, err)
				require.NoError(t, imported.Close())
				imported, err = other.Voyage(ctx, info.ID)
				require.NoError(t, err)
				assert.Equal(t, viewsJSON(t, v), viewsJSON(t, imported), "voyage %s, compacted", info.ID)
				require.NoError(t, imported.Close())
				require.NoError(t, v.Close())
			}
		})
	}
}

// headOf is v's head.
func headOf(t *testing.T, v *helm.Voyage) chain.Head {
	t.Helper()
	h, err := v.Head(t.Context())
	require.NoError(t, err)
	return h
}

// TestImportKeepsTheHeadOfACompactedVoyage: a voyage whose jettisoned
// blob record and reduced pack copy were compacted away travels through
// an archive with its head: the reclaimed blob record arrives as a stub
// by the digest its log kept, and the voyage verifies there.
func TestImportKeepsTheHeadOfACompactedVoyage(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v := richVoyage(t, h)
	want := headOf(t, v)
	crep, err := v.Compact(ctx)
	require.NoError(t, err)
	require.Positive(t, crep.Artifacts, "something was reclaimed")
	require.Equal(t, want, headOf(t, v), "compaction keeps the head")
	archive := exportArchive(t, h, v.ID())
	require.Contains(t, string(archive), `{"stub":`)

	other, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	imported, err := other.Import(ctx, bytes.NewReader(archive), nil)
	require.NoError(t, err)
	defer imported.Close()
	assert.Equal(t, want, headOf(t, imported))
	assert.Equal(t, viewsJSON(t, v), viewsJSON(t, imported))
	rep, err := other.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Problems)
	assert.Equal(t, want, rep.Head)
	assert.Equal(t, string(archive), string(exportArchive(t, other, v.ID())), "exported again, the same archive")
	// A witness of the source's head holds for the imported voyage.
	rep, err = other.Verify(ctx, v.ID(), &helm.VerifyOptions{Heads: []chain.Head{want}})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Problems)
}

// TestArchiveOfADamagedArtifactFails: an export reads every artifact it
// writes, and a damaged one fails it rather than travel.
func TestArchiveOfADamagedArtifactFails(t *testing.T) {
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	// A stowed artifact in the pack (richVoyage's large one is reduced:
	// its payload does not travel).
	v, err := h.Start(ctx, "damaged evidence", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Observe(ctx, &note{Topic: "stowed.txt", Text: incompressible(90 << 10)}, who, nil)
	require.NoError(t, err)
	pack := filepath.Join(v.Storage().Dir, artifact.PackName)
	data, err := os.ReadFile(pack)
	require.NoError(t, err)
	data[len(data)/2] ^= 0x10
	require.NoError(t, os.WriteFile(pack, data, 0o600))
	err = h.Export(ctx, v.ID(), new(bytes.Buffer))
	require.ErrorIs(t, err, helm.ErrArtifactDamaged)
	assert.Equal(t, hint.Verify, helm.HintOf(err).Kind)
}

// copyHome copies a corpus home to a temporary directory, so that a test
// may open it (opening may mend what a writer left).
func copyHome(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// digestMatches reports whether data ends in a trailer whose digest is
// that of every byte before it.
func digestMatches(data []byte) bool {
	body := bytes.TrimSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(body, '\n')
	if i < 0 {
		return false
	}
	var tr struct {
		Digest string `json:"digest"`
	}
	if json.Unmarshal(body[i+1:], &tr) != nil {
		return false
	}
	sum := blake3.Sum256(data[:i+1])
	return tr.Digest == hex.EncodeToString(sum[:])
}

// FuzzImport: whatever the bytes, Import never panics, and never makes a
// voyage from bytes whose digest does not match; one it refuses leaves
// nothing behind.
func FuzzImport(f *testing.F) {
	ctx := context.Background()
	src, err := helm.Open(f.TempDir(), quickOptions())
	require.NoError(f, err)
	v, err := src.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	require.NoError(f, err)
	_, err = v.Observe(ctx, &note{Topic: "widget.rs", Text: "fn init() {}"}, who, nil)
	require.NoError(f, err)
	gone, err := v.Observe(ctx, &note{Topic: "customer.csv", Text: "ann,4111"}, who, nil)
	require.NoError(f, err)
	require.NoError(f, v.Jettison(ctx, gone.Record.Artifact, "a customer's", who))
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(f, err)
	_, err = v.Perform(ctx, &exportAction{kind: "commit", result: logbook.ActionResult{SHA: "abc1234"}}, who, nil)
	require.NoError(f, err)
	var small bytes.Buffer
	require.NoError(f, src.Export(ctx, v.ID(), &small))
	// Small seeds: a large artifact's (the pack's) would make each
	// interesting input minimise for long. The pack's path is the round
	// trip's and the tamper test's.
	f.Add(small.Bytes())
	f.Add(small.Bytes()[:small.Len()/2])
	f.Add([]byte(`{"helm_export":1,"voyage_id":"a3b0fc12-0000-4000-8000-000000000001","events":1,"artifacts":0}` + "\n"))
	f.Add([]byte(`{"helm_export":2,"voyage_id":"a3b0fc12-0000-4000-8000-000000000001","events":1,"stubs":1,"artifacts":0,"head":{"seq":1,"hash":"` + strings.Repeat("0", 64) + `"}}` + "\n"))
	// The small archive's event lines without their records: format 1.
	old := regexp.MustCompile(`,"record":"[^"]*"}\n`).ReplaceAll(small.Bytes(), []byte("}\n"))
	old = regexp.MustCompile(`,"stubs":\d+`).ReplaceAll(old, nil)
	old = regexp.MustCompile(`,"head":\{[^}]*\}`).ReplaceAll(old, nil)
	old = regexp.MustCompile(`(?m)^\{"stub":.*\n`).ReplaceAll(old, nil)
	f.Add(bytes.Replace(old, []byte(`{"helm_export":2,`), []byte(`{"helm_export":1,`), 1))
	require.NoError(f, v.Close())

	home, err := helm.Open(f.TempDir(), &helm.Options{NoSync: true})
	require.NoError(f, err)
	voyages := filepath.Join(home.Dir(), "voyages")
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := home.Import(ctx, bytes.NewReader(data), nil)
		if err == nil {
			id := v.ID()
			require.NoError(t, v.Close())
			require.True(t, digestMatches(data), "a voyage was made from bytes whose digest does not match")
			require.NoError(t, os.RemoveAll(filepath.Join(voyages, id)))
		} else {
			entries, _ := os.ReadDir(voyages)
			require.Empty(t, entries, "a refused import left %v", entries)
		}
		// With its digest made right, the bytes reach every other check:
		// a voyage made of them verifies.
		body := bytes.TrimSuffix(data, []byte("\n"))
		i := bytes.LastIndexByte(body, '\n')
		if i < 0 {
			return
		}
		sum := blake3.Sum256(data[:i+1])
		version := 1 // the trailer names the header's format
		if bytes.HasPrefix(data, []byte(`{"helm_export":2,`)) {
			version = 2
		}
		fixed := fmt.Appendf(bytes.Clone(data[:i+1]), `{"helm_export_end":%d,"digest":"%x"}`+"\n", version, sum)
		v, err = home.Import(ctx, bytes.NewReader(fixed), nil)
		if err != nil {
			entries, _ := os.ReadDir(voyages)
			require.Empty(t, entries, "a refused import left %v", entries)
			return
		}
		id := v.ID()
		require.NoError(t, v.Close())
		rep, err := home.Verify(ctx, id, nil)
		require.NoError(t, err)
		require.True(t, rep.OK(), "an imported voyage does not verify: %+v", rep.Problems)
		require.NoError(t, os.RemoveAll(filepath.Join(voyages, id)))
	})
}

// TestExportOpensTheVoyageByPrefixAndWritesNothing: Home.Export finds the
// voyage by an id prefix as every Home method does, writes the archive
// Import reads, and, like every read, leaves the home as it was; an
// unknown voyage is an error and w gets nothing.
func TestExportOpensTheVoyageByPrefixAndWritesNothing(t *testing.T) {
	ctx := t.Context()
	h, err := helm.Open(t.TempDir(), quickOptions())
	require.NoError(t, err)
	v := richVoyage(t, h)
	id := v.ID()
	require.NoError(t, v.Close())
	before := treeSum(t, h.Dir())

	tests := []struct {
		name    string
		voyage  string
		wantErr error
	}{
		{"by its id", id, nil},
		{"by a prefix", id[:8], nil},
		{"an unknown voyage", "ffffffff-ffff", helm.ErrNoVoyage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := h.Export(ctx, tt.voyage, &buf)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Zero(t, buf.Len(), "nothing written to w")
			} else {
				require.NoError(t, err)
				other, err := helm.Open(t.TempDir(), &helm.Options{NoSync: true})
				require.NoError(t, err)
				imported, err := other.Import(ctx, &buf, nil)
				require.NoError(t, err)
				assert.Equal(t, id, imported.ID())
				require.NoError(t, imported.Close())
			}
			assert.Equal(t, before, treeSum(t, h.Dir()), "the home is as it was")
		})
	}
}
