package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/stretchr/testify/require"
)

// hookEvents are the hook events Claude Code's settings take; the
// capture installs a hook for each, so whatever 2.1.332 fires in the
// scripted session is seen.
var hookEvents = []string{
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
	"PermissionRequest", "PermissionDenied", "Notification",
	"UserPromptSubmit", "UserPromptExpansion", "Stop", "StopFailure",
	"SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
	"Elicitation", "ElicitationResult", "TeammateIdle", "TaskCreated",
	"TaskCompleted", "Setup", "InstructionsLoaded", "CwdChanged",
	"FileChanged", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
	"SessionStart", "SessionEnd", "PreModelSwitch", "PostModelSwitch",
	"MessageDisplay", "DirectoryAdded",
}

// captureHook is the hook command of the capture: it appends the payload
// (one line of JSON) to events.jsonl, and denies the scripted rm by
// printing PreToolUse's deny decision.
const captureHook = `#!/bin/sh
payload=$(cat)
printf '%s\n' "$payload" >> "$(dirname "$0")/events.jsonl"
if [ "$1" = PreToolUse ]; then
  case "$payload" in
  *'"rm -r -f victim"'*)
    printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + scriptDenyReason + `"}}'
    ;;
  esac
fi
exit 0
`

// installCaptureHooks writes the capture's hook program into dir and a
// .claude/settings.json into project that runs it for every event.
func installCaptureHooks(t *testing.T, project, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	prog := filepath.Join(dir, "hook.sh")
	require.NoError(t, os.WriteFile(prog, []byte(captureHook), 0o755))
	hooks := map[string]any{}
	for _, ev := range hookEvents {
		hooks[ev] = []any{map[string]any{
			"matcher": "*",
			"hooks":   []any{map[string]any{"type": "command", "command": prog + " " + ev, "timeout": 30}},
		}}
	}
	data, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".claude", "settings.json"), data, 0o644))
}

// update rewrites the goldens under testdata/claudecode from a real run
// (go test -run ClaudeCodeHookPayloads -update, HELM_CLAUDE_CODE set).
var update = flag.Bool("update", false, "rewrite the goldens under testdata/claudecode from a real Claude Code run")

const claudeGoldens = "testdata/claudecode"

// TestClaudeCodeHookPayloadsAreCaptured runs the scripted session with a
// hook for every event that saves its payload, and compares the payloads
// and the session's transcripts (placeholders for the temporary paths,
// ids and times) with the goldens under testdata/claudecode: the real
// schema of Claude Code 2.1.332 that helm's adapter parses.
func TestClaudeCodeHookPayloadsAreCaptured(t *testing.T) {
	program := findClaudeCode(t)
	var capture string
	s := runScriptedSession(t, program, scriptDenyReason, func(s *claudeSession) {
		capture = filepath.Join(s.root, "capture")
		installCaptureHooks(t, s.project, capture)
	})

	payloads := readPayloads(t, filepath.Join(capture, "events.jsonl"))
	transcript := s.transcriptDir()
	main := filepath.Join(transcript, scriptSessionID+".jsonl")
	for _, p := range payloads {
		assert.Equal(t, scriptSessionID, p.fields["session_id"], "%s: session_id", p.event)
		assert.Equal(t, main, p.fields["transcript_path"], "%s: transcript_path is the session's file", p.event)
		assert.Equal(t, s.project, p.fields["cwd"], "%s: cwd", p.event)
	}

	// What the scripted session must fire, in this order (other events
	// may come between: they are in the goldens).
	var seen []string
	for _, p := range payloads {
		seen = append(seen, p.event+tool(p))
	}
	assert.Subset(t, seen, []string{
		"SessionStart", "UserPromptSubmit",
		"PreToolUse:Bash", "PostToolUse:Bash", "PreToolUse:Read", "PostToolUse:Read",
		"PreToolUse:Edit", "PostToolUse:Edit", "PreToolUse:Write", "PostToolUse:Write",
		"PreToolUse:Agent", "SubagentStart", "SubagentStop", "PostToolUse:Agent",
		"Stop", "SessionEnd",
	})
	assert.Equal(t, 2, count(seen, "SessionStart"), "a start and a resume")
	assert.Equal(t, 2, count(seen, "SessionEnd"))
	assert.Equal(t, 7, countPrefix(seen, "PreToolUse:"), "a PreToolUse for each call: 6 of the parent's, 1 of the subagent's")
	assert.Equal(t, 6, countPrefix(seen, "PostToolUse:"), "a PostToolUse for each call that ran: none for the denied one")
	assert.Equal(t, 3, count(seen, "PreToolUse:Bash"), "ls, the subagent's wc and the denied rm")
	assert.Equal(t, 2, count(seen, "PostToolUse:Bash"), "ls and wc ran; the denied rm has no PostToolUse")
	var fired, never []string
	for _, ev := range hookEvents {
		if count(seen, ev) > 0 || countPrefix(seen, ev+":") > 0 {
			fired = append(fired, ev)
		} else {
			never = append(never, ev)
		}
	}
	t.Logf("events fired: %v; never fired in this session: %v", fired, never)

	// The subagent's transcript lives beside the session's, under
	// <session>/subagents/agent-<agent_id>.jsonl with a .meta.json.
	agentID := subagentID(t, payloads)
	sub := filepath.Join(transcript, scriptSessionID, "subagents", "agent-"+agentID)
	require.FileExists(t, sub+".jsonl", "2.1.332 writes the subagent's transcript beside the session's")
	for _, p := range payloads {
		if p.event == "SubagentStop" {
			assert.Equal(t, sub+".jsonl", p.fields["agent_transcript_path"], "SubagentStop names it")
		}
	}

	n := newNormaliser(s.claudeSession)
	got := map[string][]byte{}
	index := map[string]int{}
	for _, p := range payloads {
		index[p.event]++
		name := fmt.Sprintf("hooks/%s-%d.json", p.event, index[p.event])
		var out bytes.Buffer
		require.NoError(t, json.Indent(&out, n.text(p.raw), "", "  "))
		out.WriteByte('\n')
		got[name] = out.Bytes()
	}
	// In this order: the placeholders are numbered by first appearance.
	for _, f := range []struct{ name, path string }{
		{"transcript/session.jsonl", main},
		{"transcript/subagent.jsonl", sub + ".jsonl"},
		{"transcript/subagent.meta.json", sub + ".meta.json"},
	} {
		data, err := os.ReadFile(f.path)
		require.NoError(t, err)
		if strings.HasSuffix(f.name, ".jsonl") {
			data = canonicalOrder(t, data)
		}
		got[f.name] = n.text(data)
	}
	for name, data := range got {
		if strings.HasSuffix(name, ".jsonl") {
			for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				require.True(t, json.Valid(line), "%s:%d is JSON after normalising: %s", name, i+1, line)
			}
		} else {
			require.True(t, json.Valid(data), "%s is JSON after normalising", name)
		}
	}
	// Each directory's goldens on their own: -update rewrites a
	// directory whole, and testdata/claudecode holds others' too.
	byDir := map[string]map[string][]byte{}
	for name, data := range got {
		dir, file, _ := strings.Cut(name, "/")
		if byDir[dir] == nil {
			byDir[dir] = map[string][]byte{}
		}
		byDir[dir][file] = data
	}
	for _, dir := range []string{"hooks", "transcript"} {
		compareGoldens(t, filepath.Join(claudeGoldens, dir), byDir[dir])
	}
}

func tool(p payload) string {
	if name, ok := p.fields["tool_name"].(string); ok {
		return ":" + name
	}
	return ""
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, x := range list {
		if strings.HasPrefix(x, prefix) {
			n++
		}
	}
	return n
}

// canonicalOrder puts a transcript's lines in an order that is the same
// every run: the conversation's entries (those with a uuid: messages,
// tool results, attachments, chained by parentUuid) as the file has them,
// then the bookkeeping lines Claude Code writes beside them on its own
// schedule (last-prompt, tools-used, api-request, cost-state…): the last
// of each type, the types sorted. Where a bookkeeping line falls between
// entries, and how many of a type are written (atis-latch, cost-state),
// differ from run to run on a busy machine; nothing a reader needs
// depends on them.
func canonicalOrder(t *testing.T, data []byte) []byte {
	t.Helper()
	var entries, other [][]byte
	var types []string
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var head struct {
			Type string  `json:"type"`
			UUID *string `json:"uuid"`
		}
		require.NoError(t, json.Unmarshal(line, &head), "a transcript line is JSON: %s", line)
		if head.UUID != nil {
			entries = append(entries, line)
			continue
		}
		other = append(other, line)
		types = append(types, head.Type)
	}
	last := map[string][]byte{}
	for i, typ := range types {
		last[typ] = other[i]
	}
	names := make([]string, 0, len(last))
	for typ := range last {
		names = append(names, typ)
	}
	sort.Strings(names)
	for _, typ := range names {
		entries = append(entries, last[typ])
	}
	return append(bytes.Join(entries, []byte("\n")), '\n')
}

// payload is one hook payload as the hook read it on stdin.
type payload struct {
	event  string
	raw    []byte
	fields map[string]any
}

// readPayloads reads the capture's payloads in the order the hooks ran.
func readPayloads(t *testing.T, path string) []payload {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "the capture hook ran")
	defer f.Close()
	var out []payload
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		p := payload{raw: append([]byte(nil), sc.Bytes()...)}
		require.NoError(t, json.Unmarshal(p.raw, &p.fields), "a payload is one line of JSON: %s", p.raw)
		p.event, _ = p.fields["hook_event_name"].(string)
		require.NotEmpty(t, p.event, "a payload names its event: %s", p.raw)
		out = append(out, p)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// subagentID returns the agent_id SubagentStart gave the one subagent.
func subagentID(t *testing.T, payloads []payload) string {
	t.Helper()
	var ids []string
	for _, p := range payloads {
		if p.event == "SubagentStart" {
			id, _ := p.fields["agent_id"].(string)
			ids = append(ids, id)
		}
	}
	require.Len(t, ids, 1, "one subagent started")
	require.NotEmpty(t, ids[0])
	return ids[0]
}

// normaliser replaces what differs between two runs of the same script
// with placeholders: the temporary paths (<root>, <home>, <tmp>,
// <project>, and <project-key>, the project's directory under
// ~/.claude/projects), random ids (<uuid-N>, <agent-N>, <hash-N>:
// numbered by first appearance, so the same id is the same placeholder
// in every file), times and dates (<time>, <date>; durations and epoch
// milliseconds become 0) and the kernel's release (<os-release>). The
// session's id is fixed by the test and stays.
type normaliser struct {
	paths  *strings.Replacer
	ids    map[string]string
	counts map[string]int
}

func newNormaliser(s *claudeSession) *normaliser {
	pairs := []string{
		projectKey(s.project), "<project-key>",
		s.project, "<project>",
		s.home, "<home>",
		s.tmp, "<tmp>",
		s.root, "<root>",
	}
	// Today's date (the run may cross midnight, in either zone).
	now := time.Now()
	for _, d := range []time.Time{now, now.UTC(), now.Add(-time.Hour), now.UTC().Add(-time.Hour)} {
		pairs = append(pairs, d.Format("2006-01-02"), "<date>")
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil && len(bytes.TrimSpace(rel)) > 0 {
		pairs = append(pairs, string(bytes.TrimSpace(rel)), "<os-release>")
	}
	return &normaliser{paths: strings.NewReplacer(pairs...), ids: map[string]string{}, counts: map[string]int{}}
}

var (
	// last-prompt's leafUuid: the newest entry when Claude Code wrote
	// the line, which depends on timing.
	reLeaf      = regexp.MustCompile(`"leafUuid":"[^"]*"`)
	reTimestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	reUUID      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reAgentID   = regexp.MustCompile(`\ba[0-9a-f]{16}\b`)
	reHash      = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	reClaudeTmp = regexp.MustCompile(`<tmp>/claude-\d+`)
	// A number under a key that names a time, a duration or an instant.
	reTimeKey = regexp.MustCompile(`"([A-Za-z_]*(?:[Dd]uration|Ms|_ms|[Tt]ime|[Ss]econds)[A-Za-z_]*)":\s*-?\d+(?:\.\d+)?`)
	// The same in text: the usage note a subagent's result carries.
	reTimeText = regexp.MustCompile(`(duration_ms: )\d+`)
)

