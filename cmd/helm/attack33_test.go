package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
)

// Issue 33, attack round: the recorded agent reaches curation and the
// curated bytes through doors other than helm artifact jettison.

// TestAttackMCPJettisonOfAClosedVoyageIsRefusedAndRecorded: the agent
// runs its own helm mcp --tools all and calls the jettison tool on its
// closed voyage, in every spelling of its method the server takes from
// its environment, and with a server that opened the voyage while it was
// still active and holds it open across the completion: each call is a
// tool error naming the built-in rule, recorded in the story, and the
// sighting is kept.
func TestAttackMCPJettisonOfAClosedVoyageIsRefusedAndRecorded(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"claude-test", "Human", "HUMAN", "humans", "human\u200b"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id, payload, _ := closedWithPayload(t, h)
			agentEnv(h)
			h.Env["HELM_METHOD"] = method
			c := h.mcp()
			defer c.close()
			text, te := c.fails("jettison", map[string]any{"voyage": id, "artifact": payload[:8], "reason": "cover my tracks"})
			if te.ExitStatus == exitUsage {
				t.Logf("refused as bad input: %s", text)
				assert.Zero(t, refusals(t, h, id), "bad input records nothing")
				return // a method helm does not take: nothing recorded, nothing done
			}
			assert.Equal(t, exitRefused, te.ExitStatus, text)
			assert.Contains(t, text, "a person jettisons a closed voyage's evidence")
			assert.Equal(t, 1, refusals(t, h, id), "the refusal is recorded")
			assert.Contains(t, h.ok("--voyage", id, "sighting", "show", payload[:8]), curateMarker)
		})
	}
	t.Run("a server that held the voyage open across its completion", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		id := h.start("fix the invoice export")
		h.writeFile("customer.txt", curateMarker+"\n")
		agentEnv(h)
		c := h.mcp()
		defer c.close()
		_, obs := ok[view.Observed](c, "observe", map[string]any{"voyage": id, "kind": "file-contents", "paths": []string{"customer.txt"}})
		require.Len(t, obs.Artifact, 64)
		ok[map[string]any](c, "complete", map[string]any{"voyage": id, "summary": "done"})
		text, te := c.fails("jettison", map[string]any{"voyage": id, "artifact": obs.Artifact, "reason": "cover my tracks"})
		assert.Equal(t, exitRefused, te.ExitStatus, text)
		assert.Contains(t, h.ok("--voyage", id, "sighting", "show", obs.Artifact[:8]), curateMarker)
	})
}

// TestAttackCuratedSightingLeavesNoPlainTextInTheHome: after a person's
// jettison and reduce on a closed voyage and its compaction, no file of
// the home holds the curated sightings' bytes, neither as stored (zstd)
// nor as plain text, whatever reads ran before (exports, log, show).
func TestAttackCuratedSightingLeavesNoPlainTextInTheHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id, payload, other := closedWithPayload(t, h)
	stored := storedForm(t, h, id, payload)
	storedOther := storedForm(t, h, id, other)
	for _, args := range [][]string{
		{"voyage", "export", id, "--format", "md"}, {"voyage", "export", id, "--format", "html"}, {"voyage", "export", id},
		{"--voyage", id, "log", "--evidence"}, {"--voyage", id, "voyage", "show"}, {"voyage", "list"},
	} {
		h.ok(args...)
	}
	h.ok("--voyage", id, "artifact", "jettison", payload[:8], "--reason", "holds a customer's data")
	h.ok("--voyage", id, "artifact", "reduce", other[:8], "--method", "human", "--summary", "notes, nothing kept")
	h.ok("--voyage", id, "voyage", "compact")
	for _, args := range [][]string{
		{"voyage", "export", id, "--format", "md"}, {"--voyage", id, "log", "--evidence"}, {"voyage", "list"},
	} {
		out := h.ok(args...)
		assert.NotContains(t, out, curateMarker, "helm %v shows the jettisoned bytes", args)
		assert.NotContains(t, out, "the export drops a column\\n", "helm %v shows the reduced original", args)
	}
	assert.False(t, homeHolds(t, h, curateMarker), "a file of the home holds the jettisoned sighting as plain text")
	assert.False(t, homeHolds(t, h, stored), "a file of the home holds the jettisoned sighting as stored")
	assert.False(t, homeHolds(t, h, storedOther), "a file of the home holds the reduced original as stored")
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK")
}

