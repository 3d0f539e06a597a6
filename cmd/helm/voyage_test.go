package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

func TestVoyageNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantKind helm.Kind
	}{
		{"default kind", nil, "open-waters"},
		{"open waters", []string{"--kind", "open-waters"}, "open-waters"},
		{"resolve issue", []string{"--kind", "resolve-issue"}, "resolve-issue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.start("Resolve #42: fix widget crash", tt.args...)
			var v helm.VoyageInfo
			require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "show", "--json")), &struct {
				V *helm.VoyageInfo `json:"voyage"`
			}{&v}))
			assert.Equal(t, id, v.ID)
			assert.Equal(t, tt.wantKind, v.Kind)
			assert.Equal(t, "john-agent", v.Identity)
			assert.Equal(t, logbook.StatusActive, v.Status)
		})
	}
}

func TestVoyageNewJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var v helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "new", "--as", "ann", "--json", "intent")), &v))
	assert.Equal(t, "intent", v.Intent)
	assert.Len(t, v.ID, 36)
}

func TestVoyageNewRejectsEmptyIntent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.fails(2, "voyage", "new", "--as", "ann", "  ")
	assert.Contains(t, r.Stderr, "intent is empty")
	r = h.fails(2, "voyage", "new", "--as", "ann", "two", "words")
	assert.Contains(t, r.Stderr, "quote the intent")
}

func TestVoyageList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	assert.Contains(t, h.ok("voyage", "list"), "No active voyages")
	assert.Equal(t, "[]\n", h.ok("voyage", "list", "--json"))
	one := h.start("first")
	h.at(5)
	two := h.start("second", "--kind", "resolve-issue")
	h.ok("--voyage", one, "complete", "--outcome", "blocked", "--summary", "waiting")

	tests := []struct {
		status string
		want   []string
	}{
		{"", []string{two}},
		{"active", []string{two}},
		{"completed", nil},
		{"blocked", []string{one}},
		{"open", []string{one, two}},
		{"closed", nil},
		{"all", []string{one, two}},
	}
	for _, tt := range tests {
		t.Run("status="+tt.status, func(t *testing.T) {
			args := []string{"voyage", "list", "--json"}
			if tt.status != "" {
				args = append(args, "--status", tt.status)
			}
			var list []helm.VoyageInfo
			require.NoError(t, json.Unmarshal([]byte(h.ok(args...)), &list))
			var ids []string
			for _, v := range list {
				ids = append(ids, v.ID)
			}
			assert.Equal(t, tt.want, ids)
		})
	}
	text := h.ok("voyage", "list", "--status", "all")
	assert.Equal(t, `ID        KIND           STATUS   CREATED               LAST EVENT            IDENTITY    INTENT
a3b00001  open-waters    blocked  2026-02-26T17:00:00Z  2026-02-26T17:05:00Z  john-agent  first
a3b00002  resolve-issue  active   2026-02-26T17:05:00Z  2026-02-26T17:05:00Z  john-agent  second
`, text)
	h.fails(2, "voyage", "list", "--status", "done")

	// --stale: the active voyages idle for that long, by the home's clock.
	h.at(40)
	three := h.start("third")
	assert.Equal(t, []string{two}, listIDs(t, h, "voyage", "list", "--stale", "30m", "--json"))
	assert.Empty(t, listIDs(t, h, "voyage", "list", "--stale", "2h", "--json"))
	h.at(41)
	assert.Equal(t, []string{two, three}, listIDs(t, h, "voyage", "list", "--stale", "1s", "--json"))
	assert.Contains(t, h.ok("voyage", "list", "--stale", "2h"), "No active voyages idle for 2h0m0s")
	h.fails(2, "voyage", "list", "--stale", "30m", "--status", "closed")
	h.fails(2, "voyage", "list", "--stale", "soon")
}

func listIDs(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	var list []helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok(args...)), &list))
	var ids []string
	for _, v := range list {
		ids = append(ids, v.ID)
	}
	return ids
}

func TestVoyageShow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("Resolve #42: fix widget crash", "--kind", "resolve-issue")
	h.writeFile("README.md", "# widget\n")
	h.ok("observe", "file-contents", "--read", "README.md")
	h.ok("bearing", "--reading", "A readme.")
	h.ok("observe", "context", "a call with the maintainer")
	h.fails(3, "action", "commit", "--message", "not a repository") // recorded as a failed action
	out := h.ok("voyage", "show")
	assert.Contains(t, out, "Voyage:    a3b00001-0000-4000-8000-000000000001\n")
	assert.Contains(t, out, "Kind:      resolve-issue\n")
	assert.Contains(t, out, "Logbook:   1 bearing, 1 action (1 failed)\n")
	assert.Contains(t, out, "Slate:     1 observation\n  Context: a call with the maintainer  (artifact ")
	assert.Contains(t, out, "Artifacts: 2 ")

	var show voyageShow
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "show", "--json")), &show))
	assert.Equal(t, 1, show.Logbook.Bearings)
	assert.Len(t, show.Slate, 1)
	assert.Len(t, show.Artifacts, 2)
	assert.Equal(t, 1, show.Logbook.Failed)
	assert.Empty(t, show.FailedActions, "a failed action keeps its entry in the story")
}

