package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/testfs"
)

// The trust promises as the CLI keeps them (DESIGN.md, "Promises users
// rely on"): damage to an acknowledged unit, a missing, rolled-back or
// swapped segment, or a lost WATERMARK is reported by log, verify and list
// with the file and offset, and reading writes nothing; a torn tail that
// no one acknowledged is reported by reads and cut only by the next write;
// a read-only home can be read.

// smallSegments is the segment size the damage matrix writes with, so a
// voyage of a few observations spans several segments.
const smallSegments = 4 << 10

// trun runs helm as h.run does, with the event log rotated at size bytes
// (0: the default). Each test (and subtest) uses a harness of its own.
func trun(h *harness, size int64, args ...string) result {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	m := h.main()
	m.Options.SegmentSize = size
	err := m.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	code := ReportError(&stderr, err)
	return result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code, Err: err}
}

// trunOK runs helm with segments of smallSegments and requires success.
func trunOK(h *harness, args ...string) string {
	h.t.Helper()
	r := trun(h, smallSegments, args...)
	require.Equal(h.t, 0, r.Code, "helm %s\n%s", strings.Join(args, " "), r)
	return r.Stdout
}

// harnessAt returns a harness whose home is home.
func harnessAt(t *testing.T, home string) *harness {
	t.Helper()
	h := newHarness(t)
	h.Home, h.Env["HELM_HOME"] = home, home
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "human"
	return h
}

// noise returns n characters of hex text drawn from seed: a context
// description that compresses poorly, so each observation takes a few KiB
// of log.
func noise(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[r.IntN(16)]
	}
	return string(b)
}

