package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
)

// exportHarness records a voyage with a small and a large sighting, a
// challenged bearing, a note and a reading that holds markup.
func exportHarness(t *testing.T) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	id := h.start("Resolve #42: fix widget crash", "--kind", "resolve-issue")
	b := make([]byte, 48<<10)
	rand.Read(b)
	h.writeFile("big.txt", hex.EncodeToString(b)) // compresses to more than the inline limit
	h.at(1)
	h.ok("observe", "file-contents", "--read", "big.txt")
	h.ok("observe", "context", "the widget crashes at start")
	h.at(2)
	h.ok("bearing", "--reading", "<script>alert(1)</script> Widget module has a null check missing in init().")
	h.at(3)
	h.ok("bearing", "challenge", "1", "--as", "bob", "--role", "reviewer", "--with", "look again", "--reading", "init() panics when apply() fails.")
	h.at(4)
	h.ok("note", "Waiting for CI on PR #45.")
	return h, id
}

func TestVoyageExportAndImport(t *testing.T) {
	t.Parallel()
	h, id := exportHarness(t)

	archive := h.ok("voyage", "export")
	assert.Equal(t, archive, h.ok("voyage", "export", id[:8], "--format", "jsonl"), "jsonl is the default")
	assert.Equal(t, archive, h.ok("--voyage", id[:3], "voyage", "export", id), "--voyage and VOYAGE agree")
	assert.True(t, strings.HasPrefix(archive, `{"helm_export":2,"voyage_id":"`+id+`",`), archive[:80])

	path := filepath.Join(h.Dir, "fix-42.jsonl")
	out := h.ok("voyage", "export", id[:8], "-o", "fix-42.jsonl")
	assert.Equal(t, "Exported voyage "+id[:8]+" (jsonl) to fix-42.jsonl\n", out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, archive, string(data))
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "an export is private")
	}
	entries, err := os.ReadDir(h.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "no temporary file is left: %s", e.Name())
	}
	var res exportResult
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "export", "-o", "fix-42.jsonl", "--json")), &res))
	assert.Equal(t, exportResult{Voyage: id, Format: "jsonl", Path: path}, res)

	// Another home imports it and tells the same story.
	other := newHarness(t)
	got := other.ok("voyage", "import", path)
	assert.Equal(t, id+"\nHead: "+h.ok("voyage", "head", id), got, "the voyage's id, then its head: the exported voyage's")
	assert.Equal(t, h.ok("--voyage", id, "log"), other.ok("--voyage", id, "log"))
	assert.Equal(t, h.ok("--voyage", id, "voyage", "show", "--json"), other.ok("--voyage", id, "voyage", "show", "--json"))
	assert.Contains(t, other.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
	assert.Equal(t, archive, other.ok("voyage", "export", id), "exported again, the same archive")

	// Twice is refused, and says what to do.
	r := other.fails(2, "voyage", "import", path)
	assert.Contains(t, r.Stderr, "holds voyage "+id+" already")
	assert.Contains(t, r.Stderr, "Try: helm --home OTHER-HOME voyage import "+path+", or remove "+filepath.Join(other.Home, "voyages", id)+" first")

	// From standard input, --json describes it.
	third := newHarness(t)
	third.Stdin = archive
	var imported struct {
		helm.VoyageInfo
		Head chain.Head `json:"head"`
	}
	require.NoError(t, json.Unmarshal([]byte(third.ok("voyage", "import", "-", "--json")), &imported))
	assert.Equal(t, id, imported.ID)
	assert.Equal(t, "Resolve #42: fix widget crash", imported.Intent)
	assert.Equal(t, strings.TrimSpace(h.ok("voyage", "head", id)), imported.Head.String())
}

// TestVoyageImportOfACompactedVoyagePrintsItsHead: a voyage whose
// jettisoned artifact was compacted away imports with the head the
// exporting home gives it, prints it, and verifies.
func TestVoyageImportOfACompactedVoyagePrintsItsHead(t *testing.T) {
	t.Parallel()
	h, id := exportHarness(t)
	h.ok("observe", "context", "a customer's card: 4111")
	home, err := helm.Open(h.Home, nil)
	require.NoError(t, err)
	v, err := home.Voyage(t.Context(), id)
	require.NoError(t, err)
	var hash string
	for _, o := range v.Slate() {
		if strings.HasPrefix(o.Key, "context") {
			hash = o.Artifact
		}
	}
	require.NoError(t, v.Close())
	require.NotEmpty(t, hash)
	h.ok("artifact", "jettison", hash, "--reason", "holds a customer's card")
	assert.Contains(t, h.ok("voyage", "compact"), "1 artifact reclaimed")
	head := h.ok("voyage", "head", id)
	h.ok("voyage", "export", id, "-o", "compacted.jsonl")

	other := newHarness(t)
	r := other.run("voyage", "import", filepath.Join(h.Dir, "compacted.jsonl"))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, id+"\nHead: "+head, r.Stdout)
	assert.Empty(t, r.Stderr, "no note: the archive's head is the imported voyage's")
	assert.Equal(t, head, other.ok("voyage", "head", id))
	assert.Contains(t, other.ok("--voyage", id, "voyage", "verify", "--witness", strings.TrimSpace(head)), "OK: nothing damaged")
}