// readAllPages reads the resource uri to its end, page by page.
func readAllPages(t *testing.T, c *mcpClient, uri string) (string, error) {
	t.Helper()
	var whole strings.Builder
	for uri != "" {
		res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return whole.String(), err
		}
		whole.WriteString(res.Contents[0].Text)
		uri = ""
		if len(res.Contents) == 2 {
			uri = res.Contents[1].URI
		}
	}
	return whole.String(), nil
}

// TestAttackMCPResourcesGiveNoCuratedBytesNorAnythingOutsideTheHome: the
// agent's own helm mcp --tools all reads resources: the sighting a
// person jettisoned (not compacted yet: its bytes are still in the
// log) and the original of one reduced, each export of the voyage in
// every format, and URIs made to reach another home's voyage or a file.
// None gives the curated bytes or anything outside the home.
func TestAttackMCPResourcesGiveNoCuratedBytesNorAnythingOutsideTheHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id, payload, other := closedWithPayload(t, h)
	h.ok("--voyage", id, "artifact", "jettison", payload[:8], "--reason", "holds a customer's data")
	h.ok("--voyage", id, "artifact", "reduce", other[:8], "--method", "human", "--summary", "notes, nothing kept")
	const otherMarker = "meeting notes:"

	outside := newHarness(t)
	outside.start("the other home's first")
	otherID := outside.start("OUTSIDE-THE-HOME intent")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("OUTSIDE-THE-HOME file\n"), 0o600))

	agentEnv(h)
	c := h.mcp()
	defer c.close()
	for _, hash := range []string{payload, payload[:8], other, other[:8]} {
		text, err := readAllPages(t, c, "helm://voyages/"+id+"/sightings/"+hash)
		assert.Error(t, err, "the curated sighting %s is read", hash)
		assert.NotContains(t, text, curateMarker)
		assert.NotContains(t, text, otherMarker)
	}
	for _, format := range []string{"jsonl", "md", "html"} {
		_, exp := ok[struct{ URI string }](c, "export", map[string]any{"voyage": id, "format": format})
		text, err := readAllPages(t, c, exp.URI)
		require.NoError(t, err)
		assert.NotEmpty(t, text)
		assert.NotContains(t, text, curateMarker, "the %s export holds the jettisoned bytes", format)
		assert.NotContains(t, text, otherMarker, "the %s export holds the reduced original", format)
		if format != "jsonl" {
			continue
		}
		// The archive holds sightings compressed: imported elsewhere, it
		// must not give the curated ones back.
		path := filepath.Join(t.TempDir(), "export.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		elsewhere := newHarness(t)
		elsewhere.ok("voyage", "import", path)
		for _, hash := range []string{payload, other} {
			shown := elsewhere.run("--voyage", id, "sighting", "show", hash[:8])
			assert.NotContains(t, shown.Stdout, curateMarker, "the exported archive gives the jettisoned sighting back")
			assert.NotContains(t, shown.Stdout, otherMarker, "the exported archive gives the reduced original back")
		}
	}
	for _, uri := range []string{
		"helm://voyages/" + otherID + "/story",
		"helm://voyages/" + otherID + "/export?format=md",
		"helm://voyages/%2E%2E%2F%2E%2E%2F" + url.PathEscape(outside.Home) + "%2Fvoyages%2F" + otherID + "/export",
		"helm://voyages/" + url.PathEscape(outside.Home+"/voyages/"+otherID) + "/story",
		"helm://voyages/../../" + otherID + "/story",
		"helm://voyages/" + id + "/sightings/../../../../" + secret,
		"helm://voyages/" + id + "/sightings/" + url.PathEscape(secret),
		"helm://voyages/" + id + "/export?format=../../" + secret,
		"file://" + secret,
		"helm://" + secret,
		"helm://voyages/" + id + "/../" + otherID + "/story",
	} {
		text, err := readAllPages(t, c, uri)
		assert.Error(t, err, "%s was read", uri)
		assert.NotContains(t, text, "OUTSIDE-THE-HOME", "%s reached outside the home", uri)
	}
}
