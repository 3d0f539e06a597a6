//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/blake3"
)

// A hostile archive imported (helm voyage import FILE) is refused with
// a bounded peak RSS, an error naming the archive and what is wrong with
// it, and the home left as it was. The attacker knows the format: every
// archive below is a real export edited as an attacker would, its
// stored sizes and its trailer's digest recomputed, so that nothing but
// the attack itself is wrong with it.

// importCeilingMB is the peak RSS an import of any archive may reach: a
// bound that does not grow with the archive (its Go heap stays under
// 70 MB here), with room for a loaded machine's garbage collector (the
// four thousand blobs were measured at 75 to 143 MB on one), and for the
// helper's own (a race-built one is 50 MB).
const importCeilingMB = 192

// TestImportingAHostileArchiveStaysBounded imports each hostile archive
// in a process of its own, into an empty home, and requires exit 2, the
// archive's name and the reason on stderr, the home unchanged and a peak
// RSS under importCeilingMB.
func TestImportingAHostileArchiveStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes archives of hundreds of megabytes")
	}
	dir, bin := t.TempDir(), buildBinary(t).path
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HELM_HOME=" + home,
		"HELM_IDENTITY=attacker", "HELM_ROLE=coder", "HELM_METHOD=agent"}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.Output()
		var stderr []byte
		if xe, ok := err.(*exec.ExitError); ok {
			stderr = xe.Stderr
		}
		require.NoError(t, err, "helm %s: %s", strings.Join(args, " "), stderr)
		return string(out)
	}
	// A voyage with an artifact in a blob record (small) and one in the
	// pack (random text does not compress below the inline limit).
	id := strings.TrimSpace(run("voyage", "new", "the archive to attack"))
	env = append(env, "HELM_VOYAGE="+id)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("hello\n"), 0o600))
	noise := make([]byte, 100_000)
	_, err := rand.Read(noise)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(base64.StdEncoding.EncodeToString(noise)), 0o600))
	run("observe", "file-contents", "--read", "small.txt")
	run("observe", "file-contents", "--read", "big.txt")
	run("note", "a note")
	run("bearing", "--reading", "two files")
	good := filepath.Join(dir, "good.jsonl")
	run("voyage", "export", "--format", "jsonl", "-o", good)
	raw, err := os.ReadFile(good)
	require.NoError(t, err)
	ar := parseArchive(t, raw)
	blob, packed := ar.artifactLine(t, true), ar.artifactLine(t, false)
	require.NotEqual(t, blob, packed)

	// The attacks, each an edit of a copy of the archive.
	gib := int64(1) << 30
	cases := []struct {
		name string
		edit func(a *archive)
		want string // in the error
	}{
		{"a packed artifact whose frame of kilobytes expands to a gibibyte", func(a *archive) {
			a.setData(t, packed, rleFrame(23, gib))
		}, "decompresses to more than"},
		{"a blob artifact whose frame of kilobytes expands to 256 MiB", func(a *archive) {
			a.setData(t, blob, rleFrame(23, gib/4)) // a frame under InlineMax
		}, "decompresses to more than"},
		{"a packed artifact declaring a terabyte", func(a *archive) {
			a.setSize(t, packed, 1<<40)
		}, "its event says 1099511627776"},
		{"a blob artifact declaring a terabyte", func(a *archive) {
			a.setSize(t, blob, 1<<40)
		}, "its event says 1099511627776"},
		{"a packed artifact's own bytes in a frame asking for a 2 GiB window", func(a *archive) {
			a.setData(t, packed, rawFrame(31, a.content(t, packed)))
		}, "limit of 8388608 bytes"},
		{"a blob artifact's own bytes in a frame asking for a 2 GiB window", func(a *archive) {
			a.setData(t, blob, rawFrame(31, a.content(t, blob)))
		}, "limit of 8388608 bytes"},
		{"a line of 200 MB with no newline after the header", func(a *archive) {
			a.lines = append(a.lines[:1], bytes.Repeat([]byte("a"), 200<<20))
			a.noTrailer = true
		}, "longer than"},
		{"a note event of 120 MB", func(a *archive) {
			i := a.eventLine(t, `"type":"note-added"`)
			a.lines[i] = bytes.Replace(a.lines[i], []byte(`"text":"a note"`), []byte(`"text":"`+strings.Repeat("a", 120<<20)+`"`), 1)
		}, "the line is longer than"},
		{"a blob artifact of a megabyte and a half", func(a *archive) {
			for range 100 {
				a.addBlobArtifact(t, 3<<19)
			}
		}, "where helm stores at most 32768"},
		// Blob records are held until the log is written: four thousand
		// blobs of helm's largest, each read and held, and the trailer
		// wrong only once they all are.
		{"four thousand blob artifacts of 32 KiB and a wrong trailer", func(a *archive) {
			for range 4000 {
				a.addBlobArtifact(t, 32<<10-16)
			}
			a.lines = append(a.lines, []byte("not the trailer"))
			a.noTrailer = true
		}, "not the archive's trailer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := ar.clone()
			c.edit(a)
			file := filepath.Join(t.TempDir(), "hostile.jsonl")
			require.NoError(t, os.WriteFile(file, a.bytes(), 0o600))
			target := filepath.Join(t.TempDir(), "home")
			require.NoError(t, os.MkdirAll(target, 0o700))
			targetEnv := append(append([]string(nil), env[:len(env)-2]...), "HELM_HOME="+target)
			held := exec.Command(bin, "voyage", "new", "a voyage the home holds")
			held.Env, held.Dir = targetEnv, dir
			out, err := held.CombinedOutput()
			require.NoError(t, err, "%s", out)
			before := treeOf(t, target)
			code, stderr, mib := cleanPeakRSS(t, dir, targetEnv, bin, "voyage", "import", file)
			fmt.Printf("hostile_import %q: peak RSS %.0f MB; %s", c.name, mib, errLine(stderr.String()))
			assert.Equal(t, exitUsage, code, "%s", stderr.String())
			assert.Contains(t, stderr.String(), c.want)
			assert.Contains(t, stderr.String(), file, "the error names the archive")
			assert.Less(t, mib, float64(importCeilingMB), "peak RSS importing the archive")
			assert.Equal(t, before, treeOf(t, target), "the home is left as it was")
		})
	}
}