func (n *normaliser) id(kind, v string) string {
	if v == scriptSessionID {
		return v
	}
	if p, ok := n.ids[v]; ok {
		return p
	}
	n.counts[kind]++
	p := fmt.Sprintf("<%s-%d>", kind, n.counts[kind])
	n.ids[v] = p
	return p
}

func (n *normaliser) text(data []byte) []byte {
	s := reLeaf.ReplaceAllString(string(data), `"leafUuid":"<leaf>"`)
	s = reTimestamp.ReplaceAllString(s, "<time>")
	s = n.paths.Replace(s)
	s = reClaudeTmp.ReplaceAllString(s, "<tmp>/claude-<uid>")
	s = reUUID.ReplaceAllStringFunc(s, func(v string) string { return n.id("uuid", v) })
	s = reAgentID.ReplaceAllStringFunc(s, func(v string) string { return n.id("agent", v) })
	s = reHash.ReplaceAllStringFunc(s, func(v string) string { return n.id("hash", v) })
	s = reTimeKey.ReplaceAllString(s, `"$1":0`)
	s = reTimeText.ReplaceAllString(s, "${1}0")
	return []byte(s)
}

// compareGoldens compares got (name → content) with the files under dir,
// or with -update writes them (removing goldens no longer produced).
func compareGoldens(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	var have []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			have = append(have, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(have)
	if *update {
		for _, name := range have {
			if _, ok := got[name]; !ok {
				require.NoError(t, os.Remove(filepath.Join(dir, name)))
			}
		}
		for _, name := range names {
			path := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, got[name], 0o644))
		}
		t.Logf("wrote %d goldens under %s", len(names), dir)
		return
	}
	assert.Equal(t, have, names, "the files the run produced are the goldens' (go test -run %s -update rewrites them)", t.Name())
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			continue // reported above
		}
		wl := strings.Split(string(want), "\n")
		gl := strings.Split(string(got[name]), "\n")
		for i := 0; i < len(wl) || i < len(gl); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if !assert.Equal(t, w, g, "%s line %d differs from the golden (go test -run %s -update rewrites it)", name, i+1, t.Name()) {
				break
			}
		}
	}
}
