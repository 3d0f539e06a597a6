package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/homeindex"
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

// TestAttackEveryErrorUnderJSONIsOneObject: under --json (or --json=FIELDS,
// or --jq), every error path the agent can reach, whatever stands where on
// the command line, leaves on stderr one JSON object with error and
// exit_status equal to the exit status (warnings before it are helm:
// lines), and nothing on stdout.
func TestAttackEveryErrorUnderJSONIsOneObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := strings.TrimSpace(h.ok("voyage", "new", "fix the parser"))
	other := strings.TrimSpace(h.ok("voyage", "new", "--json=id", "--jq", ".id", "another"))
	require.Len(t, other, 36)
	// A damaged voyage, in a home of its own: a listing would meet it.
	hd := newHarness(t)
	agentEnv(hd)
	damaged := strings.TrimSpace(hd.ok("voyage", "new", "to be damaged"))
	events := filepath.Join(hd.Home, "voyages", damaged, "events")
	entries, err := os.ReadDir(events)
	require.NoError(t, err)
	flipped := false
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".seg") || strings.HasPrefix(e.Name(), "seg") {
			p := filepath.Join(events, e.Name())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)-10] ^= 0x40
			require.NoError(t, os.WriteFile(p, b, 0o600))
			flipped = true
		}
	}
	require.True(t, flipped, "a segment to damage among %v", entries)

	tests := []struct {
		name    string
		home    *harness // h when nil
		args    []string
		code    int
		printed bool // what could be done is on stdout (a list without the voyage it could not read)
	}{
		{name: "unknown command", args: []string{"--json", "frobnicate"}, code: exitUsage},
		{name: "unknown command, the flag after it", args: []string{"frobnicate", "--json"}, code: exitUsage},
		{name: "unknown command, fields", args: []string{"--json=id", "frobnicate"}, code: exitUsage},
		{name: "unknown command, jq", args: []string{"--jq", ".id", "frobnicate"}, code: exitUsage},
		{name: "unknown flag", args: []string{"--json", "voyage", "list", "--colour"}, code: exitUsage},
		{name: "unknown shorthand", args: []string{"--json", "voyage", "list", "-Z"}, code: exitUsage},
		{name: "a flag's bad value", args: []string{"--json", "voyage", "list", "--status", "nope"}, code: exitUsage},
		{name: "missing argument", args: []string{"--json", "--voyage", id, "note"}, code: exitUsage},
		{name: "too many arguments", args: []string{"--json", "voyage", "show", id, id}, code: exitUsage},
		{name: "VOYAGE and --voyage disagree", args: []string{"--json", "--voyage", id, "log", other}, code: exitUsage},
		{name: "a path as the voyage", args: []string{"--json", "log", "../voyages/" + id}, code: exitUsage},
		{name: "a change with two active voyages", args: []string{"--json", "note", "which?"}, code: exitUsage},
		{name: "an identity that is a path", args: []string{"--json", "--voyage", id, "--as", "../bob", "note", "x"}, code: exitUsage},
		{name: "a jq program that does not parse", args: []string{"--jq", ".[", "voyage", "list"}, code: exitUsage},
		{name: "a jq program that fails on the output", args: []string{"--jq", ".foo.bar", "voyage", "list"}, code: exitUsage},
		{name: "a jq program that fails on a read's output", args: []string{"--jq", ".[0]", "--voyage", id, "voyage", "show"}, code: exitUsage},
		{name: "a damaged voyage", home: hd, args: []string{"--json", "log", damaged}, code: exitFailed},
		{name: "a damaged voyage, listed", home: hd, args: []string{"--json", "voyage", "list"}, code: exitFailed, printed: true},
		{name: "a failed look", args: []string{"--json", "--voyage", id, "observe", "file-contents", "--read", "gone.txt"}, code: exitRecorded},
		{name: "a guard refusal", args: []string{"--json", "--voyage", id, "voyage", "handoff", "--to", "bob", "--why", "mine", "--yes"}, code: exitRefused},
		{name: "completion of an unknown shell", args: []string{"--json", "completion", "tcsh"}, code: exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmp.Or(tt.home, h).run(tt.args...)
			require.Equal(t, tt.code, r.Code, "%s", r)
			if tt.code != exitRecorded && !tt.printed {
				assert.Empty(t, r.Stdout, "nothing on stdout")
			}
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &obj), "the error is one JSON object on one line: %q", r.Stderr)
			for _, l := range lines[:len(lines)-1] {
				assert.True(t, strings.HasPrefix(l, "helm: "), "only warnings before it: %q", l)
			}
			assert.NotEmpty(t, obj["error"])
			assert.Equal(t, float64(tt.code), obj["exit_status"])
		})
	}
}