func TestVoyageImportRefusesATamperedFile(t *testing.T) {
	t.Parallel()
	h, id := exportHarness(t)
	archive := []byte(h.ok("voyage", "export", id))
	other := newHarness(t)
	other.ids = 100 // another id than the exported voyage's
	other.start("already here")
	before := other.ok("voyage", "list", "--status", "all")
	// One flip per kind of byte: the header, an event, an artifact's data,
	// the trailer.
	at := map[string]int{
		"header":   bytes.Index(archive, []byte(`"events":`)) + len(`"events":`),
		"event":    bytes.Index(archive, []byte("null check missing")),
		"artifact": bytes.LastIndex(archive, []byte(`"data":"`)) + 40,
		"trailer":  bytes.Index(archive, []byte(`"digest":"`)) + 20,
	}
	for name, off := range at {
		bad := bytes.Clone(archive)
		bad[off] ^= 0x02
		file := filepath.Join(other.Dir, name+".jsonl")
		require.NoError(t, os.WriteFile(file, bad, 0o600))
		r := other.fails(2, "voyage", "import", file)
		assert.Contains(t, r.Stderr, "archive line ", name)
		assert.Empty(t, r.Stdout, name)
	}
	assert.Equal(t, before, other.ok("voyage", "list", "--status", "all"), "nothing was imported")
	_, err := os.Stat(filepath.Join(other.Home, "voyages", id))
	assert.True(t, os.IsNotExist(err))
}

func TestVoyageExportStory(t *testing.T) {
	t.Parallel()
	h, id := exportHarness(t)
	md := h.ok("voyage", "export", "--format", "md")
	assert.Contains(t, md, "# Voyage: Resolve #42: fix widget crash\n")
	assert.Contains(t, md, "> init() panics when apply() fails.")
	assert.Contains(t, md, `> \<script\>alert(1)\</script\> Widget module`)
	assert.Contains(t, md, "Challenged 1×")

	out := h.ok("voyage", "export", id[:8], "--format", "html", "-o", "story.html")
	assert.Equal(t, "Exported voyage "+id[:8]+" (html) to story.html\n", out)
	page, err := os.ReadFile(filepath.Join(h.Dir, "story.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "&lt;script&gt;alert(1)&lt;/script&gt; Widget module")
	assert.NotContains(t, string(page), "<script>")
	assert.Equal(t, string(page), h.ok("voyage", "export", "--format", "html"))
}

func TestVoyageExportImportUsage(t *testing.T) {
	t.Parallel()
	h, id := exportHarness(t)
	other := h.start("another voyage")
	r := h.fails(2, "--voyage", id[:8], "voyage", "export", other[:8])
	assert.Contains(t, r.Stderr, "name different voyages")
	h.fails(2, "voyage", "export", id, "--format", "pdf")
	h.fails(2, "voyage", "export", id, other)
	h.fails(2, "voyage", "export", id, "--format", "md", "--json")
	h.fails(2, "voyage", "export", id, "-o", filepath.Join("no-such-dir", "x.jsonl"))
	h.fails(2, "voyage", "export", "ffffffff")
	h.fails(2, "voyage", "import")
	h.fails(2, "voyage", "import", "a", "b")
	h.fails(2, "voyage", "import", "no-such-file.jsonl")
	h.fails(2, "voyage", "import", ".")
	h.Stdin = "not an archive\n"
	r = h.fails(2, "voyage", "import", "-")
	assert.Contains(t, r.Stderr, "archive line 1: not a helm archive's header")

	// A home that cannot be written: exit 1.
	archive := h.ok("voyage", "export", id)
	broken := newHarness(t)
	require.NoError(t, os.MkdirAll(broken.Home, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(broken.Home, "voyages"), []byte("not a directory"), 0o600))
	broken.Stdin = archive
	r = broken.fails(1, "voyage", "import", "-")
	assert.Contains(t, r.Stderr, "import voyage")
}