// cleanPeakRSS runs bin with args under the peak-RSS helper
// (underPeakRSS) and returns its exit status, what it wrote to standard
// error, and its peak RSS in MiB.
func cleanPeakRSS(t *testing.T, dir string, env []string, bin string, args ...string) (int, *strings.Builder, float64) {
	t.Helper()
	cmd, peak := underPeakRSS(t, env, bin, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	code, mib := peak()
	return code, &stderr, mib
}

func errLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s + "\n"
}

// archive is an export's lines, without their newlines; its trailer is
// written afresh by bytes.
type archive struct {
	lines     [][]byte // the header, events and artifacts: not the trailer
	noTrailer bool
}

func parseArchive(t *testing.T, raw []byte) *archive {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	require.True(t, bytes.HasPrefix(lines[len(lines)-1], []byte(`{"helm_export_end":`)))
	return &archive{lines: formatOne(t, lines[:len(lines)-1])}
}

// formatOne turns an archive's lines into format 1's, which carries no
// chain: a hostile archive of format 2 is refused at its first edited
// event (its record no longer matches it, or the chain its head), and the
// bounds this test is about are those of the format every helm reads.
func formatOne(t *testing.T, lines [][]byte) [][]byte {
	t.Helper()
	var hdr struct {
		Export    int    `json:"helm_export"`
		VoyageID  string `json:"voyage_id"`
		Events    int    `json:"events"`
		Artifacts int    `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal(lines[0], &hdr))
	hdr.Export = 1
	first, err := json.Marshal(hdr)
	require.NoError(t, err)
	out := [][]byte{first}
	record := regexp.MustCompile(`,"record":"[^"]*"}$`)
	for _, l := range lines[1:] {
		if bytes.HasPrefix(l, []byte(`{"stub":`)) {
			continue
		}
		out = append(out, record.ReplaceAll(l, []byte("}")))
	}
	return out
}

func (a *archive) clone() *archive {
	c := &archive{}
	for _, l := range a.lines {
		c.lines = append(c.lines, bytes.Clone(l))
	}
	return c
}