// TestAttackJQFailingOnAChangesOutputSaysTheChangeStands: a jq program
// that fails on the output of a change is bad input (exit 2), but the
// change ran before its output was shaped: the error says so, rather than
// let exit 2 read as "nothing recorded".
func TestAttackJQFailingOnAChangesOutputSaysTheChangeStands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := strings.TrimSpace(h.ok("voyage", "new", "fix the parser"))
	r := h.fails(exitUsage, "--jq", ".[0]", "note", "a note")
	assert.Contains(t, r.Stderr, "the command itself ran")
	assert.Contains(t, r.Stderr, `"try":"the command with --json alone`)
	assert.Empty(t, r.Stdout)
	assert.Equal(t, "a note", lastEntry(t, h, id).Note.Text)
}

// printAt returns where the print of the voyage's log starts in a view
// the home index holds (index.go's appendFingerprint: the count of
// stamps, then each stamp, WATERMARK's first): the agent splices views
// and prints as helm wrote them.
func printAt(t *testing.T, view []byte) int {
	t.Helper()
	at := bytes.LastIndex(view, []byte("\x09WATERMARK")) - 1
	require.Positive(t, at, "the view ends with a print of WATERMARK and more")
	return at
}

// TestAttackForgedHomeIndexCannotMakeAReadNameAnotherVoyage: the agent
// rewrites the home index (with helm's own index writer) so that its
// decoy voyage's line says it is the voyage a person last worked on (that
// one's intent, status and times) and is the most recently written. A
// bare helm log may then tell the decoy, as the listing says, but what it
// says on stderr names the voyage it tells, intent included; and a change
// still goes nowhere it was not sent.
func TestAttackForgedHomeIndexCannotMakeAReadNameAnotherVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	real := strings.TrimSpace(h.ok("voyage", "new", "Resolve #42: the crash the person cares about"))
	h.at(1)
	decoy := strings.TrimSpace(h.ok("voyage", "new", "a decoy the agent wants shown"))
	h.ok("--voyage", decoy, "complete", "--summary", "nothing to see")
	h.at(5)
	h.ok("--voyage", real, "note", "pushed a force-push to main")
	h.ok("--voyage", real, "complete", "--summary", "done", "--outcome", "failed")
	r := h.run("log")
	require.Equal(t, 0, r.Code, "%s", r)
	require.Contains(t, r.Stderr, "voyage "+real[:8]+" (Resolve #42")

	index := filepath.Join(h.Home, homeindex.Name)
	views, err := homeindex.Read(index)
	require.NoError(t, err)
	seqs, err := homeindex.Seqs(index)
	require.NoError(t, err)
	view := bytes.Replace(views[real][:printAt(t, views[real])], []byte(real), []byte(decoy), 1)
	forged := append(view, views[decoy][printAt(t, views[decoy]):]...) // the decoy's log, as helm stamped it
	w, err := homeindex.Open(h.Home, decoy, true, nil)
	require.NoError(t, err)
	require.NoError(t, w.Close(decoy, seqs[decoy], forged))
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	intents := map[string]any{}
	for _, v := range list {
		intents[v["id"].(string)] = v["intent"]
	}
	require.Equal(t, "Resolve #42: the crash the person cares about", intents[decoy], "the forgery took: the listing believes the index")

	r = h.run("log")
	require.Equal(t, 0, r.Code, "%s", r)
	told := strings.TrimPrefix(strings.SplitN(r.Stdout, "\n", 2)[0], "Voyage: ")
	t.Logf("stderr: %sstory: %s", r.Stderr, told)
	var named string
	for _, id := range []string{real, decoy} {
		if strings.Contains(r.Stderr, "voyage "+id[:8]+" (") {
			named = id
		}
	}
	require.NotEmpty(t, named, "stderr names the voyage: %s", r.Stderr)
	assert.Contains(t, r.Stderr, "voyage "+named[:8]+" ("+told+")", "stderr names the voyage the story tells, by its id and its own intent")

	// A change never falls back: no voyage is active.
	before := h.ok("--voyage", decoy, "log", "--json")
	r = h.fails(exitUsage, "note", "where does this go?")
	assert.Contains(t, r.Stderr, "no active voyage")
	assert.Equal(t, before, h.ok("--voyage", decoy, "log", "--json"), "nothing recorded")
}

