package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The recorded agent attacks helm hook claude-code: it runs anything
// through its Bash tool (each call seen by PreToolUse first), writes
// files in the project and the home, and knows every format.

// attackHook runs helm hook claude-code in-process with payload, its
// deadline set to deadline (0: the real one); the hook's work, which may
// outlive the command, is counted in wg.
func attackHook(h *harness, deadline time.Duration, wg *sync.WaitGroup, payload string) result {
	h.t.Helper()
	m := h.main()
	m.hookDeadline, m.hookWorkers = deadline, wg
	var stdout, stderr bytes.Buffer
	err := m.Run(context.Background(), []string{"hook", "claude-code", "--as", "claude-1", "--role", "coder", "--method", "claude-code"}, strings.NewReader(payload), &stdout, &stderr)
	code := ReportError(&stderr, err)
	return result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code, Err: err}
}

// hookAnswer is Claude Code's reading of a hook's standard output.
type hookAnswer struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		Decision                 struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

func readAnswer(t *testing.T, r result) hookAnswer {
	t.Helper()
	require.Equal(t, 0, r.Code, "%s", r)
	var a hookAnswer
	if strings.TrimSpace(r.Stdout) != "" {
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &a), "%s", r)
	}
	return a
}

const attackPolicy = `[[rule]]
name = "no rm -rf"
tool = "Bash"
command = "rm -rf"
decision = "deny"

[[rule]]
name = "tests pass"
event = "stop"
until = "tests-pass"
command = "go test"
decision = "block"
`

// TestAttackAgentCannotRunHelmHook: the agent's own Bash call that runs
// helm's hook (to record a fake "go test passed", a prompt it never got)
// is seen by PreToolUse first and denied by the built-in rule, in every
// spelling, even when the home's rules allow every Bash call; helm's
// other commands, and reads, are let through.
func TestAttackAgentCannotRunHelmHook(t *testing.T) {
	h := newHarness(t)
	h.writeHome("policy.toml", "[[rule]]\nname = \"all bash\"\ntool = \"Bash\"\ndecision = \"allow\"\n")
	exe, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(exe, filepath.Join(h.Dir, "h")))
	require.NoError(t, os.Link(exe, filepath.Join(h.Dir, "hl")))
	fake := `echo '{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"}}' | `
	denied := []struct{ name, command string }{
		{"by name", fake + "helm hook claude-code --as claude-1"},
		{"absolute path", fake + exe + " hook claude-code"},
		{"which", fake + "$(which helm) hook claude-code"},
		{"env", "env helm hook claude-code < p.json"},
		{"sh -c", `sh -c 'helm hook claude-code < p.json'`},
		{"sh -c with a substitution", `sh -c "$(which helm) hook claude-code < p.json"`},
		{"symlink name", "./h hook claude-code < p.json"},
		{"hard link, host from a variable", "./hl hook $HOST < p.json"},
		{"variable program", "H=helm; $H hook claude-code < p.json"},
		{"a copy of helm", "cp $(which helm) /tmp/x && /tmp/x hook claude-code < p.json"},
		{"global flag first", "helm --home ~/.helm hook claude-code < p.json"},
		{"hook install with another method", "helm hook install claude-code --method human"},
		{"hook uninstall", "helm hook uninstall claude-code"},
		{"a word helm cannot know", `helm "$(echo hook)" claude-code < p.json`},
		{"gemini", "helm hook gemini-cli < p.json"},
	}
	for _, tc := range denied {
		t.Run(tc.name, func(t *testing.T) {
			for _, event := range []string{"PreToolUse", "PermissionRequest"} {
				p := hookPayload("s-fake", event, map[string]any{"tool_name": "Bash", "tool_use_id": "t1", "cwd": h.Dir, "tool_input": map[string]any{"command": tc.command}})
				a := readAnswer(t, attackHook(h, 0, nil, p))
				if event == "PreToolUse" {
					assert.Equal(t, "deny", a.HookSpecificOutput.PermissionDecision, "%s", tc.command)
					assert.Contains(t, a.HookSpecificOutput.PermissionDecisionReason, "not the agent's to write")
				} else {
					assert.Equal(t, "deny", a.HookSpecificOutput.Decision.Behavior, "%s", tc.command)
				}
			}
		})
	}
	for _, command := range []string{"helm log", "helm hook status", "helm --voyage x bearing 'tests pass'", "go test ./...", "echo hook"} {
		t.Run("allowed "+command, func(t *testing.T) {
			p := hookPayload("s-fake", "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "t2", "cwd": h.Dir, "tool_input": map[string]any{"command": command}})
			a := readAnswer(t, attackHook(h, 0, nil, p))
			assert.Equal(t, "allow", a.HookSpecificOutput.PermissionDecision, "%s", command)
		})
	}
}

