package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/logbook"
)

// Round 2 of the recorded agent's attacks on helm hook claude-code:
// hostile session and agent ids, index edits, floods.

// TestAttackHostileSessionIDsKeepTheirOwnIndexInsideTheHome: a session id
// is the agent's to choose (Claude Code passes it on). Whatever it is, its
// index is one file of its own under <home>/agents/claude-code: never a
// path, never another session's index or lock (a session "x.lock" whose
// index replaced session x's lock file would let two hooks of x record at
// once; a session named as another's digest would take its index).
func TestAttackHostileSessionIDsKeepTheirOwnIndexInsideTheHome(t *testing.T) {
	ids := []string{"x", "x.lock", "../../x", "a/b", ".", "..", `a\b`, `C:\x`, "a\x00b", "a\nb", "séance-☃",
		strings.Repeat("s", 10<<10), "sha256-" + strings.TrimPrefix(fileName("../../x"), "sha256-"), ".index-1"}
	ids = append(ids, "X") // "x" on a file system that ignores case
	names := map[string]string{}
	for _, id := range ids {
		n := strings.ToLower(fileName(id))
		if prev, ok := names[n]; ok {
			t.Errorf("sessions %q and %q share the index %s", prev, id, n)
		}
		names[n] = id
	}
	for _, id := range ids {
		if prev, ok := names[strings.ToLower(fileName(id))+".lock"]; ok {
			t.Errorf("session %q's index is session %q's lock", prev, id)
		}
	}

	h := newHarness(t)
	for _, id := range ids {
		h.Stdin = hookPayload(id, "UserPromptSubmit", map[string]any{"prompt": "hi"})
		r := h.run("hook", "claude-code", "--as", "claude-1")
		require.Equal(t, 0, r.Code, "session %q: %s", id, r)
	}
	dir := filepath.Join(h.Home, "agents", "claude-code")
	require.NoError(t, filepath.WalkDir(filepath.Dir(h.Home), func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(p, dir) && d.Type().IsRegular() {
			assert.NotContains(t, rel, string(filepath.Separator), "%s", p)
			if strings.HasSuffix(p, ".lock") {
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Empty(t, data, "lock %s holds an index", p)
			}
		}
		return nil
	}))
	_, err := os.Stat(filepath.Join(h.Home, "..", "x"))
	assert.True(t, os.IsNotExist(err), "nothing outside the home")

	var list []struct {
		Session string `json:"session"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	assert.Len(t, list, len(ids), "one voyage per session")
	// A second event of each session goes to the same voyage.
	for _, id := range ids {
		h.Stdin = hookPayload(id, "UserPromptSubmit", map[string]any{"prompt": "again"})
		r := h.run("hook", "claude-code", "--as", "claude-1")
		require.Equal(t, 0, r.Code, "session %q: %s", id, r)
		assert.NotContains(t, r.Stderr, "a new voyage starts", "session %q", id)
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	assert.Len(t, list, len(ids), "one voyage per session")
}

// TestAttackHostileAgentIDsStayInTheIndex: a subagent's id names its
// sub-voyage in the index and its transcript beside the session's only
// when it is a plain name; nothing is written outside the home.
func TestAttackHostileAgentIDsStayInTheIndex(t *testing.T) {
	h := newHarness(t)
	tdir := t.TempDir()
	for _, id := range []string{"../../x", "a/b", "..", ".", "a\x00b", strings.Repeat("a", 10<<10)} {
		for _, ev := range []string{"SubagentStart", "PreToolUse", "SubagentStop"} {
			h.Stdin = hookPayload("s-agents", ev, map[string]any{"agent_id": id, "agent_type": "Explore", "tool_name": "Read", "tool_use_id": "t1",
				"tool_input": map[string]any{"file_path": "x"}, "transcript_path": filepath.Join(tdir, "s.jsonl"), "agent_transcript_path": filepath.Join(tdir, "s.jsonl")})
			r := h.run("hook", "claude-code", "--as", "claude-1")
			require.Equal(t, 0, r.Code, "agent %q %s: %s", id, ev, r)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(h.Home))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, "x", e.Name())
	}
	data, err := os.ReadFile(filepath.Join(h.Home, "agents", "claude-code", "s-agents"))
	require.NoError(t, err)
	assert.Less(t, len(data), 4<<10, "a completed subagent leaves nothing in the index")
}

// TestAttackEditedOffsetsStillReadTheUsage: the index's offset into the
// transcript is a number the agent can edit: a negative one, or one past
// the file's end, reads the transcript from its start, once.
func TestAttackEditedOffsetsStillReadTheUsage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset int64
	}{
		{name: "negative", offset: -100},
		{name: "past the end", offset: 1 << 62},
		{name: "most negative", offset: -1 << 63},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			transcript := filepath.Join(t.TempDir(), "s.jsonl")
			line := `{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash"}],"usage":{"input_tokens":1234,"output_tokens":56}}}` + "\n"
			require.NoError(t, os.WriteFile(transcript, []byte(line), 0o600))
			h.Stdin = bashCall("s-off", "toolu_1", "echo hi")
			h.ok("hook", "claude-code", "--as", "claude-1")
			index := filepath.Join(h.Home, "agents", "claude-code", "s-off")
			var ix sessionIndex
			data, err := os.ReadFile(index)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &ix))
			ix.Main.Offset = tc.offset
			data, err = json.Marshal(ix)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(index, data, 0o600))

			h.Stdin = hookPayload("s-off", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_1", "transcript_path": transcript,
				"tool_input": map[string]any{"command": "echo hi"}, "tool_response": map[string]any{"stdout": "hi"}})
			r := h.run("hook", "claude-code", "--as", "claude-1")
			require.Equal(t, 0, r.Code, "%s", r)
			assert.NotContains(t, r.Stderr, "usage")
			data, err = os.ReadFile(index)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &ix))
			assert.Equal(t, int64(len(line)), ix.Main.Offset)
			got := h.ok("log", "--json")
			assert.Contains(t, got, "1234", "the call's usage is recorded")
		})
	}
}

