package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent makes helm's commit under i18n.commitEncoding (or otherwise
// leaves the given repository with no witness verify can read): verify
// --witness REPO then checks nothing. A repository that holds no witness
// of the voyage is said so, not passed over in silence as if checked.
func TestAttackVerifyWithARepositoryHoldingNoWitnessSaysSo(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	h.start("Fix the widget")
	g.Git(t, "config", "i18n.commitEncoding", "IBM037")
	h.writeFile("widget.go", "package widget\n")
	g.Git(t, "add", "widget.go")
	h.ok("action", "commit", "--message", "Fix null check")
	r := h.run("voyage", "verify", "--witness", g.Dir)
	t.Logf("%s", r)
	assert.Contains(t, r.Stdout+r.Stderr, g.Dir, "the repository given is named in verify's output, with what it held")
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
