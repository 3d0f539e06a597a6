package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// corpusHome copies the root module's corpus home name into h.Home.
func corpusHome(t *testing.T, h *harness, name string) {
	t.Helper()
	require.NoError(t, os.CopyFS(h.Home, os.DirFS(filepath.Join("..", "..", "testdata", "voyages", name))))
}

// filesOf returns every regular file under dir with its bytes.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	}))
	return out
}

// differing lists the files that differ between two filesOfs.
func differing(a, b map[string]string) []string {
	var out []string
	for p, x := range a {
		if y, ok := b[p]; !ok || x != y {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

var rechainHead = regexp.MustCompile(`(?m)^Head: (\d+:[0-9a-f]{64})$`)

// A voyage an older helm wrote verifies with exit 0 and says plainly
// that its CRC32C chain detects accidents, not edits; helm voyage
// rechain moves it onto the BLAKE3 chain, recorded in its story, and
// prints the head that helm voyage head prints; verify then says BLAKE3
// since the rechain, the head witnesses the history, and the voyage takes
// writes. A second rechain is refused (exit 2) and writes nothing.
func TestVoyageRechainMovesAnOlderVoyageOntoTheBLAKE3Chain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	corpusHome(t, h, "v0.5-2026-11-27")
	const id = "c0a9b5e1-0000-4000-8000-000000000003"
	before := h.ok("voyage", "verify", id)
	assert.Contains(t, before, "\n  chain:     CRC32C (segment format 2): detects accidents, not edits; helm voyage rechain moves it onto the BLAKE3 chain\n")
	assert.Contains(t, before, "OK: nothing damaged\n")
	var old struct {
		LastSeq uint64 `json:"last_seq"`
		Chain   string `json:"chain"`
		Format  uint32 `json:"format"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "verify", id, "--json")), &old))
	assert.Equal(t, "crc32c", old.Chain)
	assert.Equal(t, uint32(2), old.Format)

	r := h.fails(2, "voyage", "rechain", id)
	assert.Contains(t, r.Stderr, "--why")

	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "maintainer", "human"
	out := h.ok("--as", "ann", "voyage", "rechain", id, "--why", "witness its history")
	m := rechainHead.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	head, err := chain.Parse(m[1])
	require.NoError(t, err)
	assert.Equal(t, old.LastSeq+1, head.Seq)
	assert.Equal(t, m[1]+"\n", h.ok("voyage", "head", id), "the head printed is the voyage's")

	after := h.ok("voyage", "verify", id, "--witness", m[1])
	assert.Contains(t, after, fmt.Sprintf("\n  chain:     BLAKE3 since seq %d (re-chained)\n", head.Seq))
	assert.Contains(t, after, "  witness:   "+m[1]+" given: ok\n")
	log := h.ok("--voyage", id, "log")
	assert.Regexp(t, fmt.Sprintf(`── Rechain \d+ ── .* · ann \(maintainer\)\n  re-chained onto BLAKE3 \(was CRC32C at seq %d: [0-9a-f]{8}\), by ann: witness its history\n`, old.LastSeq), log)
	golden(t, "rechain.golden", strings.NewReplacer(h.Home, "$HOME").Replace(hash64.ReplaceAllString(out+"\n"+before+"\n"+after, "${1}HASH")))

	h.Env["HELM_ROLE"] = "coder"
	h.ok("--voyage", id, "observe", "context", "after the rechain")
	h.ok("--voyage", id, "bearing", "--reading", "still writable")
	assert.Contains(t, h.ok("voyage", "verify", id, "--witness", m[1]), "OK: nothing damaged\n")

	was := filesOf(t, h.Home)
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "maintainer", "human"
	r = h.fails(2, "--as", "ann", "voyage", "rechain", id, "--why", "again")
	assert.Contains(t, r.Stderr, fmt.Sprintf("on the BLAKE3 chain already (rechained at seq %d)", head.Seq))
	assert.Contains(t, r.Stderr, "Try: ")
	assert.Empty(t, differing(was, filesOf(t, h.Home)), "a refused rechain writes nothing")
}

// A completed voyage is rechained too (it changes no story), --json
// gives the head, and a voyage this helm started is refused.
func TestVoyageRechainOfAClosedVoyageAndOfANewOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	corpusHome(t, h, "v0.5-2026-11-27")
	const closed = "c0a9b5e1-0000-4000-8000-000000000001"
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "maintainer", "human"
	var js struct {
		Voyage string     `json:"voyage"`
		Head   chain.Head `json:"head"`
		Since  uint64     `json:"chain_since"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "--as", "ann", "voyage", "rechain", closed, "--why", "archive it witnessed")), &js))
	assert.Equal(t, closed, js.Voyage)
	assert.Equal(t, js.Head.String()+"\n", h.ok("voyage", "head", closed))
	assert.Contains(t, h.ok("voyage", "verify", closed), fmt.Sprintf("  chain:     BLAKE3 since seq %d (re-chained)\n", js.Since))
	assert.Contains(t, h.ok("voyage", "show", "--voyage", closed), "Status:    completed")

	id := h.start("a new voyage")
	assert.Contains(t, h.ok("voyage", "verify", id), "\n  chain:     BLAKE3\n")
	was := filesOf(t, h.Home)
	r := h.fails(2, "voyage", "rechain", id, "--why", "upgrade")
	assert.Contains(t, r.Stderr, "on the BLAKE3 chain already (segment format 4, from its first record)")
	assert.Empty(t, differing(was, filesOf(t, h.Home)))
}