// TestAttackFloodKeepsTheIndexSmall: an agent that calls tools without
// ids (each a name of its own) and never reports a result, starts
// subagents that never stop, and writes transcripts of long ids and model
// names, does not grow its session's index without bound: each hook
// reads and writes it whole.
func TestAttackFloodKeepsTheIndexSmall(t *testing.T) {
	var ix lockedIndex
	long := strings.Repeat("m", 1<<20)
	for i := range 100_000 {
		tool := fmt.Sprintf("Tool%d-%s", i, strings.Repeat("t", 200))
		ix.Main.openCall(tool)
		ix.Main.addPending(fmt.Sprintf("toolu_%d%s", i, long[:1000]), usageOf(long))
		ix.Main.seen(fmt.Sprintf("msg_%d%s", i, long[:1000]))
		ix.Main.addTurn(usageOf(long))
	}
	for i := range 2_000 {
		ix.sub(fmt.Sprintf("agent-%d-%s", i, long[:1000])).addPending("toolu_1"+long[:1000], usageOf(long))
	}
	ix.setAgentCall(long)
	data, err := json.Marshal(&ix.sessionIndex)
	require.NoError(t, err)
	assert.Less(t, len(data), maxIndexBytes, "the index of a flooded session")
	t.Logf("index of the flooded session: %d bytes", len(data))
}

func usageOf(model string) logbook.Usage {
	return logbook.Usage{Model: model, InputTokens: 1, OutputTokens: 1}
}

// TestAttackTranscriptLongerThanAReadIsPassedOver: a transcript whose
// first line is longer than a hook reads (a sparse file of zeros, an
// output of megabytes on one line) is read MaxUsageRead bytes per hook
// and passed over: the usage written after it is read.
func TestAttackTranscriptLongerThanAReadIsPassedOver(t *testing.T) {
	h := newHarness(t)
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := os.Create(transcript)
	require.NoError(t, err)
	line := `{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash"}],"usage":{"input_tokens":1234,"output_tokens":56}}}` + "\n"
	hole := int64(claudecode.MaxUsageRead + claudecode.MaxUsageRead/4)
	_, err = f.WriteAt([]byte("\n"+line), hole)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	index := filepath.Join(h.Home, "agents", "claude-code", "s-big")
	post := hookPayload("s-big", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_1", "transcript_path": transcript,
		"tool_input": map[string]any{"command": "echo hi"}, "tool_response": map[string]any{"stdout": "hi"}})
	var offsets []int64
	for range 2 {
		h.Stdin = post
		h.ok("hook", "claude-code", "--as", "claude-1")
		var ix sessionIndex
		data, err := os.ReadFile(index)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &ix))
		offsets = append(offsets, ix.Main.Offset)
	}
	assert.Equal(t, []int64{claudecode.MaxUsageRead, hole + 1 + int64(len(line))}, offsets, "each hook reads at most MaxUsageRead bytes, and moves on")
	assert.Contains(t, h.ok("log", "--json"), "1234", "the usage after the long line is read")
}

