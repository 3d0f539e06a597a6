package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verify --witness REPO says, per repository, how many witnesses of the
// voyage it held. The agent's i18n.commitEncoding no longer hides helm's
// commit (1 witness); a repository holding none is an error, exit 1, not
// passed over in silence as if checked, and --json carries the count.
func TestAttackVerifyWithARepositoryHoldingNoWitnessSaysSo(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	id := h.start("Fix the widget")
	g.Git(t, "config", "i18n.commitEncoding", "IBM037")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	h.ok("action", "commit", "--message", "Fix null check")
	out := h.ok("voyage", "verify", "--witness", g.Dir)
	assert.Contains(t, out, "  git repo:  "+g.Dir+": 1 witness of the voyage\n")

	empty := t.TempDir()
	gitIn(t, empty, "init", "-q")
	gitIn(t, empty, "commit", "-q", "--allow-empty", "-m", "Someone else's work")
	r := h.fails(1, "voyage", "verify", "--witness", g.Dir, "--witness", empty)
	assert.Contains(t, r.Stdout, "  git repo:  "+empty+": holds no Helm-Voyage line naming voyage "+id+": nothing there witnesses it\n")
	assert.Contains(t, r.Stdout, "NOT CHECKED:")
	assert.NotContains(t, r.Stdout, "OK:")
	assert.Contains(t, r.Stderr, "repository "+empty+" holds no Helm-Voyage line naming voyage "+id+": nothing there witnesses it")
	assert.Regexp(t, `(?m)^Try: give the repository`, r.Stderr)

	r = h.fails(1, "--json", "voyage", "verify", "--witness", g.Dir, "--witness", empty)
	var js struct {
		OK           bool `json:"ok"`
		Repositories []struct {
			Repository string `json:"repository"`
			Witnesses  int    `json:"witnesses"`
		} `json:"repositories"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &js))
	assert.False(t, js.OK)
	require.Len(t, js.Repositories, 2)
	assert.Equal(t, g.Dir, js.Repositories[0].Repository)
	assert.Equal(t, 1, js.Repositories[0].Witnesses)
	assert.Equal(t, empty, js.Repositories[1].Repository)
	assert.Equal(t, 0, js.Repositories[1].Witnesses)
}

// A commit message holding a Helm-Voyage line naming the voyage is bad
// input: exit 2 with a Try line, nothing recorded or committed.
func TestAttackCommitMessageNamingTheVoyageExitsTwo(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	id := h.start("Fix the widget")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	before := h.ok("log")
	head := g.Git(t, "rev-parse", "HEAD")
	r := h.fails(2, "action", "commit", "--message", "Fix\n\nhelm-voyage: "+id+" 9:"+strings.Repeat("0", 64))
	assert.Contains(t, r.Stderr, "a Helm-Voyage line is helm's to write")
	assert.Regexp(t, `(?m)^Try: take the Helm-Voyage line out`, r.Stderr)
	assert.Equal(t, before, h.ok("log"), "nothing recorded")
	assert.Equal(t, head, g.Git(t, "rev-parse", "HEAD"), "nothing committed")
}

// A shallow witness repository is refused: exit 1 (the check could not
// run, as for a directory git cannot read; the command line is right),
// with a Try line to unshallow it.
func TestAttackVerifyRefusesAShallowRepository(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	h.start("Fix the widget")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	h.ok("action", "commit", "--message", "Fix null check")
	g.Git(t, "commit", "-q", "--allow-empty", "-m", "on top")
	top := strings.TrimSpace(g.Git(t, "rev-parse", "HEAD"))
	require.NoError(t, os.WriteFile(filepath.Join(g.Dir, ".git", "shallow"), []byte(top+"\n"), 0o644))
	r := h.fails(1, "voyage", "verify", "--witness", g.Dir)
	assert.Contains(t, r.Stderr, "witness repository "+g.Dir+" is shallow")
	assert.Contains(t, r.Stderr, "Try: unshallow "+g.Dir+" (git fetch, unshallowing it), then verify again")
	assert.Empty(t, r.Stdout)
}

// helm voyage head prints exactly one line SEQ:HEX, and --json
// {"seq":N,"hash":"HEX"} (and the voyage it names), also after a witnessed commit.
func TestAttackVoyageHeadIsOneLine(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	h.start("Fix the widget")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	h.ok("action", "commit", "--message", "Fix null check\n\nHelm-Voyage: x 1:"+strings.Repeat("0", 64))
	out := h.ok("voyage", "head")
	assert.Regexp(t, regexp.MustCompile(`\A\d+:[0-9a-f]{64}\n\z`), out)
	var js map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "head", "--json")), &js))
	for k := range js {
		assert.Contains(t, []string{"seq", "hash", "voyage"}, k, "the head's JSON (DESIGN: {\"seq\",\"hash\"}; the voyage named besides)")
	}
	var head struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "head", "--json")), &head))
	assert.Equal(t, out, itoa(int(head.Seq))+":"+head.Hash+"\n")
}

// gitIn runs git in dir with a fixed identity.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}
