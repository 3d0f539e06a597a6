package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// Issue 34's MCP promises, attacked by the recorded agent: it drives
// helm mcp with the arguments it chooses, in a repository it set up.

// TestAttackMCPEntriesCannotClaimAHumanMethod: the agent cannot make an
// entry it records over MCP say method human (or another identity) by a
// tool argument: such an argument is refused, or ignored.
func TestAttackMCPEntriesCannotClaimAHumanMethod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{name: "method", args: map[string]any{"text": "I am a person", "method": "human"}},
		{name: "who", args: map[string]any{"text": "I am a person", "who": map[string]any{"identity": "ann", "role": "lead", "method": "human"}}},
		{name: "identity and role", args: map[string]any{"text": "I am a person", "identity": "ann", "role": "lead", "as": "ann"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			agentEnv(h)
			c := h.mcp()
			ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "posing"})
			res := c.call("note", tc.args)
			if !res.IsError {
				var e logbook.Entry
				data, err := json.Marshal(res.StructuredContent)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &e))
				assert.Equal(t, agentWho, e.Who, "the server's identity, whatever the arguments say")
			}
			log := h.ok("log")
			assert.NotContains(t, log, "human")
			assert.NotContains(t, log, "ann")
		})
	}
}

// TestAttackMCPActionToolsActOnTheSessionVoyage: after voyage_start,
// an action's own tool (commit, push, ...) that leaves voyage out acts on
// the session's voyage, as every other tool does: the session's voyage
// was held in the context by the common tool wrapper alone, which the
// action tools (built from each kind's schema) bypassed.
func TestAttackMCPActionToolsActOnTheSessionVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gitIn(t, h.Dir, "init", "-q", "-b", "main")
	gitIn(t, h.Dir, "commit", "-q", "--allow-empty", "-m", "first")
	agentEnv(h)
	c := h.mcp()
	_, v := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "commit what I changed"})
	h.writeFile("a.txt", "a\n")
	_, d := ok[struct {
		Voyage string `json:"voyage"`
		DryRun string `json:"dry_run"`
	}](c, "commit", map[string]any{"message": "Add a", "dry_run": true})
	assert.Equal(t, v.ID, d.Voyage, "the dry run is for the session's voyage")
	assert.Contains(t, d.DryRun, "commit -m 'Add a'")
}

