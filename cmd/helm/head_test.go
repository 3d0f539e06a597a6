package main

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
)

// headOf is the voyage's head as the library gives it.
func headOf(t *testing.T, h *harness, id string) chain.Head {
	t.Helper()
	ctx := context.Background()
	home, err := helm.Open(h.Home, nil)
	require.NoError(t, err)
	v, err := home.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	head, err := v.Head(ctx)
	require.NoError(t, err)
	return head
}

var headLine = regexp.MustCompile(`^[0-9]+:[0-9a-f]{64}\n$`)

// helm voyage head prints SEQ:HEX and nothing else (for $(helm voyage
// head)), --json {"voyage","seq","hash"}: Voyage.Head, of the voyage
// commands act on or the one named; reading it writes nothing.
func TestVoyageHeadPrintsTheHead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start("first")
	h.ok("note", "one")
	h.ok("complete", "--summary", "done")
	second := h.start("second")

	before := hashTree(t, h.Home)
	out := h.ok("voyage", "head")
	assert.Regexp(t, headLine, out)
	want := headOf(t, h, second)
	assert.Equal(t, want.String()+"\n", out, "the only active voyage")
	got, err := chain.Parse(out)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	var js struct {
		Voyage string     `json:"voyage"`
		Head   chain.Head `json:"-"`
	}
	raw := h.ok("voyage", "head", "--json", first[:8])
	require.NoError(t, json.Unmarshal([]byte(raw), &js))
	require.NoError(t, json.Unmarshal([]byte(raw), &js.Head), "the head's own JSON: {\"seq\":N,\"hash\":\"HEX\"}")
	assert.Equal(t, first, js.Voyage)
	assert.Equal(t, headOf(t, h, first), js.Head, "the voyage named")
	assert.Equal(t, headOf(t, h, first).String()+"\n", h.ok("--voyage", first, "voyage", "head"))
	assert.Equal(t, before, hashTree(t, h.Home), "reading the head writes nothing")

	h.ok("note", "two")
	assert.NotEqual(t, out, h.ok("voyage", "head"), "a record moves it")
}

func TestVoyageHeadRefusesWhatNamesNoOneVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start("first")
	second := h.start("second")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no such voyage", []string{"voyage", "head", "b0b"}, 2, "VOYAGE b0b: no such voyage"},
		{"two arguments", []string{"voyage", "head", first, second}, 2, "one VOYAGE at most"},
		{"two voyages", []string{"--voyage", first[:8], "voyage", "head", second[:8]}, 2, "name different voyages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(tc.code, tc.args...)
			assert.Contains(t, r.Stderr, tc.want)
			assert.Contains(t, r.Stderr, "\nTry: ")
			assert.Empty(t, r.Stdout)
		})
	}
}

// The head is where the voyage's identity is printed: report (markdown
// and JSON), the markdown and html exports; each the head helm voyage
// head prints.
func TestReportAndExportsGiveTheHead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("exports")
	h.ok("note", "one")
	h.ok("complete", "--summary", "done")
	head := headOf(t, h, id)
	assert.Equal(t, head.String()+"\n", h.ok("voyage", "head", id))

	assert.Contains(t, h.ok("report", id), "- **Head:** `"+head.String()+"`\n")
	var r struct {
		Head chain.Head `json:"head"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("report", id, "--json")), &r))
	assert.Equal(t, head, r.Head)
	assert.Contains(t, h.ok("voyage", "export", id, "--format", "md"), "- **Head:** `"+head.String()+"`\n")
	assert.Contains(t, h.ok("voyage", "export", id, "--format", "html"), "<dt>Head</dt><dd><code>"+head.String()+"</code></dd>")
}