// hashTree returns every file and directory under dir: files with the
// SHA-256 of their bytes and their mode, directories with their mode.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		require.NoError(t, err)
		if d.IsDir() {
			out[rel+"/"] = fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		out[rel] = fi.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// tornFiles returns the files under dir whose names hold ".torn-".
func tornFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if strings.Contains(d.Name(), ".torn-") {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

// copyTree copies the directory src to dst (which must not exist).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

// segmentFiles returns the names of the segment files in an events
// directory, in log order.
func segmentFiles(t *testing.T, events string) []string {
	t.Helper()
	entries, err := os.ReadDir(events)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".seg") {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// frame is one frame of a segment, as format.go draws it.
type frame struct {
	off  int64 // offset of its header
	len  int64 // data length
	last bool  // idx bit 31: the last frame of its commit unit
}

// end is the offset after the frame's padding.
func (f frame) end() int64 { return (f.off + 24 + f.len + 7) &^ 7 }

// segmentFrames walks the frames of a format-2 or format-4 segment's
// bytes (headers of 72 and 104 bytes) up to the first all-zero frame
// header (preallocated space) or the end of the file.
func segmentFrames(t *testing.T, b []byte) []frame {
	t.Helper()
	require.True(t, len(b) >= 72 && string(b[:8]) == "HELMSEG\n", "a segment")
	header := map[uint32]int64{2: 72, 4: 104}[binary.LittleEndian.Uint32(b[8:])]
	require.NotZero(t, header, "a format-2 or format-4 segment")
	var out []frame
	for off := header; off+24 <= int64(len(b)); {
		h := b[off : off+24]
		if bytes.Equal(h, make([]byte, 24)) {
			break
		}
		f := frame{off: off, len: int64(binary.LittleEndian.Uint32(h[4:])), last: binary.LittleEndian.Uint32(h[16:])&(1<<31) != 0}
		require.LessOrEqual(t, f.off+24+f.len, int64(len(b)), "frame at %d runs past the file", off)
		out = append(out, f)
		off = f.end()
	}
	return out
}

// dataEnd returns the offset after the last non-zero byte of b, rounded up
// to a frame boundary: where a preallocated segment's data ends.
func dataEnd(b []byte) int64 {
	n := int64(len(b))
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return (n + 7) &^ 7
}

// trustVoyage is the voyage the damage matrix damages: built through the
// CLI with 4 KiB segments, with a second voyage in the same home.
type trustVoyage struct {
	home   string // the intact home; cases damage copies of it
	id     string // the completed voyage
	other  string // an active voyage in the same home
	rolled string // a copy of the voyage's events dir whose last segment is an earlier copy of today's last
	midway string // a copy of the voyage's events dir half-way through
}

func (v *trustVoyage) events(home, id string) string {
	return filepath.Join(home, "voyages", id, "events")
}

// buildTrustVoyage starts a voyage, observes eight poorly compressing
// contexts, takes a bearing, observes again and completes it, snapshotting
// the events directory after every command; then starts another voyage
// in the same home with observations of its own. summary is the
// completion summary (its length moves the last frame's padding).
func buildTrustVoyage(t *testing.T, summary string) *trustVoyage {
	t.Helper()
	root := t.TempDir()
	h := harnessAt(t, filepath.Join(root, "home"))
	tv := &trustVoyage{home: h.Home}
	tv.id = strings.TrimSpace(trunOK(h, "voyage", "new", "--as", "john-agent", "trust matrix"))
	require.Len(t, tv.id, 36)
	events := tv.events(h.Home, tv.id)
	var snaps []string
	snap := func() {
		dst := filepath.Join(root, fmt.Sprintf("snap-%02d", len(snaps)))
		copyTree(t, events, dst)
		snaps = append(snaps, dst)
	}
	snap()
	for i := range 8 {
		trunOK(h, "--voyage", tv.id, "observe", "context", fmt.Sprintf("note %d: %s", i, noise(uint64(i), 1500)))
		snap()
	}
	trunOK(h, "--voyage", tv.id, "bearing", "--reading", "The notes say the widget crashes on init.")
	snap()
	trunOK(h, "--voyage", tv.id, "observe", "context", "a short note after the bearing")
	snap()
	trunOK(h, "--voyage", tv.id, "complete", "--summary", summary)
	tv.midway = snaps[4]

	// The latest snapshot whose last segment is today's last segment,
	// with other bytes: that segment rolled back.
	final := segmentFiles(t, events)
	last := final[len(final)-1]
	cur, err := os.ReadFile(filepath.Join(events, last))
	require.NoError(t, err)
	for i := len(snaps) - 1; i >= 0 && tv.rolled == ""; i-- {
		segs := segmentFiles(t, snaps[i])
		if segs[len(segs)-1] != last {
			continue
		}
		b, err := os.ReadFile(filepath.Join(snaps[i], last))
		require.NoError(t, err)
		if !bytes.Equal(b, cur) {
			tv.rolled = snaps[i]
		}
	}
	require.NotEmpty(t, tv.rolled, "test setup: no earlier copy of the last segment %s", last)

	tv.other = strings.TrimSpace(trunOK(h, "voyage", "new", "--as", "john-agent", "another voyage"))
	for i := range 8 {
		trunOK(h, "--voyage", tv.other, "observe", "context", fmt.Sprintf("other %d: %s", i, noise(uint64(100+i), 1500)))
	}
	return tv
}

// TestCLIReportsEveryDamageAndWritesNothing is the damage matrix through
// the CLI: every way a voyage's files can go missing, be rolled back, be
// taken from another voyage or have a bit flipped in its last
// acknowledged unit makes log, verify and list exit 1 naming the file
// (log and verify with the offset); list still shows the voyage, as
// DAMAGED, beside the readable one, whatever --status asks for; and none
// of the three changes a byte of the home or cuts anything. The damage is
// done to a copy of a home whose listing summaries are fresh, as a user's
// would be.
func TestCLIReportsEveryDamageAndWritesNothing(t *testing.T) {
	t.Parallel()
	// The completion summary's length is chosen so that the last frame
	// of the log has padding, one of the byte classes flipped below.
	var tv *trustVoyage
	var lastFrame frame
	for extra := range 8 {
		tv = buildTrustVoyage(t, "Found the crash in init()."+strings.Repeat("!", extra))
		segs := segmentFiles(t, tv.events(tv.home, tv.id))
		b, err := os.ReadFile(filepath.Join(tv.events(tv.home, tv.id), segs[len(segs)-1]))
		require.NoError(t, err)
		frames := segmentFrames(t, b)
		require.NotEmpty(t, frames)
		lastFrame = frames[len(frames)-1]
		if (24+lastFrame.len)%8 != 0 {
			break
		}
	}
	require.NotZero(t, (24+lastFrame.len)%8, "test setup: no summary length gave the last frame padding")
	require.True(t, lastFrame.last, "test setup: the log ends in a complete unit")

	events := tv.events(tv.home, tv.id)
	segs := segmentFiles(t, events)
	require.GreaterOrEqual(t, len(segs), 4, "test setup: the voyage spans several segments: %v", segs)
	first, mid, last := segs[0], segs[len(segs)/2], segs[len(segs)-1]
	otherEvents := tv.events(tv.home, tv.other)
	otherSegs := segmentFiles(t, otherEvents)
	// A segment of the other voyage with the name of one of ours, other
	// than the first.
	swapped := ""
	for _, s := range segs[1:] {
		if slices.Contains(otherSegs, s) {
			swapped = s
			break
		}
	}
	require.NotEmpty(t, swapped, "test setup: the voyages share a segment name past the first: %v %v", segs, otherSegs)
	midwaySegs := segmentFiles(t, tv.midway)
	require.Less(t, len(midwaySegs), len(segs))

	// copyFile replaces dst's bytes with src's.
	copyFile := func(t *testing.T, src, dst string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o600))
	}
	flip := func(off int64, bit uint) func(t *testing.T, ev string) {
		return func(t *testing.T, ev string) {
			p := filepath.Join(ev, last)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[off] ^= 1 << bit
			require.NoError(t, os.WriteFile(p, b, 0o600))
		}
	}
	f := lastFrame
	tests := []struct {
		name   string
		damage func(t *testing.T, events string)
		file   string // the file every report names
		offset int64  // the offset log and verify name (-1: any)
	}{
		{"first segment deleted", func(t *testing.T, ev string) {
			require.NoError(t, os.Remove(filepath.Join(ev, first)))
		}, first, -1},
		{"middle segment deleted", func(t *testing.T, ev string) {
			require.NoError(t, os.Remove(filepath.Join(ev, mid)))
		}, mid, -1},
		{"last segment deleted", func(t *testing.T, ev string) {
			require.NoError(t, os.Remove(filepath.Join(ev, last)))
		}, segs[len(segs)-2], -1},
		{"all segments deleted", func(t *testing.T, ev string) {
			for _, s := range segs {
				require.NoError(t, os.Remove(filepath.Join(ev, s)))
			}
		}, last, -1},
		{"last segment rolled back", func(t *testing.T, ev string) {
			copyFile(t, filepath.Join(tv.rolled, last), filepath.Join(ev, last))
		}, last, lastFrame.off},
		{"segments rolled back to mid-way but the watermark", func(t *testing.T, ev string) {
			for _, s := range segs {
				require.NoError(t, os.Remove(filepath.Join(ev, s)))
			}
			for _, s := range midwaySegs {
				copyFile(t, filepath.Join(tv.midway, s), filepath.Join(ev, s))
			}
		}, midwaySegs[len(midwaySegs)-1], -1},
		{"first segment from another voyage", func(t *testing.T, ev string) {
			copyFile(t, filepath.Join(otherEvents, first), filepath.Join(ev, first))
		}, first, -1},
		{"sealed segment from another voyage", func(t *testing.T, ev string) {
			copyFile(t, filepath.Join(otherEvents, swapped), filepath.Join(ev, swapped))
		}, swapped, -1},
		{"sealed segment truncated", func(t *testing.T, ev string) {
			p := filepath.Join(ev, mid)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, fi.Size()-5))
		}, mid, -1},
		{"WATERMARK deleted", func(t *testing.T, ev string) {
			require.NoError(t, os.Remove(filepath.Join(ev, "WATERMARK")))
		}, "WATERMARK", -1},
		{"flip in the last unit's frame checksum", flip(f.off+1, 0), last, lastFrame.off},
		{"flip in the last unit's frame length", flip(f.off+4, 0), last, lastFrame.off},
		{"flip in the last unit's frame seq", flip(f.off+8, 0), last, lastFrame.off},
		{"flip of the last unit's last-frame flag", flip(f.off+19, 7), last, lastFrame.off},
		{"flip in the last unit's frame sum", flip(f.off+20, 0), last, lastFrame.off},
		{"flip in the last unit's first data byte", flip(f.off+24, 0), last, lastFrame.off},
		{"flip in the last unit's last data byte", flip(f.off+24+f.len-1, 0), last, lastFrame.off},
		{"flip in the last unit's padding", flip(f.off+24+f.len, 0), last, lastFrame.off},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := harnessAt(t, filepath.Join(t.TempDir(), "home"))
			copyTree(t, tv.home, h.Home)
			tt.damage(t, tv.events(h.Home, tv.id))
			before := hashTree(t, h.Home)
			offset := regexp.MustCompile(`\bfile ` + regexp.QuoteMeta(tt.file) + ` offset \d+\b`)
			if !strings.HasSuffix(tt.file, ".seg") { // WATERMARK: a file with no offset to name
				offset = regexp.MustCompile(`\bfile ` + regexp.QuoteMeta(tt.file) + `\b`)
			}
			if tt.offset >= 0 {
				offset = regexp.MustCompile(`\bfile ` + regexp.QuoteMeta(tt.file) + ` offset ` + itoa(int(tt.offset)) + `\b`)
			}

			r := trun(h, 0, "--voyage", tv.id, "log")
			assert.Equal(t, 1, r.Code, "log\n%s", r)
			assert.Contains(t, r.Stderr, tt.file, "log names the damaged file\n%s", r)
			assert.Regexp(t, offset, r.Stderr, "log names the file and the offset\n%s", r)
			assert.Contains(t, r.Stderr, tv.id, "log names the voyage")

			r = trun(h, 0, "--voyage", tv.id, "voyage", "verify")
			assert.Equal(t, 1, r.Code, "verify\n%s", r)
			assert.Contains(t, r.Stdout, "DAMAGED", "verify\n%s", r)
			assert.Contains(t, r.Stdout, tt.file, "verify names the damaged file\n%s", r)
			assert.Regexp(t, offset, r.Stdout, "verify names the file and the offset\n%s", r)

			for _, status := range []string{"all", "active"} {
				r = trun(h, 0, "voyage", "list", "--status", status)
				assert.Equal(t, 1, r.Code, "list --status %s\n%s", status, r)
				assert.Regexp(t, regexp.MustCompile(`(?m)^`+short(tv.id)+`\s+\?\s+DAMAGED\b`), r.Stdout, "list --status %s shows the voyage as DAMAGED\n%s", status, r)
				assert.NotContains(t, r.Stdout, "No ", "list --status %s", status)
				assert.Contains(t, r.Stdout, short(tv.other), "list --status %s still shows the readable voyage", status)
				assert.Contains(t, r.Stderr, tt.file, "list --status %s names the damaged file\n%s", status, r)
			}

			assert.Equal(t, before, hashTree(t, h.Home), "reading a damaged voyage changed the home")
			assert.Empty(t, tornFiles(t, h.Home), "reading a damaged voyage cut something")
		})
	}
}

