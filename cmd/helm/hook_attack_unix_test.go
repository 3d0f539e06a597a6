//go:build unix

package main

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/durable"
)

// TestAttackHookRefusesFIFOs: a FIFO where the hook reads (the home's
// policy.toml or config.toml, a transcript_path) held the hook until the
// host's timeout let the denied call run, or let the stop go; the hook
// now refuses any file that is not regular and answers at once (no
// deadline set: the real one, 10 s, is not what answers).
func TestAttackHookRefusesFIFOs(t *testing.T) {
	rmrf := func(h *harness) string {
		return hookPayload("s-fifo", "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "t1", "cwd": h.Dir, "tool_input": map[string]any{"command": "rm -rf build"}})
	}
	for _, file := range []string{"policy.toml", "config.toml"} {
		t.Run(file, func(t *testing.T) {
			h := newHarness(t)
			h.writeHome("policy.toml", attackPolicy)
			require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
			require.NoError(t, syscall.Mkfifo(filepath.Join(h.Home, file), 0o600))
			a := readAnswer(t, attackHook(h, 0, nil, rmrf(h)))
			assert.Equal(t, "deny", a.HookSpecificOutput.PermissionDecision)
			assert.Contains(t, a.HookSpecificOutput.PermissionDecisionReason, "not a regular file (FIFO)")
		})
	}
	t.Run("transcript", func(t *testing.T) {
		h := newHarness(t)
		h.writeHome("policy.toml", attackPolicy)
		fifo := filepath.Join(h.Dir, "t.jsonl")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		edit := hookPayload("s-fifo", "PostToolUse", map[string]any{"tool_name": "Edit", "tool_use_id": "e1", "transcript_path": fifo,
			"tool_input": map[string]any{"file_path": filepath.Join(h.Dir, "a.go"), "old_string": "a", "new_string": "b"}, "tool_response": map[string]any{}})
		r := attackHook(h, 0, nil, edit)
		require.Equal(t, 0, r.Code, "%s", r)
		stop := hookPayload("s-fifo", "Stop", map[string]any{"transcript_path": fifo, "last_assistant_message": "done"})
		a := readAnswer(t, attackHook(h, 0, nil, stop))
		assert.Equal(t, "block", a.Decision, "the gate holds: go test never ran after the edit")
	})
}

// TestAttackHookAnswersWhenTheHomeIsLocked: the agent holds a lock of the
// home (the index's, the writers', the session's voyage's) that the hook
// needs to record; the hook held on until the host's timeout let the
// denied call run. Now it decides before it takes any lock and answers by
// its deadline (here short: the work is blocked by construction), as it
// decided: the rm -rf is denied, an allowed call allowed, and a stop the
// gate decided is held.
func TestAttackHookAnswersWhenTheHomeIsLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		lock func(h *harness) string
	}{
		{"index", func(h *harness) string { return filepath.Join(h.Home, "index.lock") }},
		{"writers", func(h *harness) string { return filepath.Join(h.Home, "index.writers") }},
		{"session lock", func(h *harness) string { return filepath.Join(h.Home, "agents", "claude-code", "s-lock.lock") }},
		{"voyage", func(h *harness) string {
			dirs, err := filepath.Glob(filepath.Join(h.Home, "voyages", "*", "events", "LOCK"))
			require.NoError(h.t, err)
			require.Len(h.t, dirs, 1)
			return dirs[0]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.writeHome("policy.toml", "[[rule]]\nname = \"ls\"\ntool = \"Bash\"\ncommand = \"ls\"\ndecision = \"allow\"\n\n"+attackPolicy)
			call := func(id, command string) string {
				return hookPayload("s-lock", "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": id, "cwd": h.Dir, "tool_input": map[string]any{"command": command}})
			}
			readAnswer(t, attackHook(h, 0, nil, hookPayload("s-lock", "UserPromptSubmit", map[string]any{"prompt": "go"})))
			readAnswer(t, attackHook(h, 0, nil, hookPayload("s-lock", "PostToolUse", map[string]any{"tool_name": "Edit", "tool_use_id": "e1",
				"tool_input": map[string]any{"file_path": filepath.Join(h.Dir, "a.go"), "old_string": "a", "new_string": "b"}, "tool_response": map[string]any{}})))

			l, err := durable.OpenLock(tc.lock(h))
			require.NoError(t, err)
			ok, err := l.TryLock()
			require.NoError(t, err)
			require.True(t, ok)
			var wg sync.WaitGroup
			t.Cleanup(func() { // before the home is removed: the hooks' work ends once the lock is free
				_ = l.Unlock()
				_ = l.Close()
				wg.Wait()
			})
			const deadline = 300 * time.Millisecond
			r := attackHook(h, deadline, &wg, call("t1", "rm -rf build"))
			a := readAnswer(t, r)
			assert.Equal(t, "deny", a.HookSpecificOutput.PermissionDecision, "%s", r)
			assert.Contains(t, a.HookSpecificOutput.PermissionDecisionReason, `"no rm -rf"`)

			a = readAnswer(t, attackHook(h, deadline, &wg, call("t2", "ls")))
			assert.Equal(t, "allow", a.HookSpecificOutput.PermissionDecision)

			a = readAnswer(t, attackHook(h, deadline, &wg, call("t3", "echo $(cat x)")))
			assert.NotEqual(t, "allow", a.HookSpecificOutput.PermissionDecision)
		})
	}
}
