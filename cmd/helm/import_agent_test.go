package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// capturedSession lays out the captured Claude Code 2.1.332 session
// (agent/claudecode/testdata/transcript) as Claude Code does under
// ~/.claude/projects, the subagent's id made a file name:
// DIR/<session>.jsonl and DIR/<session>/subagents/agent-<id>.jsonl. It
// returns the session's path.
func capturedSession(t *testing.T, dir string) string {
	t.Helper()
	const session = "4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11"
	src, err := filepath.Abs(filepath.Join("..", "..", "agent", "claudecode", "testdata", "transcript"))
	require.NoError(t, err)
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		return []byte(strings.ReplaceAll(string(data), "<agent-1>", "a1f0c2d3e4b5a6978"))
	}
	subs := filepath.Join(dir, session, "subagents")
	require.NoError(t, os.MkdirAll(subs, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(subs, "agent-a1f0c2d3e4b5a6978.jsonl"), read("subagent.jsonl"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(subs, "agent-a1f0c2d3e4b5a6978.meta.json"), read("subagent.meta.json"), 0o600))
	path := filepath.Join(dir, session+".jsonl")
	require.NoError(t, os.WriteFile(path, read("session.jsonl"), 0o600))
	return path
}

// importedVoyages returns the session's voyage and its subagent's.
func importedVoyages(t *testing.T, h *harness) (main, sub helm.VoyageInfo) {
	t.Helper()
	var list []helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	require.Len(t, list, 2, "the session's voyage and its subagent's")
	main, sub = list[0], list[1]
	if main.Parent != "" {
		main, sub = sub, main
	}
	return main, sub
}

func TestImportClaudeCodeTellsTheSessionsStory(t *testing.T) {
	h := newHarness(t)
	path := capturedSession(t, filepath.Join(h.Dir, "projects"))
	id := strings.TrimSpace(h.ok("voyage", "import", "--from", "claude-code", path, "--as", "claude-1"))
	main, sub := importedVoyages(t, h)
	assert.Equal(t, main.ID, id, "it prints the session's voyage")
	assert.Equal(t, main.ID, sub.Parent, "the subagent's voyage is a sub-voyage of the session's")
	assert.Equal(t, "claude-code:4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11", main.Session)
	assert.Equal(t, "claude-code:4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11/a1f0c2d3e4b5a6978", sub.Session)
	for _, v := range []helm.VoyageInfo{main, sub} {
		assert.Equal(t, "partial", string(v.Status))
		assert.Equal(t, "imported from "+path, v.Summary)
		assert.Equal(t, "claude-1", v.Identity)
	}
	assert.Equal(t, "Tidy the notes: mark them final, write a summary, have a helper count the lines, and clear out the victim directory.", main.Intent, "the intent is the first prompt")
	assert.Equal(t, "general-purpose: Count the notes' lines", sub.Intent, "a subagent's is its Agent call's")

	ids := strings.NewReplacer(main.ID, "<voyage>", sub.ID, "<subvoyage>", main.ID[:8], "<voyage>", sub.ID[:8], "<subvoyage>", path, "<file>")
	story := ids.Replace(h.ok("log", "--voyage", main.ID)) + "\n" + ids.Replace(h.ok("log", "--voyage", sub.ID))
	golden(t, "import-claude-code.log.golden", story)

	// Each step as recorded: who, and the tokens of 10 model messages.
	var doc struct {
		Entries []struct {
			Who  struct{ Role, Method string }
			Step *struct {
				Kind     string
				Decision *struct{ Verdict, Reason string }
				Usage    *struct {
					InputTokens int64 `json:"input_tokens"`
				}
			}
		}
	}
	var input int64
	denied := 0
	for _, v := range []string{main.ID, sub.ID} {
		require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json", "--voyage", v)), &doc))
		for _, e := range doc.Entries {
			if e.Step == nil {
				continue
			}
			if e.Step.Usage != nil {
				input += e.Step.Usage.InputTokens
			}
			if d := e.Step.Decision; d != nil && d.Verdict == "deny" {
				denied++
				assert.Contains(t, d.Reason, "rm -rf is denied in this project (rule no-rm-rf)")
			}
		}
	}
	assert.EqualValues(t, 12000, input, "10 messages of 1200 input tokens, each counted once")
	assert.Equal(t, 1, denied, "the denied rm -r -f")
}