// tearLastWrite simulates a crash in the middle of a write to voyage id
// in h's home: it runs one more observe, then puts back what that write
// left for after its fdatasync (WATERMARK and the listing summary) and
// truncates the last segment in the middle of the new unit. It returns
// the segment's name, the offset the unit starts at, and the bytes of it
// left in the segment.
func tearLastWrite(t *testing.T, h *harness, id string) (seg string, unit int64, torn []byte) {
	t.Helper()
	dir := filepath.Join(h.Home, "voyages", id)
	events := filepath.Join(dir, "events")
	segs := segmentFiles(t, events)
	seg = segs[len(segs)-1]
	before, err := os.ReadFile(filepath.Join(events, seg))
	require.NoError(t, err)
	unit = dataEnd(before)
	// What the torn write's process would have written after its commit,
	// had it not crashed: the watermark, the summary, and the home
	// index's record of its close (a cache beyond the log is evidence of
	// a rollback, so the crash must not leave one).
	saved := map[string][]byte{}
	for _, name := range []string{filepath.Join(events, "WATERMARK"), filepath.Join(dir, "summary.json"), filepath.Join(h.Home, "index")} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		saved[name] = b
	}

	h.ok("--voyage", id, "observe", "context", "the write a crash tore: "+noise(9, 600))

	require.Equal(t, segs, segmentFiles(t, events), "test setup: the torn write stays in segment %s", seg)
	after, err := os.ReadFile(filepath.Join(events, seg))
	require.NoError(t, err)
	end := dataEnd(after)
	require.Greater(t, end, unit+64, "test setup: the write landed after offset %d", unit)
	for name, b := range saved {
		require.NoError(t, os.WriteFile(name, b, 0o600))
	}
	cut := (unit + end) / 2
	require.NoError(t, os.Truncate(filepath.Join(events, seg), cut))
	return seg, unit, after[unit:cut]
}