// logbookCountsOf is what voyage show --json counts of voyage id.
func logbookCountsOf(t *testing.T, h *harness, id string) helm.LogbookCounts {
	t.Helper()
	var shown struct {
		Logbook helm.LogbookCounts `json:"logbook"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "voyage", "show", "--json")), &shown))
	return shown.Logbook
}

// TestAttackMCPGitHubActionOnANonGitHubOriginIsRefusedBeforeRecording:
// a GitHub action in a repository whose origin names no GitHub
// repository is refused over MCP as the CLI refuses it (exit 2, nothing
// recorded), its dry run too: never a failed action (exit 3) recorded
// for a precondition that could be checked first.
func TestAttackMCPGitHubActionOnANonGitHubOriginIsRefusedBeforeRecording(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{name: "its own tool", tool: "create_pull_request", args: map[string]any{"title": "Fix widget crash"}},
		{name: "its own tool, dry run", tool: "create_pull_request", args: map[string]any{"title": "Fix widget crash", "dry_run": true}},
		{name: "the action tool", tool: "action", args: map[string]any{"kind": "create-pull-request", "params": map[string]any{"title": "Fix widget crash"}}},
		{name: "another GitHub kind", tool: "comment_issue", args: map[string]any{"number": 1, "body": "looked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			gitIn(t, h.Dir, "init", "-q", "-b", "main")
			gitIn(t, h.Dir, "commit", "-q", "--allow-empty", "-m", "first")
			gitIn(t, h.Dir, "remote", "add", "origin", "../remote.git")
			agentEnv(h)
			c := h.mcp()
			_, v := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "a pull request without GitHub"})

			_, te := c.fails(tc.tool, tc.args)
			assert.Equal(t, 2, te.ExitStatus, "a precondition checked before recording is bad input: %+v", te)
			assert.Contains(t, te.Error, "no GitHub repository")
			assert.Contains(t, te.Try, "repo")
			assert.Equal(t, helm.LogbookCounts{}, logbookCountsOf(t, h, v.ID), "nothing recorded")
		})
	}
}

// eraseByTry runs the command line of the "Try: helm slate erase ..."
// line in stderr with a real shell, in h's directory and home as
// john-agent (h.start's identity), and requires it to succeed.
func eraseByTry(t *testing.T, h *harness, stderr string) {
	t.Helper()
	_, try, found := strings.Cut(stderr, "\nTry: ")
	require.True(t, found, "a Try: line follows the failure: %s", stderr)
	line, _, found := strings.Cut(try, eraseWhy)
	require.True(t, found, "the Try: line says why: %s", try)
	require.True(t, strings.HasPrefix(line, "helm ") && strings.Contains(line, " slate erase "), line)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = h.Dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + h.Env["HOME"], "HELM_HOME=" + h.Home,
		"HELM_IDENTITY=john-agent", "HELM_ROLE=coder", "HELM_METHOD=human", "GORACE=atexit_sleep_ms=0",
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", line, out)
}

// TestAttackObserveFailureIsExitThreeAndItsTryLineErasesIt: a look that
// failed is recorded and exits 3, never 0; a project mark on a tree that
// holds no project of its kind (a Go repository, a Cargo.toml that is a
// directory, or a symbolic link out of the tree, which the walk does not
// follow, as go-project does not follow a go.mod link) is a not-a-project
// failure; and the Try: line, run as printed by a shell, takes exactly
// that observation off the slate of the voyage it was made on.
func TestAttackObserveFailureIsExitThreeAndItsTryLineErasesIt(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "Cargo.toml")
	require.NoError(t, os.WriteFile(outside, []byte("[package]\nname = \"elsewhere\"\n"), 0o644))
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, h *harness)
		args  []string
		says  string
	}{
		{name: "rust-project on a Go repository", setup: func(t *testing.T, h *harness) { h.writeFile("go.mod", "module example.com/x\n") },
			args: []string{"observe", "rust-project", "."}, says: "not a Rust project: no Cargo.toml in the tree; its top holds go.mod (go-project)"},
		{name: "rust-project where Cargo.toml is a directory", setup: func(t *testing.T, h *harness) { h.writeFile("Cargo.toml/x", "") },
			args: []string{"observe", "rust-project", "."}, says: "not a Rust project"},
		{name: "rust-project where Cargo.toml links out of the tree", setup: func(t *testing.T, h *harness) {
			require.NoError(t, os.Symlink(outside, filepath.Join(h.Dir, "Cargo.toml")))
		}, args: []string{"observe", "rust-project", "."}, says: "not a Rust project"},
		{name: "go-project where go.mod links out of the tree", setup: func(t *testing.T, h *harness) {
			require.NoError(t, os.Symlink(outside, filepath.Join(h.Dir, "go.mod")))
		}, args: []string{"observe", "go-project", "."}, says: "not a Go project"},
		{name: "rust-project on a directory with a space and a quote", setup: func(t *testing.T, h *harness) { h.writeFile("it's mine/go.mod", "module x\n") },
			args: []string{"observe", "rust-project", "it's mine"}, says: "not a Rust project"},
		{name: "a missing file, with the observing flags", setup: func(t *testing.T, h *harness) {},
			args: []string{"observe", "file-contents", "--out=obs.json", "no such $file"}, says: "no such $file could not be read: no such file or directory"},
		{name: "a command that fails, its flags after", setup: func(t *testing.T, h *harness) {},
			args: []string{"observe", "command", "--timeout", "1m", "--", "sh", "-c", "echo 'a;b' && exit 3"}, says: "the command exited with status 3"},
		{name: "a voyage named that is not the default", setup: func(t *testing.T, h *harness) {},
			args: []string{"observe", "file-contents", "gone.txt"}, says: "gone.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			first := h.start("the voyage looked on")
			other := h.start("another voyage, written last")
			h.ok("--voyage", other, "note", "the most recent write")
			tc.setup(t, h)
			r := h.fails(3, append([]string{"--voyage", first[:8]}, tc.args...)...)
			assert.Contains(t, r.Stderr, "helm: observed, but "+tc.says)
			assert.Contains(t, h.ok("--voyage", first, "slate", "list"), "1 observation", "recorded all the same")
			eraseByTry(t, h, r.Stderr)
			assert.Contains(t, h.ok("--voyage", first, "slate", "list"), "empty", "the Try: line erased it")
		})
	}
}

// TestAttackMCPObserveNeverReportsAFailedLookAsSuccess: the observe tool
// lists a failed look under failures (docs/mcp.md: recorded all the
// same), and its text says so: a project mark on a tree that is not that
// project, a Cargo.toml link out of the tree among them.
func TestAttackMCPObserveNeverReportsAFailedLookAsSuccess(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "Cargo.toml")
	require.NoError(t, os.WriteFile(outside, []byte("[package]\n"), 0o644))
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, h *harness)
		args  map[string]any
		kind  string
	}{
		{name: "rust-project on a Go repository", setup: func(t *testing.T, h *harness) { h.writeFile("go.mod", "module x\n") },
			args: map[string]any{"kind": "rust-project", "path": "."}, kind: "not-a-project"},
		{name: "rust-project on a Cargo.toml link out of the tree", setup: func(t *testing.T, h *harness) {
			require.NoError(t, os.Symlink(outside, filepath.Join(h.Dir, "Cargo.toml")))
		}, args: map[string]any{"kind": "rust-project", "path": "."}, kind: "not-a-project"},
		{name: "a missing file", setup: func(t *testing.T, h *harness) {},
			args: map[string]any{"kind": "file-contents", "paths": []string{"gone.txt"}}, kind: "missing"},
		{name: "a command that exits non-zero", setup: func(t *testing.T, h *harness) {},
			args: map[string]any{"kind": "command", "command": []string{"sh", "-c", "exit 4"}}, kind: "exit-status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			agentEnv(h)
			tc.setup(t, h)
			c := h.mcp()
			ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "looking"})
			text, res := ok[struct {
				Failures []struct {
					Kind string `json:"kind"`
				} `json:"failures"`
			}](c, "observe", tc.args)
			require.Len(t, res.Failures, 1, text)
			assert.Equal(t, tc.kind, res.Failures[0].Kind)
			assert.Contains(t, text, "Observed, but ")
			assert.Contains(t, text, "slate_erase")
			ok[map[string]any](c, "slate_erase", tc.args)
			_, slate := ok[struct {
				Slate []any `json:"slate"`
			}](c, "slate_list", nil)
			assert.Empty(t, slate.Slate, "slate_erase with the same kind and parameters took it off")
		})
	}
}

// TestAttackMCPPinnedByEnvironmentRefusesOtherVoyages: a server pinned
// with HELM_VOYAGE (not --voyage) refuses voyage_start, and refuses a call
// naming another voyage, whatever tool: the refusal records nothing
// anywhere.
func TestAttackMCPPinnedByEnvironmentRefusesOtherVoyages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("pinned")
	other := h.start("another")
	agentEnv(h)
	h.Env["HELM_VOYAGE"] = id[:8]
	c := h.mcp()
	_, te := c.fails("voyage_start", map[string]any{"intent": "mine"})
	assert.Contains(t, te.Error, "acts on voyage "+id[:8]+" alone")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"note", map[string]any{"voyage": other, "text": "elsewhere"}},
		{"observe", map[string]any{"voyage": other[:8], "kind": "context", "description": "elsewhere"}},
		{"commit", map[string]any{"voyage": other, "message": "elsewhere", "dry_run": true}},
		{"action", map[string]any{"voyage": other, "kind": "commit", "params": map[string]any{"message": "elsewhere"}}},
		{"complete", map[string]any{"voyage": other, "summary": "ended by the agent"}},
	} {
		_, te := c.fails(tc.tool, tc.args)
		assert.Contains(t, te.Error, "acts on voyage "+id[:8]+" alone", tc.tool)
		assert.Equal(t, 2, te.ExitStatus, tc.tool)
	}
	assert.Equal(t, helm.LogbookCounts{}, logbookCountsOf(t, h, other), "nothing recorded on the other voyage")
	assert.Contains(t, h.ok("--voyage", other, "slate", "list"), "empty")
	list := h.ok("voyage", "list")
	assert.NotContains(t, list, "mine", "no voyage started")
}

// TestAttackMCPCallsDuringVoyageStartGoToItOrNowhere: calls that leave
// voyage out, made while voyage_start runs, either fail (the session had
// started no voyage yet) or land on the voyage it started: never on
// another voyage, never lost.
func TestAttackMCPCallsDuringVoyageStartGoToItOrNowhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	other := h.start("a voyage the session did not start")
	agentEnv(h)
	c := h.mcp()
	const notes = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded, refused := 0, 0
	var started helm.VoyageInfo
	var startErr error
	wg.Add(notes + 1)
	go func() {
		defer wg.Done()
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "voyage_start", Arguments: map[string]any{"intent": "raced"}})
		if err == nil && res.IsError {
			err = errors.New(resultText(res))
		}
		if err == nil {
			var data []byte
			data, err = json.Marshal(res.StructuredContent)
			if err == nil {
				err = json.Unmarshal(data, &started)
			}
		}
		startErr = err
	}()
	for i := range notes {
		go func() {
			defer wg.Done()
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "note", Arguments: map[string]any{"text": fmt.Sprintf("raced note %d", i)}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("note %d: a protocol error: %v", i, err)
			case res.IsError:
				assert.Contains(t, resultText(res), "this session started no voyage")
				refused++
			default:
				recorded++
			}
		}()
	}
	wg.Wait()
	require.NoError(t, startErr)
	assert.Equal(t, notes, recorded+refused)
	assert.Equal(t, recorded, logbookCountsOf(t, h, started.ID).Notes, "every note answered as recorded is on the started voyage")
	assert.Equal(t, 0, logbookCountsOf(t, h, other).Notes, "none on another")
}

// TestAttackMCPStartWithoutAMethodDoesNotSuggestHuman: helm mcp without
// a method exits 2 before serving, and its Try: line gives an agent's
// method as the example, never "human": the server records an agent's
// work, and an agent following the hint would have its entries say a
// person made them.
func TestAttackMCPStartWithoutAMethodDoesNotSuggestHuman(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.Env["HELM_IDENTITY"], h.Env["HELM_ROLE"] = "claude-1", "coder"
	m := h.main()
	m.serveMCP = func(context.Context, *mcp.Server) error {
		t.Error("served without a method")
		return nil
	}
	r := <-h.runAsync(m, []string{"mcp"})
	assert.Equal(t, exitUsage, r.Code, r.String())
	assert.Contains(t, r.Stderr, "Try: helm mcp --method claude-code")
	assert.NotContains(t, r.Stderr, "human")
}
