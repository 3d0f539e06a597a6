package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/artifact"
)

// The marker of the payload the curation tests observe.
const curateMarker = "Qx7#Zeta4471Orchard@Lantern%9vK!wP2&mR8^yT5*uB3(nH6)jL1_gF4+dS0=aE"

// storedForm returns a run of the bytes the home stores for the sighting
// of artifact hash (its zstd form, in the middle), read as sighting show
// --json prints it: what a search of the home's files looks for.
func storedForm(t *testing.T, h *harness, id, hash string) string {
	t.Helper()
	js := strings.TrimSuffix(h.ok("--voyage", id, "sighting", "show", hash, "--json"), "\n")
	a := artifact.Encode([]byte(js))
	require.Equal(t, hash, a.Hash, "sighting show --json prints the bytes as stored")
	c := a.Compressed
	require.Greater(t, len(c), 64)
	return string(c[len(c)/2-24 : len(c)/2+24])
}

// closedWithPayload starts a voyage as a person, observes a file holding
// curateMarker and another, completes the voyage and returns the two
// artifacts' hashes.
func closedWithPayload(t *testing.T, h *harness) (id, payload, other string) {
	t.Helper()
	id = h.start("fix the invoice export")
	h.writeFile("customer.txt", curateMarker+"\n")
	h.writeFile("notes.txt", "meeting notes: the export drops a column\n")
	hash := func(file string) string {
		var o struct{ Artifact string }
		require.NoError(t, json.Unmarshal([]byte(h.ok("observe", "file-contents", "--read", file, "--json")), &o))
		require.Len(t, o.Artifact, 64)
		return o.Artifact
	}
	payload, other = hash("customer.txt"), hash("notes.txt")
	h.ok("bearing", "--reading", "the export drops a column")
	h.ok("complete", "--summary", "fixed the export")
	return id, payload, other
}

// homeHolds reports whether any file under the home holds s.
func homeHolds(t *testing.T, h *harness, s string) bool {
	t.Helper()
	found := false
	require.NoError(t, filepath.WalkDir(h.Home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = true
		}
		return err
	}))
	return found
}

// refusals counts the refused actions in a voyage's story.
func refusals(t *testing.T, h *harness, id string) int {
	t.Helper()
	return strings.Count(h.ok("--voyage", id, "log"), " denied by rule ")
}

func TestCurationOfACompletedVoyageByAPersonThenCompactionLeavesNoBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id, payload, other := closedWithPayload(t, h)
	stored := storedForm(t, h, id, payload)
	require.True(t, homeHolds(t, h, stored), "before: the payload is stored")

	out := h.ok("--voyage", id, "artifact", "jettison", payload[:8], "--reason", "holds a customer's data")
	assert.Contains(t, out, "jettisoned from voyage")
	h.ok("--voyage", id, "artifact", "reduce", other[:8], "--method", "human", "--summary", "notes, nothing kept")
	assert.Regexp(t, `(?m)^Status: +completed`, h.ok("--voyage", id, "voyage", "show"))
	out = h.ok("--voyage", id, "voyage", "compact")
	assert.Contains(t, out, "2 artifacts reclaimed")
	assert.False(t, homeHolds(t, h, stored), "after compaction no file of the home holds the payload")
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK")

	assert.Equal(t, "jettisoned by john-agent (role coder, method human) at 2026-02-26T17:00:00Z: holds a customer's data (artifact "+payload[:8]+")\n",
		h.ok("--voyage", id, "sighting", "show", payload[:8]))
	var info struct {
		Status, Reason string
		CuratedBy      struct{ Identity, Role, Method string } `json:"curated_by"`
		CuratedAt      string                                  `json:"curated_at"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "sighting", "show", payload[:8], "--json")), &info))
	assert.Equal(t, "jettisoned", info.Status)
	assert.Equal(t, "holds a customer's data", info.Reason)
	assert.Equal(t, "john-agent", info.CuratedBy.Identity)
	assert.Equal(t, "human", info.CuratedBy.Method)
	assert.Equal(t, "2026-02-26T17:00:00Z", info.CuratedAt)
	assert.Contains(t, h.ok("--voyage", id, "sighting", "show", other[:8]), "reduced to artifact ")
}

func TestASystemPolicyRuleLetsAnAgentCurateAClosedVoyageAndTheHomeCanTightenIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id, payload, other := closedWithPayload(t, h)
	sys := filepath.Join(t.TempDir(), "policy.toml")
	require.NoError(t, os.WriteFile(sys, []byte("[[rule]]\nname = \"agents may prune closed voyages\"\naction = \"jettison\"\nstatus = \"closed\"\ndecision = \"allow\"\n"), 0o644))
	h.SystemPolicy = sys
	h.Env["HELM_METHOD"] = "claude-opus"

	out := h.ok("--voyage", id, "policy", "check", "jettison")
	assert.Contains(t, out, "voyage completed")
	assert.Contains(t, out, `rule "agents may prune closed voyages" (`+sys+`:1): matches: allow`)
	assert.Contains(t, out, "Decision: allowed by rule")
	h.ok("--voyage", id, "artifact", "jettison", payload[:8], "--reason", "stale")

	// The system's rule names jettison only: reduce keeps the built-in rule.
	r := h.fails(4, "--voyage", id, "artifact", "reduce", other[:8], "--method", "claude-opus", "--summary", "s")
	assert.Contains(t, r.Stderr, `"a person reduces a closed voyage's evidence" (helm's built-in rules:`)

	// The home may add a refusal to what the system allows.
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte("[[rule]]\nname = \"we keep everything\"\naction = \"jettison\"\ndecision = \"deny\"\n"), 0o600))
	r = h.fails(4, "--voyage", id, "artifact", "jettison", other[:8], "--reason", "x")
	assert.Contains(t, r.Stderr, `"we keep everything"`)
}