// show --json streams the artifact index; what it writes is what
// writeJSON writes of the whole.
func TestVoyageShowStreamsTheJSONWriteJSONWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	for _, n := range []int{0, 1, 3} {
		s := voyageShow{
			Voyage:        helm.VoyageInfo{ID: "a3b00001", Intent: "fix <b> & \"quotes\"\n", Created: at},
			Logbook:       logbookCounts{Entries: 2, Bearings: 1, Actions: 1},
			Slate:         []logbook.ObservationRecord{{Key: "k", Mark: json.RawMessage(`{"kind":"context","description":"<x>"}`), Label: "L", ObservedAt: at}},
			Artifacts:     []helm.ArtifactInfo{},
			FailedActions: []logbook.Entry{},
		}
		for i := range n {
			s.Artifacts = append(s.Artifacts, helm.ArtifactInfo{Hash: fmt.Sprintf("%064x", i), Size: int64(i), Status: logbook.ArtifactStowed, Reason: "<why>"})
		}
		var want, got strings.Builder
		require.NoError(t, writeJSON(&want, s))
		arts := func(yield func(helm.ArtifactInfo, error) bool) {
			for _, a := range s.Artifacts {
				if !yield(a, nil) {
					return
				}
			}
		}
		require.NoError(t, writeShowJSON(&got, &s, arts))
		assert.Equal(t, want.String(), got.String(), "%d artifacts", n)
	}
}

func TestVoyageVerify(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("verify me")
	// Hex digits of a random stream compress too little to be kept in the
	// event log: the sighting goes to the pack file, damaged below.
	rnd := rand.New(rand.NewPCG(1, 2))
	hexDigits := make([]byte, 100<<10)
	for i := range hexDigits {
		hexDigits[i] = "0123456789abcdef"[rnd.IntN(16)]
	}
	h.writeFile("a.txt", string(hexDigits))
	h.ok("observe", "file-contents", "--read", "a.txt")
	out := h.ok("voyage", "verify")
	assert.Contains(t, out, "Voyage "+id+"\n")
	assert.Contains(t, out, "artifacts: 1 checked")
	assert.Contains(t, out, "OK: nothing damaged\n")

	var rep verifyJSON
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "verify", "--json")), &rep))
	assert.True(t, rep.OK)
	assert.Equal(t, 1, rep.ArtifactsChecked)
	assert.NotZero(t, rep.Records)

	// Damage the artifact's bytes: verify reports it and exits 1.
	pack := filepath.Join(h.Home, "voyages", id, "artifacts.pack")
	data, err := os.ReadFile(pack)
	require.NoError(t, err)
	data[len(data)-3] ^= 0xff
	require.NoError(t, os.WriteFile(pack, data, 0o600))
	r := h.fails(1, "voyage", "verify")
	assert.Contains(t, r.Stdout, "DAMAGED: 1 problem\n")
	assert.Contains(t, r.Stderr, "is damaged")
}

func TestVoyageVerifyReportsDamagedEventLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("verify me")
	h.ok("observe", "context", "one")
	h.ok("observe", "context", "two")
	events := filepath.Join(h.Home, "voyages", id, "events")
	entries, err := os.ReadDir(events)
	require.NoError(t, err)
	var seg string
	for _, e := range entries {
		if info, _ := e.Info(); strings.HasSuffix(e.Name(), ".seg") && info.Size() > 200 {
			seg = filepath.Join(events, e.Name())
		}
	}
	require.NotEmpty(t, seg, "a segment file in %v", entries)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	end := len(data) // segments are preallocated: find where the data ends
	for end > 0 && data[end-1] == 0 {
		end--
	}
	data[end/2] ^= 0xff // the middle of the log, not a torn tail
	require.NoError(t, os.WriteFile(seg, data, 0o600))
	r := h.fails(1, "--voyage", id, "voyage", "verify")
	assert.Contains(t, r.Stdout, "DAMAGED")
	assert.Contains(t, r.Stdout, filepath.Base(seg))
}
