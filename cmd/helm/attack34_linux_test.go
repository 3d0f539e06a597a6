//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/tamper"
	"github.com/helmlog/helm/projection"
)

// Issue 34, attack round, on a pseudo-terminal (runOnTerminal is
// Linux's): see attack34_test.go.

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

// TestAttackForgedTimesOnATerminal: the agent forges its entries' times
// (the log rewritten with helm's own writer, the caches dropped): one in
// the far future, one at the start of the calendar. helm log on a
// terminal, with relative times, neither crashes nor turns them into a
// plausible "N ago": each is shown as the absolute time it claims.
func TestAttackForgedTimesOnATerminal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	agentEnv(h)
	id := strings.TrimSpace(h.ok("voyage", "new", "fix the parser"))
	h.at(1)
	h.ok("note", "first")
	h.at(2)
	h.ok("note", "second")
	h.at(3)
	forged := map[int]time.Time{
		1: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		2: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
	}
	require.NoError(t, tamper.Edit(ctx, h.Home, id, func(r tamper.Record) []byte {
		e, err := projection.Decode(r.Data)
		if err != nil || e.Type != projection.NoteAdded {
			return r.Data // a blob, or another event
		}
		e.At = forged[e.N]
		b, err := projection.Encode(e)
		require.NoError(t, err)
		return b
	}))
	require.NoError(t, tamper.DropCaches(h.Home, id))

	env := map[string]string{}
	for k, v := range h.Env {
		env[k] = v
	}
	env["HELM_PAGER"] = "cat"
	got, _ := runOnTerminal(t, h, env, "log")
	t.Logf("the terminal showed:\n%s", got)
	assert.Contains(t, got, "9999-12-31T23:59:59Z", "a time to come is shown as it is")
	assert.Contains(t, got, "0001-01-01T00:00:01Z", "a time before relative times make sense is shown as it is")
	assert.NotContains(t, got, "292 years ago", "not the longest duration Go can count")
}