func TestCurationOnAClosedVoyageNeedsWhoInFull(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id, payload, _ := closedWithPayload(t, h)
	delete(h.Env, "HELM_METHOD")
	// erin recorded nothing in the voyage: no method of hers to remember.
	r := h.fails(2, "--voyage", id, "--as", "erin", "artifact", "jettison", payload[:8], "--reason", "x")
	assert.Contains(t, r.Stderr, "no method")
	assert.Contains(t, h.ok("--voyage", id, "sighting", "show", payload[:8]), curateMarker)
}

// TestAttackAgentCannotCurateItsClosedVoyageInAnySpelling: the recorded
// agent runs helm as the user, owns the home, and wants the evidence of
// its finished work gone. Whatever flags, variables, config.toml or
// policy.toml it plants, its curation of the completed voyage is refused
// (exit 4), recorded, and the bytes stay. (Claiming method human is the
// limit: a claim helm cannot check locally, recorded as made; see
// docs/design.md.)
func TestAttackAgentCannotCurateItsClosedVoyageInAnySpelling(t *testing.T) {
	t.Parallel()
	const allowAll = "[[rule]]\nname = \"planted\"\ndecision = \"allow\"\n"
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, h *harness)
		args  []string
	}{
		{"its method in HELM_METHOD", func(t *testing.T, h *harness) { h.Env["HELM_METHOD"] = "claude-opus" }, nil},
		{"its method on the command line", func(t *testing.T, h *harness) { delete(h.Env, "HELM_METHOD") }, []string{"--method", "claude-opus"}},
		{"its method in config.toml", func(t *testing.T, h *harness) {
			delete(h.Env, "HELM_METHOD")
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "config.toml"), []byte("method = \"claude-opus\"\n"), 0o600))
		}, nil},
		{"Human with a capital", func(t *testing.T, h *harness) { delete(h.Env, "HELM_METHOD") }, []string{"--method", "Human"}},
		{"HUMAN in the variable", func(t *testing.T, h *harness) { h.Env["HELM_METHOD"] = "HUMAN" }, nil},
		{"human as its role", func(t *testing.T, h *harness) { h.Env["HELM_METHOD"] = "claude-opus" }, []string{"--role", "human"}},
		{"a person's identity", func(t *testing.T, h *harness) { h.Env["HELM_METHOD"] = "claude-opus" }, []string{"--as", "alice"}},
		{"an allow-all policy.toml", func(t *testing.T, h *harness) {
			h.Env["HELM_METHOD"] = "claude-opus"
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(allowAll), 0o600))
		}, nil},
		{"a policy file config.toml names", func(t *testing.T, h *harness) {
			h.Env["HELM_METHOD"] = "claude-opus"
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "mine.toml"), []byte(allowAll), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "config.toml"), []byte("policy = \"mine.toml\"\n"), 0o600))
		}, nil},
		{"an allow rule naming the built-in one's fields", func(t *testing.T, h *harness) {
			h.Env["HELM_METHOD"] = "claude-opus"
			rule := "[[rule]]\nname = \"a person jettisons a closed voyage's evidence\"\naction = \"jettison\"\nstatus = \"closed\"\nactor = \"agent\"\ndecision = \"allow\"\n"
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(rule), 0o600))
		}, nil},
		{"a system policy that says nothing of curation", func(t *testing.T, h *harness) {
			h.Env["HELM_METHOD"] = "claude-opus"
			sys := filepath.Join(t.TempDir(), "policy.toml")
			require.NoError(t, os.WriteFile(sys, []byte("[[rule]]\nname = \"no force\"\naction = \"push\"\nforce = true\ndecision = \"deny\"\n"), 0o644))
			h.SystemPolicy = sys
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(allowAll), 0o600))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id, payload, other := closedWithPayload(t, h)
			stored := storedForm(t, h, id, payload)
			if tc.plant != nil {
				tc.plant(t, h)
			}
			before := refusals(t, h, id)
			base := append([]string{"--voyage", id}, tc.args...)
			r := h.fails(4, append(base, "artifact", "jettison", payload[:8], "--reason", "cover my tracks")...)
			assert.Contains(t, r.Stderr, "refused by a guard rule")
			h.fails(4, append(base, "artifact", "reduce", other[:8], "--method", "claude-opus", "--summary", "nothing")...)
			assert.Equal(t, before+2, refusals(t, h, id), "each refusal is recorded")

			h.ok("--voyage", id, "voyage", "compact")
			assert.True(t, homeHolds(t, h, stored), "the payload is kept")
			assert.Contains(t, h.ok("--voyage", id, "sighting", "show", payload[:8]), curateMarker)
			assert.Regexp(t, `(?m)^Status: +completed`, h.ok("--voyage", id, "voyage", "show"))
		})
	}
}