// TestAttackDryRunAgreesWithTheRealRunsPreconditions: for each
// precondition the agent can break (no GitHub repository, a branch git
// cannot resolve, a secret in the parameters, a parameter that is not a
// number, no role), the dry run and the real run exit the same, 2, and
// neither records anything (the story, read back, is unchanged).
func TestAttackDryRunAgreesWithTheRealRunsPreconditions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, h.Dir, "init", "-q", "--bare", "-b", "main", remote)
	gitIn(t, h.Dir, "init", "-q", "-b", "fix")
	gitIn(t, h.Dir, "remote", "add", "origin", remote)
	gitIn(t, h.Dir, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "first")
	agentEnv(h)
	id := strings.TrimSpace(h.ok("voyage", "new", "exit codes"))
	secret := "ghp_" + strings.Repeat("Zx9Q", 9)
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{name: "no GitHub repository", args: []string{"action", "create-pull-request", "--title", "t"}},
		{name: "a GitHub action on an issue without a repository", args: []string{"action", "close-issue", "7"}},
		{name: "a branch git cannot resolve", args: []string{"action", "push", "--branch", "no-such-branch"}},
		{name: "a secret in the message", args: []string{"action", "commit", "--message", "token " + secret}},
		{name: "a witness line in the message", args: []string{"action", "commit", "--message", "fix\n\nHelm-Voyage: " + id + " 1:" + strings.Repeat("ab", 32)}},
		{name: "a witness line that does not parse", args: []string{"action", "create-issue", "--repo", "octo/widgets", "--title", "t", "--body", "x\nHelm-Voyage: nonsense"}},
		{name: "a pull request that is not a number", args: []string{"action", "merge-pull-request", "abc", "--repo", "octo/widgets"}},
		{name: "a repository that is not OWNER/NAME", args: []string{"action", "close-issue", "7", "--repo", "../../etc"}},
		{name: "no role", env: map[string]string{"HELM_ROLE": ""}, args: []string{"--as", "bob", "action", "commit", "--message", "m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := map[string]string{}
			for k, v := range tt.env {
				saved[k] = h.Env[k]
				h.Env[k] = v
			}
			defer func() {
				for k, v := range saved {
					h.Env[k] = v
				}
			}()
			before := h.ok("log", id, "--json")
			dry := h.run(append(tt.args, "--dry-run")...)
			real := h.run(tt.args...)
			t.Logf("dry run: %s\nreal run: %s", dry, real)
			assert.Equal(t, exitUsage, real.Code, "the real run: %s", real)
			assert.Equal(t, real.Code, dry.Code, "the dry run exits as the real run would")
			assert.Empty(t, dry.Stdout, "no 'would run' for what cannot run")
			assert.Equal(t, before, h.ok("log", id, "--json"), "nothing recorded")
		})
	}
}

// homeTree is every file under dir with its size, time and bytes: what
// a read must leave as it found it.
func homeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		out[p] = s
		return nil
	}))
	return out
}

