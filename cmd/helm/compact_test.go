package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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

// A reduced artifact's payload: verify checks it while it is held (exit
// 1 naming it when damaged), compaction reclaims it and says so, and
// verify then skips it as reduced.
func TestVoyageCompactReclaimsReducedPayloadsThatVerifyChecksUntilThen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("reduce me")
	b := make([]byte, 50<<10)
	rand.Read(b)
	h.writeFile("big.txt", hex.EncodeToString(b)) // too little to compress: the pack
	h.ok("observe", "file-contents", "--read", "big.txt")
	m := regexp.MustCompile(`(?m)^([0-9a-f]{8})  file-contents`).FindStringSubmatch(h.ok("artifact", "list"))
	require.NotNil(t, m)
	h.ok("artifact", "reduce", m[1], "--method", "human", "--summary", "50 KiB of hex")

	pack := filepath.Join(h.Home, "voyages", id, "artifacts.pack")
	data, err := os.ReadFile(pack)
	require.NoError(t, err)
	flip := func() {
		data[len(data)-3] ^= 0xff
		require.NoError(t, os.WriteFile(pack, data, 0o600))
	}
	flip()
	r := h.fails(1, "voyage", "verify")
	assert.Contains(t, r.Stdout, "DAMAGED: 1 problem\n")
	assert.Contains(t, r.Stdout, "damaged artifact "+m[1])
	assert.Contains(t, r.Stdout, pack)
	flip()
	assert.Contains(t, h.ok("voyage", "verify"), "0 skipped")

	out := h.ok("voyage", "compact")
	assert.Regexp(t, `^Voyage [0-9a-f]{8} compacted: 1 artifact reclaimed \(1 payload of reduced artifacts\), 0 B from the event log \(0 records\) and [0-9.]+ KiB from the pack file\n$`, out)
	var rep helm.CompactReport
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "compact", "--json")), &rep))
	assert.Zero(t, rep.Artifacts, "compacting again reclaims nothing")
	verify := h.ok("voyage", "verify")
	assert.Contains(t, verify, "1 skipped (bytes gone: 0 jettisoned, 1 reduced, then compacted)")
	assert.Contains(t, verify, "OK: nothing damaged")
	assert.Equal(t, "reduced to artifact ", h.ok("sighting", "show", m[1])[:len("reduced to artifact ")])
}