// TestAttackAgentCannotWriteTheRecordOrTheHooks: an edit of the hook
// settings (to change --method to human, or drop helm's hooks), of the
// session index, of the home's segments or policy, by an edit tool or a
// shell command, is denied by the built-in rule, which the home's rules
// cannot loosen; reading them is not.
func TestAttackAgentCannotWriteTheRecordOrTheHooks(t *testing.T) {
	h := newHarness(t)
	h.writeHome("policy.toml", "[[rule]]\nname = \"anything\"\ntool = \"*\"\ndecision = \"allow\"\n")
	user := h.Env["HOME"]
	index := filepath.Join(h.Home, "agents", "claude-code", "s-w")
	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		denied     bool
	}{
		{"Edit the project settings", "Edit", map[string]any{"file_path": filepath.Join(h.Dir, ".claude", "settings.json"), "old_string": "claude-code", "new_string": "human"}, true},
		{"Write the local settings", "Write", map[string]any{"file_path": filepath.Join(h.Dir, ".claude", "settings.local.json"), "content": "{}"}, true},
		{"Write the user settings", "Write", map[string]any{"file_path": filepath.Join(user, ".claude", "settings.json"), "content": "{}"}, true},
		{"Write the session index", "Write", map[string]any{"file_path": index, "content": `{"main":{"voyage":"x"}}`}, true},
		{"Edit the home's policy", "Edit", map[string]any{"file_path": filepath.Join(h.Home, "policy.toml"), "old_string": "a", "new_string": "b"}, true},
		{"Write gemini's settings", "Write", map[string]any{"file_path": filepath.Join(h.Dir, ".gemini", "settings.json"), "content": "{}"}, true},
		{"Bash redirect into the settings", "Bash", map[string]any{"command": "echo '{}' > .claude/settings.json"}, true},
		{"Bash sed -i the settings", "Bash", map[string]any{"command": "sed -i s/claude-code/human/ .claude/settings.json"}, true},
		{"Bash mv the .claude directory", "Bash", map[string]any{"command": "mv .claude /tmp/x"}, true},
		{"Bash into the session index", "Bash", map[string]any{"command": "printf x > " + index}, true},
		{"Bash rm the home", "Bash", map[string]any{"command": "rm -r " + h.Home}, true},
		{"Bash cp over a segment", "Bash", map[string]any{"command": "cp /tmp/seg " + filepath.Join(h.Home, "voyages", "v", "events", "1.seg")}, true},
		{"Bash through a variable", "Bash", map[string]any{"command": `cp x "$HOME/.claude/settings.json"`}, true},
		{"Read the settings", "Read", map[string]any{"file_path": filepath.Join(h.Dir, ".claude", "settings.json")}, false},
		{"Edit the project's code", "Edit", map[string]any{"file_path": filepath.Join(h.Dir, "main.go"), "old_string": "a", "new_string": "b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := hookPayload("s-w", "PreToolUse", map[string]any{"tool_name": tc.tool, "tool_use_id": "t1", "cwd": h.Dir, "tool_input": tc.input})
			a := readAnswer(t, attackHook(h, 0, nil, p))
			if tc.denied {
				assert.Equal(t, "deny", a.HookSpecificOutput.PermissionDecision)
				assert.Contains(t, a.HookSpecificOutput.PermissionDecisionReason, "not the agent's to write")
			} else {
				assert.Equal(t, "allow", a.HookSpecificOutput.PermissionDecision)
			}
		})
	}
}

// TestAttackSecretsInHookEventsAreNeverStored: secrets in every field of
// a hook event the agent can fill (the prompt, tool inputs with nested
// secret keys, a tool's stdout and stderr, a long output stowed as an
// artifact, a failure's error, a notification, the last message, the
// session end's reason) reach no byte under the home, raw or unpacked.
func TestAttackSecretsInHookEventsAreNeverStored(t *testing.T) {
	h := newHarness(t)
	secrets := map[string]string{
		"github": "ghp_PLANTEDhookTOKEN0123456789abcdefghijK",
		"aws":    "AKIAPLANTEDHOOK01234",
		"slack":  "xoxb-PLANTED-012345678901-abcdefghijklmnop",
		"plain":  "PLANTEDplainHookValue9876543210",
	}
	long := strings.Repeat("x\n", 40000)
	events := []string{
		hookPayload("s-sec", "UserPromptSubmit", map[string]any{"prompt": "use " + secrets["github"]}),
		hookPayload("s-sec", "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "a1", "tool_input": map[string]any{"command": "curl -H 'Authorization: Bearer " + secrets["github"] + "' x", "env": map[string]any{"api_key": secrets["plain"]}}}),
		hookPayload("s-sec", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "a1", "tool_input": map[string]any{"command": "env"},
			"tool_response": map[string]any{"stdout": "AWS_ACCESS_KEY_ID=" + secrets["aws"] + "\nAPI_KEY=" + secrets["plain"] + "\n" + long + "SLACK=" + secrets["slack"] + "\n", "stderr": "password=" + secrets["plain"]}}),
		hookPayload("s-sec", "PreToolUse", map[string]any{"tool_name": "mcp__x__y", "tool_use_id": "a2", "tool_input": map[string]any{"nested": map[string]any{"api_key": secrets["plain"], "list": []any{map[string]any{"token": secrets["plain"]}}}}}),
		hookPayload("s-sec", "PostToolUse", map[string]any{"tool_name": "mcp__x__y", "tool_use_id": "a2", "tool_input": map[string]any{}, "tool_response": map[string]any{"client_secret": secrets["plain"]}}),
		hookPayload("s-sec", "PostToolUseFailure", map[string]any{"tool_name": "Bash", "tool_use_id": "a3", "tool_input": map[string]any{"command": "x"}, "error": "failed with " + secrets["github"]}),
		hookPayload("s-sec", "Notification", map[string]any{"message": "token " + secrets["slack"], "title": "t"}),
		hookPayload("s-sec", "Stop", map[string]any{"last_assistant_message": "the key is " + secrets["aws"]}),
		hookPayload("s-sec", "SessionEnd", map[string]any{"reason": "other " + secrets["github"]}),
	}
	for _, p := range events {
		r := attackHook(h, 0, nil, p)
		require.Equal(t, 0, r.Code, "%s", r)
		require.Empty(t, r.Stderr)
	}
	raw, unpacked := storedText(t, h.Home)
	for name, s := range secrets {
		assert.NotContains(t, raw, s, name)
		assert.NotContains(t, unpacked, s, name)
	}
	assert.Contains(t, unpacked, "[REDACTED:", "the markers are there instead")
}