// bytes returns the archive with its trailer: the digest of every byte
// before it, as an attacker recomputes it.
func (a *archive) bytes() []byte {
	var b []byte
	for _, l := range a.lines {
		b = append(append(b, l...), '\n')
	}
	if a.noTrailer {
		return b
	}
	sum := blake3.Sum256(b)
	return fmt.Appendf(b, `{"helm_export_end":1,"digest":"%s"}`+"\n", hex.EncodeToString(sum[:]))
}

// artifactLine returns the index of the artifact line of the blob or the
// packed artifact.
func (a *archive) artifactLine(t *testing.T, blob bool) int {
	t.Helper()
	for i, l := range a.lines {
		if !bytes.HasPrefix(l, []byte(`{"artifact":`)) {
			continue
		}
		ev := a.eventLine(t, `"hash":"`+a.hashOf(i)+`"`)
		if bytes.Contains(a.lines[ev], []byte(`,"blob":`)) == blob {
			return i
		}
	}
	t.Fatalf("no artifact line (blob %v)", blob)
	return 0
}

func (a *archive) hashOf(i int) string {
	return string(a.lines[i][len(`{"artifact":{"hash":"`):][:64])
}

// eventLine returns the index of the first event line holding s.
func (a *archive) eventLine(t *testing.T, s string) int {
	t.Helper()
	for i, l := range a.lines {
		if bytes.HasPrefix(l, []byte(`{"voyage_id":`)) && bytes.Contains(l, []byte(s)) {
			return i
		}
	}
	t.Fatalf("no event holds %s", s)
	return 0
}

// stowedLine returns the index of the artifact-stowed event of artifact
// line i.
func (a *archive) stowedLine(t *testing.T, i int) int {
	t.Helper()
	return a.eventLineBoth(t, `"type":"artifact-stowed"`, `"hash":"`+a.hashOf(i)+`"`)
}

func (a *archive) eventLineBoth(t *testing.T, s1, s2 string) int {
	t.Helper()
	for i, l := range a.lines {
		if bytes.HasPrefix(l, []byte(`{"voyage_id":`)) && bytes.Contains(l, []byte(s1)) && bytes.Contains(l, []byte(s2)) {
			return i
		}
	}
	t.Fatalf("no event holds %s and %s", s1, s2)
	return 0
}

// data returns artifact line i's stored bytes.
func (a *archive) data(t *testing.T, i int) []byte {
	t.Helper()
	l := a.lines[i]
	at := bytes.Index(l, []byte(`"data":"`)) + len(`"data":"`)
	b, err := base64.StdEncoding.DecodeString(string(l[at : len(l)-len(`"}}`)]))
	require.NoError(t, err)
	return b
}

// content returns artifact line i's bytes, decompressed.
func (a *archive) content(t *testing.T, i int) []byte {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	b, err := dec.DecodeAll(a.data(t, i), nil)
	require.NoError(t, err)
	return b
}

// setData replaces artifact line i's stored bytes, and the stored size
// its event declares.
func (a *archive) setData(t *testing.T, i int, data []byte) {
	t.Helper()
	old := len(a.data(t, i))
	l := a.lines[i]
	at := bytes.Index(l, []byte(`"data":"`)) + len(`"data":"`)
	a.lines[i] = append(append(l[:at:at], base64.StdEncoding.EncodeToString(data)...), `"}}`...)
	ev := a.stowedLine(t, i)
	a.lines[ev] = bytes.Replace(a.lines[ev], []byte(`"stored_size":`+strconv.Itoa(old)+`,`), []byte(`"stored_size":`+strconv.Itoa(len(data))+`,`), 1)
	require.Contains(t, string(a.lines[ev]), `"stored_size":`+strconv.Itoa(len(data))+`,`)
}

// setSize makes artifact line i and its event declare size bytes.
func (a *archive) setSize(t *testing.T, i int, size int64) {
	t.Helper()
	ev := a.stowedLine(t, i)
	for _, j := range []int{i, ev} {
		l := a.lines[j]
		at := bytes.Index(l, []byte(`"size":`)) + len(`"size":`)
		end := at + bytes.IndexByte(l[at:], ',')
		a.lines[j] = append(append(l[:at:at], strconv.FormatInt(size, 10)...), l[end:]...)
	}
}