// TestTornTailIsReportedByReadsAndCutOnlyByAWrite: a write torn by a
// crash (never acknowledged: the watermark is below it) is reported by
// log and verify; they, slate list and voyage list succeed and change
// nothing; the next observe cuts it, says what it cut and where it saved
// the bytes (exactly the torn bytes), and records its own observation.
func TestTornTailIsReportedByReadsAndCutOnlyByAWrite(t *testing.T) {
	t.Parallel()
	h := harnessAt(t, filepath.Join(t.TempDir(), "home"))
	id := h.start("torn tail")
	h.ok("observe", "context", "before the crash")
	seg, unit, tornBytes := tearLastWrite(t, h, id)
	before := hashTree(t, h.Home)

	r := h.run("log")
	require.Equal(t, 0, r.Code, "log\n%s", r)
	assert.Contains(t, r.Stderr, "torn write", "log warns of the torn write\n%s", r)
	assert.Contains(t, r.Stderr, seg)
	assert.Contains(t, r.Stderr, fmt.Sprintf("(%d bytes at offset %d of %s)", len(tornBytes), unit, seg), "the torn unit starts after the last acknowledged one")
	assert.Contains(t, r.Stderr, "next change", "it says the next change cuts it")

	r = h.run("voyage", "verify")
	require.Equal(t, 0, r.Code, "verify\n%s", r)
	assert.Contains(t, r.Stdout, fmt.Sprintf("torn tail: %s at offset %d (%d bytes)", seg, unit, len(tornBytes)))
	assert.Contains(t, r.Stdout, "OK: nothing damaged")

	r = h.run("slate", "list")
	require.Equal(t, 0, r.Code, "slate list\n%s", r)
	assert.Contains(t, r.Stdout, "before the crash")
	assert.NotContains(t, r.Stdout, "the write a crash tore", "a torn unit is invisible")
	h.ok("voyage", "list")

	assert.Equal(t, before, hashTree(t, h.Home), "a read changed the home")
	assert.Empty(t, tornFiles(t, h.Home), "a read cut the torn tail")

	r = h.run("observe", "context", "x")
	require.Equal(t, 0, r.Code, "observe\n%s", r)
	torn := tornFiles(t, h.Home)
	require.Len(t, torn, 1, "the cut bytes are saved")
	assert.Contains(t, r.Stderr, "cut a torn final write", "%s", r)
	assert.Contains(t, r.Stderr, fmt.Sprintf("(%d bytes at offset %d of %s)", len(tornBytes), unit, seg))
	assert.Contains(t, r.Stderr, "saved in "+torn[0])
	saved, err := os.ReadFile(torn[0])
	require.NoError(t, err)
	assert.Equal(t, tornBytes, saved, "the saved bytes are the torn unit's")
	assert.Equal(t, filepath.Join(h.Home, "voyages", id, "events"), filepath.Dir(torn[0]), "saved beside the segment")

	slate := h.ok("slate", "list")
	assert.Contains(t, slate, "Context: x")
	assert.Contains(t, slate, "before the crash")
	assert.NotContains(t, slate, "the write a crash tore")
	assert.Contains(t, h.ok("voyage", "verify"), "OK: nothing damaged")
	r = h.run("log")
	require.Equal(t, 0, r.Code)
	assert.Empty(t, r.Stderr, "the tail was cut once and for all")
}

