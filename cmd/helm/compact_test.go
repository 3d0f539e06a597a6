package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

func TestVoyageCompactReclaimsJettisonedArtifacts(t *testing.T) {
	h := newHarness(t)
	id := h.start("compact me")
	b := make([]byte, 3000)
	rand.Read(b)
	h.writeFile("big.txt", hex.EncodeToString(b))
	h.ok("observe", "file-contents", "--read", "big.txt")
	h.ok("observe", "context", "keep this one")
	story := h.ok("log")

	out := h.ok("voyage", "compact")
	assert.Contains(t, out, ": nothing to reclaim")

	// Jettison the file's sighting through the library (the CLI verb is
	// artifact jettison).
	home, err := helm.Open(h.Home, nil)
	require.NoError(t, err)
	v, err := home.Voyage(context.Background(), id)
	require.NoError(t, err)
	var hash string
	for _, o := range v.Slate() {
		if strings.HasPrefix(o.Key, "file-contents") {
			hash = o.Artifact
		}
	}
	require.NotEmpty(t, hash)
	require.NoError(t, v.Jettison(context.Background(), hash, "too big", logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}))
	require.NoError(t, v.Close())

	out = h.ok("voyage", "compact")
	assert.Regexp(t, `^Voyage [0-9a-f]{8} compacted: 1 artifact reclaimed, [0-9.]+ KiB from the event log \(1 record\) and 0 B from the pack file\n$`, out)
	var rep helm.CompactReport
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "compact", "--json")), &rep))
	assert.Zero(t, rep.Artifacts, "compacting again reclaims nothing")
	assert.Equal(t, story, h.ok("log"), "the story reads the same")
	verify := h.ok("voyage", "verify")
	assert.Contains(t, verify, "OK: nothing damaged")
	h.fails(2, "voyage", "compact", "extra")
}