// TestAttackTranscriptPathAtOtherFilesRecordsNothingOfThem: a
// transcript_path at the home's own files, at /proc/self/environ, at a
// directory or a symlink to one: nothing of them is recorded (only an assistant message's
// usage ever is).
func TestAttackTranscriptPathAtOtherFilesRecordsNothingOfThem(t *testing.T) {
	h := newHarness(t)
	h.Stdin = hookPayload("s-other", "UserPromptSubmit", map[string]any{"prompt": "hi"})
	h.ok("hook", "claude-code", "--as", "claude-1")
	link := filepath.Join(t.TempDir(), "dir.jsonl")
	require.NoError(t, os.Symlink(h.Home, link))
	paths := []string{"/proc/self/environ", h.Home, link, filepath.Join(h.Home, "agents", "claude-code", "s-other")}
	require.NoError(t, filepath.WalkDir(h.Home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return err
	}))
	for i, p := range paths {
		h.Stdin = hookPayload("s-other", "PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d", i), "transcript_path": p,
			"tool_input": map[string]any{"command": "true"}, "tool_response": map[string]any{"stdout": ""}})
		h.ok("hook", "claude-code", "--as", "claude-1")
		h.Stdin = hookPayload("s-other", "Stop", map[string]any{"transcript_path": p, "last_assistant_message": "done"})
		h.ok("hook", "claude-code", "--as", "claude-1")
	}
	got := h.ok("log", "--json")
	assert.NotContains(t, got, `"usage"`)
	assert.NotContains(t, got, "PATH=")
}

// TestAttackFloodOfOneSession: thousands of events of one session through
// the command (calls without ids that never report back, calls with ids
// whose results never come, subagents that never stop, each a name of its
// own; a subagent every 40 events, which starts a voyage): every hook answers, the voyage verifies, the index stays under its
// bound. CI floods 300 events (TestAttackFloodKeepsTheIndexSmall crosses
// every cap of the index without the command); HELM_HOOK_FLOOD=2000 is
// the soak (56 s with -race), -short 100.
func TestAttackFloodOfOneSession(t *testing.T) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("HELM_HOOK_FLOOD")); err == nil && v > 0 {
		n = v
	} else if testing.Short() {
		n = 100
	}
	h := newHarness(t)
	for i := range n {
		var p string
		switch i % 4 {
		case 2:
			if i%40 == 2 { // a voyage each: a few
				p = hookPayload("s-flood", "SubagentStart", map[string]any{"agent_id": fmt.Sprintf("agent-%d", i), "agent_type": "Explore"})
				break
			}
			fallthrough
		case 0:
			p = hookPayload("s-flood", "PreToolUse", map[string]any{"tool_name": fmt.Sprintf("mcp__x__t%d", i), "tool_input": map[string]any{}})
		case 1:
			p = bashCall("s-flood", fmt.Sprintf("toolu_%d", i), "true")
		default:
			p = hookPayload("s-flood", "UserPromptSubmit", map[string]any{"prompt": fmt.Sprintf("prompt %d", i)})
		}
		start := time.Now()
		r := attackHook(h, 0, nil, p)
		require.Equal(t, 0, r.Code, "event %d: %s", i, r)
		if i == n-1 {
			t.Logf("event %d: %s", i, time.Since(start))
		}
	}
	data, err := os.ReadFile(filepath.Join(h.Home, "agents", "claude-code", "s-flood"))
	require.NoError(t, err)
	assert.Less(t, len(data), maxIndexBytes)
	t.Logf("%d events: index of %d bytes", n, len(data))
	var ix sessionIndex
	require.NoError(t, json.Unmarshal(data, &ix))
	assert.LessOrEqual(t, len(ix.Subagents), maxSubagents)
	h.ok("voyage", "verify", ix.Main.Voyage)
}

