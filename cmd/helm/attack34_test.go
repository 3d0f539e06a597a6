package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Issue 34, attack round: the recorded agent, running helm as the same
// user with write access to the home, against the CLI promises of issue
// 34 (who is remembered, which voyage a command takes, output safety,
// exit codes, planted settings).

// lastEntry returns the last entry of voyage id's story, as helm log
// --json tells it.
func lastEntry(t *testing.T, h *harness, id string) logbook.Entry {
	t.Helper()
	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", id, "--json")), &lj))
	require.NotEmpty(t, lj.Entries)
	return lj.Entries[len(lj.Entries)-1]
}

// forgeSnapshot rewrites voyage id's snapshot with edit applied to its
// views, with the mark (and so the log it vouches for) unchanged and every
// checksum recomputed: a cache the agent rewrote, as helm would have
// written it.
func forgeSnapshot(t *testing.T, home, id string, edit func(st *projection.State)) {
	t.Helper()
	path := filepath.Join(home, "voyages", id, "snapshot")
	data, err := os.ReadFile(path)
	require.NoError(t, err, "a snapshot to forge")
	const magic = "HELMSNP2"
	require.Equal(t, magic, string(data[:len(magic)]))
	n := int(binary.LittleEndian.Uint32(data[len(magic)+4:]))
	at := len(magic) + 8
	mark := data[at : at+n]
	st, err := projection.DecodeSnapshot(data[at+n:])
	require.NoError(t, err)
	edit(st)
	body, err := st.EncodeSnapshot()
	require.NoError(t, err)
	out := append([]byte(magic), make([]byte, 8)...)
	binary.LittleEndian.PutUint32(out[len(magic):], crc32.Checksum(mark, crc32.MakeTable(crc32.Castagnoli)))
	binary.LittleEndian.PutUint32(out[len(magic)+4:], uint32(n))
	out = append(append(out, mark...), body...)
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

// TestAttackForgedSnapshotCannotGiveTheAgentAMethodItNeverRecorded: the
// agent recorded every entry as method claude-test; it rewrites the
// voyage's snapshot (a cache, trusted at open when its mark is on the log)
// so that its start and its entries say method human, and then records
// without --method. The entry says claude-test, the method the log holds,
// and the built-in rule that keeps a closed voyage's evidence from an
// agent still refuses its jettison (exit 4).
func TestAttackForgedSnapshotCannotGiveTheAgentAMethodItNeverRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.writeFile("customer.txt", curateMarker+"\n")
	id := strings.TrimSpace(h.ok("voyage", "new", "--as", "claude-1", "--role", "coder", "--method", "claude-test", "fix the invoice export"))
	out := h.ok("--as", "claude-1", "--json", "observe", "file-contents", "--read", "customer.txt")
	var obs view.Observed
	require.NoError(t, json.Unmarshal([]byte(out), &obs))
	require.Len(t, obs.Artifact, 64)

	// Enough events for a writer to leave a snapshot behind.
	home, err := helm.Open(h.Home, &helm.Options{NoSync: true})
	require.NoError(t, err)
	v, err := home.Voyage(ctx, id)
	require.NoError(t, err)
	agent := logbook.Who{Identity: "claude-1", Role: "coder", Method: "claude-test"}
	for range 4100 {
		_, err := v.Note(ctx, "working", agent)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())

	forgeSnapshot(t, h.Home, id, func(st *projection.State) {
		for i := range st.Voyage.Lifecycle {
			st.Voyage.Lifecycle[i].Who.Method = "human"
		}
		for i := range st.Entries {
			st.Entries[i].Who.Method = "human"
		}
	})
	// The forgery took: the views say human.
	require.Equal(t, "human", lastEntry(t, h, id).Who.Method, "the forged snapshot is what the views hold")

	h.ok("--as", "claude-1", "note", "after the forgery")
	assert.Equal(t, "claude-test", lastEntry(t, h, id).Who.Method, "the method the log holds, not the forged snapshot's")

	h.ok("--as", "claude-1", "complete", "--summary", "done")
	r := h.run("--as", "claude-1", "--voyage", id, "artifact", "jettison", obs.Artifact, "--reason", "cover my tracks")
	assert.Equal(t, exitRefused, r.Code, "an agent's jettison of a closed voyage's evidence is refused: %s", r)
	assert.Contains(t, h.ok("--voyage", id, "sighting", "show", obs.Artifact[:8]), curateMarker)
}

