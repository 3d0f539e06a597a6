package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/tamper"
)

// witnessedVoyage records a note and a commit (which carries the
// voyage's witness) through the CLI, and returns the voyage's id, the
// repository and the commit's sha.
func witnessedVoyage(t *testing.T) (*harness, string, string, string) {
	t.Helper()
	h, _, g := newGitHubHarness(t)
	id := h.start("Fix the widget")
	h.ok("note", "Review: DENIED by security")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	h.ok("action", "commit", "--message", "Fix null check")
	sha := strings.TrimSpace(g.Git(t, "rev-parse", "HEAD"))
	return h, id, g.Dir, sha
}

// scrub replaces what changes from run to run (the home's and the
// repository's paths, the commit's sha, and the chain's hashes, which
// cover the paths the voyage records) with placeholders.
func scrub(h *harness, out, repo, sha string) string {
	out = strings.NewReplacer(h.Home, "$HOME", repo, "$REPO", sha, "$SHA").Replace(out)
	out = sizeBytes.ReplaceAllString(out, "(N B)")
	return hash64.ReplaceAllString(out, "${1}HASH")
}

var sizeBytes = regexp.MustCompile(`\(\d+ B\)`)

var hash64 = regexp.MustCompile(`(\d+:)[0-9a-f]{64}\b`)

var verifyHeadLine = regexp.MustCompile(`(?m)^  head:      (\d+:[0-9a-f]{64})$`)

func TestVerifyWithWitnessesPrintsEachAndExitsZeroWhenIntact(t *testing.T) {
	t.Parallel()
	h, id, repo, sha := witnessedVoyage(t)
	out := h.ok("voyage", "verify", "--witness", repo)
	golden(t, "verify-witness.golden", scrub(h, out, repo, sha))
	assert.Equal(t, out, h.ok("voyage", "verify", id[:8], "--witness", repo), "the voyage named as VOYAGE")

	m := verifyHeadLine.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	given := h.ok("voyage", "verify", "--witness", m[1], "--witness", repo)
	assert.Contains(t, given, "  witness:   "+m[1]+" given: ok\n")

	var js struct {
		OK   bool `json:"ok"`
		Head struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		} `json:"head"`
		Witnesses []struct {
			Head       struct{ Seq uint64 } `json:"head"`
			Repository string               `json:"repository"`
			Commit     string               `json:"commit"`
			OK         bool                 `json:"ok"`
		} `json:"witnesses"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "voyage", "verify", "--witness", repo)), &js))
	assert.True(t, js.OK)
	assert.Equal(t, m[1], strings.Join([]string{itoa(int(js.Head.Seq)), js.Head.Hash}, ":"))
	require.Len(t, js.Witnesses, 1)
	assert.Equal(t, sha, js.Witnesses[0].Commit)
	assert.True(t, js.Witnesses[0].OK)
}

// The agent edits the note below the commit's witness and recomputes
// every checksum and WATERMARK: verify alone passes, verify with the
// repository or the given head exits 1 naming the witness.
func TestVerifyWithAWitnessFindsAnEditedNote(t *testing.T) {
	t.Parallel()
	h, id, repo, sha := witnessedVoyage(t)
	out := h.ok("voyage", "verify", "--witness", repo)
	head := verifyHeadLine.FindStringSubmatch(out)[1]

	_, err := tamper.Replace(context.Background(), h.Home, id, "DENIED by security", "PASSED by security")
	require.NoError(t, err)
	require.NoError(t, tamper.DropCaches(h.Home, id))
	h.ok("voyage", "verify") // alone, the forgery checks out

	r := h.fails(1, "voyage", "verify", "--witness", repo)
	golden(t, "verify-witness-damaged.golden", scrub(h, r.Stdout, repo, sha))
	assert.Contains(t, r.Stdout, "witness commit "+sha+" in "+repo)

	r = h.fails(1, "voyage", "verify", "--witness", head)
	assert.Contains(t, r.Stdout, "witness the given head "+head+": the log's link at seq")
}

func TestVerifyRefusesAWitnessThatIsNeitherRepositoryNorHead(t *testing.T) {
	t.Parallel()
	h, _, _, _ := witnessedVoyage(t)
	for _, w := range []string{"nonsense", "12:ABC", "no-such-dir/"} {
		r := h.fails(2, "voyage", "verify", "--witness", w)
		assert.Contains(t, r.Stderr, "is neither a directory (a git repository) nor a head")
		assert.Contains(t, r.Stderr, "\nTry: helm voyage verify --witness PATH-TO-REPOSITORY, or --witness SEQ:HEX as helm voyage head prints it\n")
	}
}