// TestAttackPlantedSettingsAreReadNeverRun: the agent plants hooks in
// the user's and the project's agent settings that run a program of its
// own, a gh configuration with a pager and aliases, and a repository
// configuration with an fsmonitor and a pager. helm config and helm
// doctor read them and run none of them, and write nothing in the home;
// a config.toml that names a pager is refused by name (exit 2), so no
// home file chooses the program a person's helm log runs.
func TestAttackPlantedSettingsAreReadNeverRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ExtraEnv = []string{"GIT_CONFIG_NOSYSTEM=1"}
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "helm") // a hook is helm's by its program's name
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	require.NoError(t, os.MkdirAll(h.Env["HOME"], 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.Env["HOME"], ".gitconfig"), []byte("[user]\n\tname = Ann\n\temail = ann@example.com\n"), 0o600))
	gitIn(t, h.Dir, "init", "-q")
	for _, kv := range [][2]string{{"core.fsmonitor", script}, {"core.pager", script}, {"alias.config", "!" + script}, {"core.hooksPath", filepath.Dir(script)}} {
		gitIn(t, h.Dir, "config", kv[0], kv[1])
	}
	agentEnv(h)
	h.ok("voyage", "new", "planted")
	exe, err := os.Executable()
	require.NoError(t, err)
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	for _, scope := range []string{"--user", "--project"} {
		h.ok("hook", "install", "claude-code", scope, "--as", "claude-1")
	}
	for _, path := range []string{filepath.Join(h.Env["HOME"], ".claude", "settings.json"), filepath.Join(h.Dir, ".claude", "settings.json")} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Contains(t, string(data), exe)
		require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(data), exe, script)), 0o600))
	}
	gh := filepath.Join(h.Home, "gh-config", "claude-1")
	require.NoError(t, os.MkdirAll(gh, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(gh, "config.yml"), []byte("pager: "+script+"\nbrowser: "+script+"\naliases:\n  auth: '!"+script+"'\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(gh, "hosts.yml"), []byte("github.com:\n  user: claude-1\n  oauth_token: gho_planted\n"), 0o600))

	before := homeTree(t, h.Home)
	for _, args := range [][]string{{"config"}, {"config", "--json"}, {"doctor"}, {"doctor", "--json"}} {
		r := h.run(args...)
		t.Logf("helm %v: %s", args, r)
		assert.Contains(t, []int{0, exitFailed}, r.Code, "%s", r)
		assert.NoFileExists(t, marker, "helm %v ran a planted program", args)
	}
	assert.Equal(t, before, homeTree(t, h.Home), "config and doctor write nothing in the home")

	for _, planted := range []string{"pager = \"" + script + "\"\n", "[core]\npager = \"" + script + "\"\n", "[env]\nPAGER = \"" + script + "\"\n"} {
		h.writeHome("config.toml", planted)
		r := h.fails(exitUsage, "log")
		assert.Contains(t, r.Stderr, "unknown key")
		assert.NoFileExists(t, marker)
	}
}

// TestAttackWhichVoyageTheAgentCannotSteer: VOYAGE and --voyage naming
// different voyages exit 2 for every read that takes both; a voyage named
// by a path (.., slashes), from the command line or HELM_VOYAGE, is no
// voyage (exit 2); a voyage directory the agent links in from outside the
// home is not read as one of the home's; and a change with several active
// voyages exits 2 listing them, recording nothing.
func TestAttackWhichVoyageTheAgentCannotSteer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	a := strings.TrimSpace(h.ok("voyage", "new", "first"))
	b := strings.TrimSpace(h.ok("voyage", "new", "second"))
	for _, cmd := range [][]string{
		{"log"}, {"voyage", "show"}, {"voyage", "verify"}, {"voyage", "head"}, {"voyage", "export"},
		{"report"}, {"stats"}, {"slate", "list"}, {"artifact", "list"}, {"transcript"},
	} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			r := h.fails(exitUsage, append(append([]string{"--voyage", a}, cmd...), b)...)
			assert.Contains(t, r.Stderr, "Try: ")
			if cmd[0] != "stats" && cmd[0] != "transcript" { // of several voyages: given one way only
				r := h.run(append(append([]string{"--voyage", a}, cmd...), a)...)
				assert.Equal(t, 0, r.Code, "the same voyage both ways: %s", r)
			}
		})
	}
	t.Run("paths", func(t *testing.T) {
		for _, args := range [][]string{
			{"log", "../voyages/" + a}, {"--voyage", "../" + a[:8], "log"}, {"--voyage", a + "/..", "note", "x"},
			{"voyage", "show", "./" + a}, {"log", a[:8] + "\\.."},
		} {
			r := h.run(args...)
			assert.Equal(t, exitUsage, r.Code, "helm %v: %s", args, r)
		}
		h.Env["HELM_VOYAGE"] = "../voyages/" + b
		r := h.run("note", "where?")
		delete(h.Env, "HELM_VOYAGE")
		assert.Equal(t, exitUsage, r.Code, "%s", r)
	})
	t.Run("a change among two active voyages", func(t *testing.T) {
		before := h.ok("log", a, "--json") + h.ok("log", b, "--json")
		for _, args := range [][]string{{"note", "x"}, {"observe", "context", "x"}, {"complete", "--summary", "x"}, {"bearing", "--reading", "x"}} {
			r := h.fails(exitUsage, args...)
			assert.Contains(t, r.Stderr, a)
			assert.Contains(t, r.Stderr, b)
		}
		assert.Equal(t, before, h.ok("log", a, "--json")+h.ok("log", b, "--json"), "nothing recorded")
	})
	t.Run("a voyage linked in from outside the home", func(t *testing.T) {
		other := newHarness(t)
		other.ids = 100 // ids of its own
		agentEnv(other)
		outside := strings.TrimSpace(other.ok("voyage", "new", "a story written elsewhere"))
		if err := os.Symlink(filepath.Join(other.Home, "voyages", outside), filepath.Join(h.Home, "voyages", outside)); err != nil {
			if runtime.GOOS == "windows" {
				t.Skipf("no symbolic link here: %v", err)
			}
			require.NoError(t, err)
		}
		r := h.run("log", outside)
		t.Logf("%s", r)
		assert.NotContains(t, r.Stdout, "a story written elsewhere", "a voyage outside the home is not read as the home's")
		r = h.run("--voyage", outside, "note", "written through the link")
		assert.NotEqual(t, 0, r.Code, "%s", r)
		assert.NotContains(t, other.ok("log", outside), "written through the link")
	})
}