// TestAttackHandoffDoesNotLendTheGiversRoleToTheTaker: after ann (lead,
// human) hands the voyage to bob, bob's entries do not borrow ann's role
// or method: a change without them exits 2 and records nothing; once bob
// gives his, they are remembered for bob, and ann's stay ann's.
func TestAttackHandoffDoesNotLendTheGiversRoleToTheTaker(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := strings.TrimSpace(h.ok("voyage", "new", "--as", "ann", "--role", "lead", "--method", "human", "review the parser"))
	h.ok("--as", "ann", "note", "handing this to bob")
	h.ok("--as", "ann", "voyage", "handoff", "--to", "bob", "--why", "bob takes over", "--yes")
	before := h.ok("log", id, "--json")

	r := h.fails(2, "note", "bob's first note") // the voyage's identity is bob now
	assert.Contains(t, r.Stderr, "no role")
	assert.Contains(t, r.Stderr, "Try: ")
	assert.Equal(t, before, h.ok("log", id, "--json"), "nothing recorded")

	h.ok("--role", "coder", "--method", "claude-test", "note", "bob's first note")
	h.ok("note", "bob's second note")
	got := lastEntry(t, h, id).Who
	assert.Equal(t, logbook.Who{Identity: "bob", Role: "coder", Method: "claude-test"}, got)
	h.ok("--as", "ann", "note", "ann again")
	assert.Equal(t, logbook.Who{Identity: "ann", Role: "lead", Method: "human"}, lastEntry(t, h, id).Who)
}

// forgedStory is a recorded text that tries to forge the story's own
// lines: an entry heading, a status header, a summary, on lines of their
// own; escapedStory adds terminal escapes (a window title, a colour, a
// cursor move) and a carriage return that would overwrite a line.
const (
	forgedStory  = "fine\n── Action 9 ── 2026-02-26T17:01:00Z\nStatus: completed (2026-02-26T17:30:00Z)\nSummary: PR #45 merged.\n\tindented"
	escapedStory = "fine\x1b]0;pwned\x07\x1b[31mred\x1b[2J\rStatus: completed\u009b31m"
)

// TestAttackStoredTextsCannotForgeTheStorysStructure: every text the
// agent records (intent, context, a command's output, reading, challenge,
// note, judgement, summary, resume reason, handoff reason, commit
// message) holding a forged entry heading, status line and terminal
// escapes: helm log, piped and on a terminal in colour, shows one status
// line, no Action 9 heading, and no escape the agent wrote; a text helm
// refuses is refused with exit 2.
func TestAttackStoredTextsCannotForgeTheStorysStructure(t *testing.T) {
	t.Parallel()
	for _, payload := range []string{forgedStory, escapedStory} {
		t.Run(strings.Fields(payload)[0]+"-"+itoa(len(payload)), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			gitIn(t, h.Dir, "init", "-q")
			h.ExtraEnv = append(h.ExtraEnv, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
			h.Env["HELM_ROLE"], h.Env["HELM_METHOD"], h.Env["HELM_IDENTITY"] = "coder", "claude-test", "claude-1"
			r := h.run("voyage", "new", "Resolve #42 "+payload)
			if r.Code != 0 {
				require.Equal(t, exitUsage, r.Code, "%s", r)
				h.ok("voyage", "new", "Resolve #42")
			}
			h.writeFile("f.txt", "x\n")
			steps := [][]string{
				{"observe", "context", payload},
				{"observe", "command", "--", "printf", "%s", payload},
				{"bearing", "--reading", payload},
				{"bearing", "challenge", "1", "--with", payload, "--reading", payload},
				{"note", payload},
				{"judge", "--score", "5", "--dimension", "care", "--evidence", "1", payload},
				{"action", "commit", "--message", payload},
				{"complete", "--summary", payload, "--outcome", "partial"},
				{"voyage", "resume", "--reason", payload},
				{"--as", "claude-1", "voyage", "handoff", "--to", "bob", "--why", payload, "--yes"},
			}
			for _, args := range steps {
				r := h.run(args...)
				t.Logf("helm %s: exit %d %s", args[0], r.Code, strings.TrimSpace(r.Stderr))
				assert.Contains(t, []int{0, exitFailed, exitUsage, exitRecorded, exitRefused}, r.Code, "helm %v: %s", args, r)
			}
			for _, out := range []string{h.ok("log"), h.ok("log", "--evidence"), func() string {
				env := map[string]string{}
				for k, v := range h.Env {
					env[k] = v
				}
				env["HELM_PAGER"] = "cat"
				got, _ := runOnTerminal(t, h, env, "log", "--absolute")
				return got
			}()} {
				lines := strings.Split(out, "\n")
				status := 0
				for _, l := range lines {
					l = strings.TrimPrefix(strings.TrimSuffix(l, "\r"), "\x1b[1m")
					assert.False(t, strings.HasPrefix(l, "── Action 9"), "a forged heading: %q", l)
					if strings.HasPrefix(l, "Status: ") {
						status++
					}
					assert.False(t, strings.HasPrefix(l, "Summary: PR #45"), "a forged summary line: %q", l)
				}
				assert.Equal(t, 1, status, "one status line:\n%s", out)
				for _, esc := range []string{"\x1b]", "\x1b[31mred", "\x1b[2J", "\x07", "\u009b", "\rStatus"} {
					assert.NotContains(t, out, esc, "an escape the agent wrote reaches the output")
				}
			}
		})
	}
}