// TestReadOnlyHomeCanBeRead: on a home mounted read-only, every read
// command works and writes nothing — for a completed voyage, an active
// one, and one whose listing summary is gone and whose log ends in a torn
// write — and a write fails with an error naming the path.
func TestReadOnlyHomeCanBeRead(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "home")
	h := harnessAt(t, src)
	done := h.start("completed voyage")
	h.ok("observe", "context", "seen")
	h.ok("bearing", "--reading", "read")
	h.ok("complete", "--summary", "done")
	active := h.start("active voyage")
	h.ok("--voyage", active, "observe", "context", "on the slate")
	torn := h.start("torn voyage")
	h.ok("--voyage", torn, "observe", "context", "before the crash")
	tearLastWrite(t, h, torn)
	require.NoError(t, os.Remove(filepath.Join(src, "voyages", torn, "summary.json")))

	dst := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dst, 0o755))
	testfs.BindReadOnly(t, src, dst)

	ro := harnessAt(t, dst)
	before := hashTree(t, dst)
	for _, id := range []string{done, active, torn} {
		for _, args := range [][]string{
			{"log"}, {"log", "--json"}, {"voyage", "show"}, {"voyage", "show", "--json"},
			{"slate", "list"}, {"slate", "list", "--json"}, {"voyage", "verify"}, {"voyage", "verify", "--json"},
		} {
			r := ro.run(append([]string{"--voyage", id}, args...)...)
			if !assert.Equal(t, 0, r.Code, "voyage %s: helm %s\n%s", id, strings.Join(args, " "), r) {
				continue
			}
			switch {
			case args[0] == "voyage" && args[1] == "verify" && len(args) == 2:
				assert.Contains(t, r.Stdout, "OK: nothing damaged")
			case args[0] == "voyage" && args[1] == "verify":
				assert.Contains(t, r.Stdout, `"ok": true`)
			}
			if id == torn {
				if args[0] != "voyage" || args[1] != "verify" {
					assert.Contains(t, r.Stderr, "torn write", "helm %s", strings.Join(args, " "))
				}
			} else {
				assert.Empty(t, r.Stderr, "helm %s", strings.Join(args, " "))
			}
		}
	}
	for _, args := range [][]string{
		{"voyage", "list"}, {"voyage", "list", "--status", "all"}, {"voyage", "list", "--status", "all", "--json"},
	} {
		out := ro.ok(args...)
		assert.Contains(t, out, "active voyage")
		assert.Contains(t, out, "torn voyage")
		if slices.Contains(args, "all") {
			assert.Contains(t, out, "completed voyage")
		}
	}
	assert.Equal(t, before, hashTree(t, dst), "a read changed the read-only home")

	for _, tc := range []struct {
		name string
		args []string
		path string // in the error
	}{
		{"observe on an active voyage", []string{"--voyage", active, "observe", "context", "x"}, filepath.Join(dst, "voyages", active)},
		{"observe on a torn voyage", []string{"--voyage", torn, "observe", "context", "x"}, filepath.Join(dst, "voyages", torn)},
		{"start a voyage", []string{"voyage", "new", "--as", "john-agent", "new voyage"}, filepath.Join(dst, "voyages")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ro.run(tc.args...)
			assert.Equal(t, 1, r.Code, "%s", r)
			assert.True(t, strings.HasPrefix(r.Stderr, "helm: "), "%s", r)
			assert.Contains(t, r.Stderr, "read-only file system", "%s", r)
			assert.Contains(t, r.Stderr, tc.path, "the error names the path\n%s", r)
			assert.NotContains(t, r.Stderr, "panic", "%s", r)
		})
	}
	assert.Equal(t, before, hashTree(t, dst), "a failed write changed the read-only home")
}