func TestPolicyCheckExplainsCurationOnAnyStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("nothing yet")
	for _, tc := range []struct {
		name, method, status, decision string
	}{
		{"an agent on a completed voyage", "claude-opus", "completed", `Decision: denied by rule "a person jettisons a closed voyage's evidence" (helm's built-in rules:1)`},
		{"an agent on a cancelled voyage", "claude-opus", "cancelled", "Decision: denied by rule"},
		{"an agent on a blocked voyage", "claude-opus", "blocked", "Decision: allowed: no rule matched"},
		{"a person on a completed voyage", "human", "completed", "Decision: allowed: no rule matched"},
		{"an agent on the active voyage (its status, resolved)", "claude-opus", "", "Decision: allowed: no rule matched"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"policy", "check", "jettison", "--method", tc.method}
			if tc.status != "" {
				args = append(args, "--status", tc.status)
			}
			assert.Contains(t, h.ok(args...), tc.decision)
		})
	}
	r := h.fails(2, "policy", "check", "jettison", "--status", "closed")
	assert.Contains(t, r.Stderr, `--status "closed" is not a voyage's status`)
	r = h.fails(2, "policy", "check", "push", "--status", "completed")
	assert.Contains(t, r.Stderr, "--status is the status of the voyage curated")
}

// A blocked voyage is open: curation there is an agent's to do as on an
// active one, and it stays blocked.
func TestAnAgentCuratesABlockedVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("waiting on a review")
	h.writeFile("notes.txt", "notes\n")
	var o struct{ Artifact string }
	require.NoError(t, json.Unmarshal([]byte(h.ok("observe", "file-contents", "--read", "notes.txt", "--json")), &o))
	h.ok("complete", "--outcome", "blocked", "--summary", "waiting")
	h.Env["HELM_METHOD"] = "claude-opus"
	h.ok("--voyage", id, "artifact", "jettison", o.Artifact[:8], "--reason", "stale")
	assert.Regexp(t, `(?m)^Status: +blocked`, h.ok("--voyage", id, "voyage", "show"))
}