// addBlobArtifact adds an artifact of size random bytes stored in a blob
// record: its artifact-stowed event after the last event (the blob
// record numbered before it), its line after the last artifact line, and
// one more in the header's count.
func (a *archive) addBlobArtifact(t *testing.T, size int) {
	t.Helper()
	content := make([]byte, size)
	_, err := rand.Read(content)
	require.NoError(t, err)
	sum := blake3.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	stored := rawFrame(23, content)
	last := 0
	for i, l := range a.lines {
		if bytes.HasPrefix(l, []byte(`{"voyage_id":`)) {
			last = i
		}
	}
	seqAt := bytes.Index(a.lines[last], []byte(`"seq":`)) + len(`"seq":`)
	seq, err := strconv.Atoi(string(a.lines[last][seqAt : seqAt+bytes.IndexByte(a.lines[last][seqAt:], ',')]))
	require.NoError(t, err)
	voyage := string(a.lines[last][len(`{"voyage_id":"`):][:36])
	event := fmt.Sprintf(`{"voyage_id":%q,"seq":%d,"type":"artifact-stowed","v":1,"at":"2026-01-01T00:00:00Z","who":{"identity":"attacker","role":"coder","method":"agent"},"artifact":{"hash":%q,"size":%d,"stored_size":%d,"offset":0,"blob":%d}}`,
		voyage, seq+2, hash, size, len(stored), seq+1)
	line := fmt.Sprintf(`{"artifact":{"hash":%q,"size":%d,"encoding":"zstd","data":"%s"}}`, hash, size, base64.StdEncoding.EncodeToString(stored))
	a.lines = append(a.lines[:last+1], append([][]byte{[]byte(event)}, a.lines[last+1:]...)...)
	a.lines = append(a.lines, []byte(line))
	head := a.lines[0]
	at := bytes.Index(head, []byte(`"artifacts":`)) + len(`"artifacts":`)
	n, err := strconv.Atoi(string(head[at : len(head)-1]))
	require.NoError(t, err)
	at2 := bytes.Index(head, []byte(`"events":`)) + len(`"events":`)
	events, err := strconv.Atoi(string(head[at2 : at2+bytes.IndexByte(head[at2:], ',')]))
	require.NoError(t, err)
	a.lines[0] = fmt.Appendf(head[:at2:at2], `%d,"artifacts":%d}`, events+1, n+1)
}

// zstdFrame is a zstd frame header with no content size, no checksum and
// a window of 1<<windowLog bytes, as a hostile encoder may write one.
func zstdFrame(windowLog int) []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(windowLog-10) << 3}
}

// zstdBlock appends a zstd block header (3 bytes: last, type, size).
func zstdBlock(b []byte, last bool, typ, size int) []byte {
	h := uint32(size)<<3 | uint32(typ)<<1
	if last {
		h |= 1
	}
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], h)
	return append(b, le[:3]...)
}

// rawFrame is data in raw blocks of 128 KiB, in a frame declaring a
// window of 1<<windowLog bytes.
func rawFrame(windowLog int, data []byte) []byte {
	b := zstdFrame(windowLog)
	const max = 128 << 10
	for {
		n := min(len(data), max)
		b = zstdBlock(b, n == len(data), 0, n)
		b = append(b, data[:n]...)
		if data = data[n:]; len(data) == 0 {
			return b
		}
	}
}

// rleFrame is size zero bytes in RLE blocks of 128 KiB (4 bytes each), in
// a frame declaring a window of 1<<windowLog bytes.
func rleFrame(windowLog int, size int64) []byte {
	b := zstdFrame(windowLog)
	const max = 128 << 10
	for size > 0 {
		n := min(size, max)
		size -= n
		b = zstdBlock(b, size == 0, 1, int(n))
		b = append(b, 0)
	}
	return b
}

// treeOf returns every path under dir with its mode, size and a hash of
// its bytes.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := blake3.Sum256(b)
			v += " " + hex.EncodeToString(sum[:8])
		}
		tree[strings.TrimPrefix(p, dir)] = v
		return nil
	}))
	return tree
}