func TestImportSessionTwiceIsRefusedNamingItsVoyage(t *testing.T) {
	h := newHarness(t)
	path := capturedSession(t, h.Dir)
	id := strings.TrimSpace(h.ok("voyage", "import", "--from", "claude-code", path, "--as", "claude-1"))
	r := h.fails(2, "voyage", "import", "--from", "claude-code", path, "--as", "claude-1")
	assert.Contains(t, r.Stderr, "voyage "+id[:8]+" (Tidy the notes")
	assert.Contains(t, r.Stderr, "holds session 4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11 already")
	assert.Contains(t, r.Stderr, "Try: helm log --voyage "+id[:8])
	list := h.ok("voyage", "list", "--status", "all")
	assert.Equal(t, 3, strings.Count(list, "\n"), "a header and the two voyages, nothing more: %s", list)

	again := strings.TrimSpace(h.ok("voyage", "import", "--from", "claude-code", path, "--as", "claude-1", "--again"))
	assert.NotEqual(t, id, again, "--again makes another voyage of it")
}

func TestImportRefusesBadInputRecordingNothing(t *testing.T) {
	h := newHarness(t)
	path := capturedSession(t, h.Dir)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	broken := filepath.Join(h.Dir, "broken.jsonl")
	require.NoError(t, os.WriteFile(broken, []byte(strings.Join(lines[:20], "")+"not json\n"+strings.Join(lines[20:], "")), 0o600))
	codexFile := codexRollout(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a line that is not JSON", []string{"--from", "claude-code", broken}, []string{"broken.jsonl: line 21: not a JSON object", "Try: give the session's log"}},
		{"another host's log", []string{"--from", "claude-code", codexFile}, []string{"line 1: not a Claude Code transcript: a Codex CLI rollout line (session_meta)"}},
		{"the other way round", []string{"--from", "codex", path}, []string{"line 1: not a Codex CLI rollout: the line is a Claude Code transcript line"}},
		{"an unknown host", []string{"--from", "cursor", path}, []string{`--from "cursor" is not one of claude-code, codex`}},
		{"a person's method", []string{"--from", "claude-code", path, "--method", "human"}, []string{"--method human: an agent's session is never a person's work"}},
		{"a missing file", []string{"--from", "claude-code", filepath.Join(h.Dir, "absent.jsonl")}, []string{"no such file"}},
		{"subagents for codex", []string{"--from", "codex", codexFile, "--subagents", h.Dir}, []string{"--subagents is for --from claude-code"}},
		{"--again without --from", []string{path, "--again"}, []string{"go with --from HOST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(2, append([]string{"voyage", "import", "--as", "claude-1"}, tc.args...)...)
			for _, w := range tc.want {
				assert.Contains(t, r.Stderr, w)
			}
			assert.True(t, strings.HasPrefix(h.ok("voyage", "list", "--status", "all"), "No voyages in "), "nothing recorded")
		})
	}
}

func TestImportCodexRollout(t *testing.T) {
	h := newHarness(t)
	file := codexRollout(t)
	var info helm.VoyageInfo
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "import", "--from", "codex", file, "--as", "codex-1", "--json")), &info))
	assert.Equal(t, "codex:0199a5c2-7f10-7d42-9c1e-3b7f6a2d9e01", info.Session)
	assert.Equal(t, "Mark the notes final and count their lines.", info.Intent)
	log := h.ok("log", "--voyage", info.ID)
	for _, want := range []string{"shell: cat notes.md", "apply_patch", "wc -l notes.md 'missing file.md'", "message: notes.md is final; it has 2 lines.", "compaction", "prompt: Thanks."} {
		assert.Contains(t, log, want)
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^Identity: codex-1$`), log)
	var doc struct {
		Entries []struct {
			Who struct{ Method string } `json:"who"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json", "--voyage", info.ID)), &doc))
	require.NotEmpty(t, doc.Entries)
	assert.Equal(t, "codex", doc.Entries[0].Who.Method, "the method is the host's name unless given")
}

// codexRollout is the path of the documented Codex CLI rollout
// (agent/codex/testdata).
func codexRollout(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "agent", "codex", "testdata", "rollout-2025-12-08T10-00-00-0199a5c2-7f10-7d42-9c1e-3b7f6a2d9e01.jsonl"))
	require.NoError(t, err)
	return p
}