// TestAttackParallelHookProcessesOfANewSession: 30 hook processes of a
// brand-new session at once start one voyage and record every step.
func TestAttackParallelHookProcessesOfANewSession(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 10
	}
	h := newHarness(t)
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			out, errOut, err := hookProcess(h.Home, h.Dir, bashCall("parallel-30", fmt.Sprintf("toolu_%d", i), fmt.Sprintf("echo %d", i)))
			if err != nil || out != "" || errOut != "" {
				errs[i] = fmt.Sprintf("hook %d: %v\nstdout: %s\nstderr: %s", i, err, out, errOut)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		assert.Empty(t, e)
	}
	var list []struct {
		ID      string `json:"id"`
		Session string `json:"session"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "list", "--status", "all", "--json")), &list))
	require.Len(t, list, 1, "one voyage for the session")
	assert.Equal(t, "claude-code:parallel-30", list[0].Session)
	story := h.ok("log", "--voyage", list[0].ID)
	for i := range n {
		assert.Contains(t, story, fmt.Sprintf("Bash: echo %d\n", i))
	}
	h.ok("voyage", "verify", list[0].ID)
}

// TestAttackPayloadAtTheSizeBound: a payload of exactly MaxPayload bytes
// is read; one byte more is refused with exit 2 (which blocks a call),
// nothing recorded.
func TestAttackPayloadAtTheSizeBound(t *testing.T) {
	h := newHarness(t)
	frame := `{"session_id":"s-size","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"echo "},"pad":""}`
	at := strings.Replace(frame, `"pad":""`, `"pad":"`+strings.Repeat("a", claudecode.MaxPayload-len(frame))+`"`, 1)
	require.Len(t, at, claudecode.MaxPayload)
	r := attackHook(h, 0, nil, at)
	assert.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, h.ok("log"), "Bash: echo")

	over := strings.Replace(at, `"s-size"`, `"s-over"`, 1) + " "
	require.Len(t, over, claudecode.MaxPayload+1)
	r = attackHook(h, 0, nil, over)
	assert.Equal(t, 2, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "larger than")
	_, err := os.Stat(filepath.Join(h.Home, "agents", "claude-code", "s-over"))
	assert.True(t, os.IsNotExist(err), "nothing recorded")
}

// TestAttackCwdOutsideTheProjectDoesNotMoveIt: the payload's cwd follows
// the agent's cd. When the host's CLAUDE_PROJECT_DIR is not set, the
// project is the directory the host ran the hook in, never the payload's
// cwd: an agent that went to / still reads outside the project.
func TestAttackCwdOutsideTheProjectDoesNotMoveIt(t *testing.T) {
	h := newHarness(t)
	h.writeHome("policy.toml", "[[rule]]\nname = \"stay in the project\"\ntool = \"Read|Bash\"\npath = \"outside-project\"\ndecision = \"deny\"\n")
	delete(h.Env, "CLAUDE_PROJECT_DIR")
	outside := t.TempDir()
	for _, tc := range []struct {
		name, cwd string
	}{
		{name: "the root", cwd: "/"},
		{name: "the file's directory", cwd: outside},
		{name: "the project's parent", cwd: filepath.Dir(h.Dir)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := hookPayload("s-cwd", "PreToolUse", map[string]any{"cwd": tc.cwd, "tool_name": "Read", "tool_use_id": "t1",
				"tool_input": map[string]any{"file_path": filepath.Join(outside, "secret")}})
			a := readAnswer(t, attackHook(h, 0, nil, p))
			assert.Equal(t, "deny", a.HookSpecificOutput.PermissionDecision, "%+v", a)
		})
	}
}

// TestAttackEmptySessionIDIsRefused: a payload without a session id is
// bad input (exit 2, which blocks a call): nothing is written.
func TestAttackEmptySessionIDIsRefused(t *testing.T) {
	h := newHarness(t)
	r := attackHook(h, 0, nil, bashCall("", "t1", "echo hi"))
	assert.Equal(t, 2, r.Code, "%s", r)
	_, err := os.Stat(filepath.Join(h.Home, "agents"))
	assert.True(t, os.IsNotExist(err), "no index")
}
