package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
	"github.com/helmlog/helm/agent/internal/jsonl"
	"github.com/helmlog/helm/logbook"
)

// Transcripts: a session's own log, ~/.claude/projects/<project>/<session
// id>.jsonl (the file a hook payload's transcript_path names), read after
// the fact into the events its hooks would have sent. Built against the
// transcripts Claude Code 2.1.332 writes (captured in testdata/transcript).

// MaxLine bounds one line of a transcript (16 MiB): a longer one is an
// error naming the line.
const MaxLine = jsonl.MaxLine

// LineError is a transcript line that could not be read: its number
// (from 1) and why.
type LineError = jsonl.LineError

// ErrNotTranscript is a file that is not a Claude Code transcript: JSON
// lines without a conversation of Claude Code's, or another host's log.
var ErrNotTranscript = errors.New("not a Claude Code transcript")

// maxDepth bounds how deep subagents' transcripts are followed (a
// subagent's own subagents): far beyond what Claude Code spawns.
const maxDepth = 8

// Subagents opens the transcripts of a session's subagents, by agent id.
// An absent transcript is an error matching fs.ErrNotExist: the
// subagent's start and stop are read, its own steps are not.
type Subagents interface {
	Open(agentID string) (io.ReadCloser, error)
}

// SubagentDir is a directory of subagents' transcripts as Claude Code
// lays them out: agent-<agent id>.jsonl, with agent-<agent id>.meta.json
// beside each.
type SubagentDir string

// SubagentsOf is the directory of the subagents of the session whose
// transcript is at path: <dir>/<session id>/subagents.
func SubagentsOf(path string) SubagentDir {
	return SubagentDir(filepath.Join(strings.TrimSuffix(path, filepath.Ext(path)), "subagents"))
}

// Open opens agent-<agentID>.jsonl; an id that is not a plain name is
// refused.
func (d SubagentDir) Open(agentID string) (io.ReadCloser, error) {
	if !plainID(agentID) {
		return nil, fmt.Errorf("subagent id %q is not a plain name", agentID)
	}
	return os.Open(filepath.Join(string(d), "agent-"+agentID+".jsonl"))
}

// ByToolUse finds the subagent a tool call started, from the meta files
// beside the transcripts: its agent id and type.
func (d SubagentDir) ByToolUse(toolUseID string) (agentID, agentType string, ok bool) {
	metas, _ := filepath.Glob(filepath.Join(string(d), "agent-*.meta.json"))
	for _, m := range metas {
		data, err := os.ReadFile(m)
		if err != nil || len(data) > 1<<20 {
			continue
		}
		var meta struct {
			AgentType string `json:"agentType"`
			ToolUseID string `json:"toolUseId"`
		}
		if json.Unmarshal(data, &meta) != nil || meta.ToolUseID != toolUseID {
			continue
		}
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "agent-"), ".meta.json")
		if plainID(id) {
			return id, meta.AgentType, true
		}
	}
	return "", "", false
}

func plainID(id string) bool {
	return id != "" && len(id) <= 200 && !strings.ContainsAny(id, `/\`) && id != "." && id != ".." && !strings.ContainsRune(id, 0)
}

// Transcript reads a session's transcript from r into the events its
// hooks would have sent, in order: each prompt (Prompt), each tool call
// (PreTool, then PostTool with its response, or, for a call denied before
// it ran, a PreTool whose Tool has Failed set and Error the reason the
// agent was shown: record it with a deny decision), each subagent
// (SubagentStart, the events of its own transcript as subagents finds
// it, SubagentStop with its last message), the agent's answer at the end
// of each turn (Stop), a background task's completion (Notification) and
// each compaction (Compaction, its trigger). Each event has the time of
// its line. Each model message's usage (model and tokens, counted once
// per message id however many lines repeat it) is on the first tool call
// the message asked for, else on the turn's Stop (a subagent's:
// SubagentStop).
//
// What only hooks see (decisions, permission requests, notifications,
// session start and end) is not in a transcript. The whole of r is read
// before the first event is yielded: a line that is not JSON, longer
// than MaxLine, or not Claude Code's is an error (a *LineError naming
// it) and the only value yielded. subagents may be nil.
func Transcript(r io.Reader, subagents Subagents) iter.Seq2[agent.Event, error] {
	events, err := ReadTranscript(r, subagents)
	return func(yield func(agent.Event, error) bool) {
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// ReadTranscript is Transcript as a slice.
func ReadTranscript(r io.Reader, subagents Subagents) ([]agent.Event, error) {
	rd := &transcriptReader{subs: subagents, seen: map[string]bool{}}
	t, err := rd.read(r, "", "", 0)
	if err != nil {
		return nil, err
	}
	if t.session == "" {
		return nil, fmt.Errorf("%w: no line is a user's or the assistant's message of a session (with a sessionId)", ErrNotTranscript)
	}
	return t.events, nil
}

// tline is every field of a transcript line the reader uses.
type tline struct {
	Type               string          `json:"type"`
	Subtype            string          `json:"subtype"`
	SessionID          string          `json:"sessionId"`
	Timestamp          string          `json:"timestamp"`
	Cwd                string          `json:"cwd"`
	IsMeta             bool            `json:"isMeta"`
	IsCompactSummary   bool            `json:"isCompactSummary"`
	Message            json.RawMessage `json:"message"`
	ToolUseResult      json.RawMessage `json:"toolUseResult"`
	ToolDenialKind     string          `json:"toolDenialKind"`
	PermissionDecision *struct {
		Decision string `json:"decision"`
	} `json:"permissionDecision"`
	CompactMetadata *struct {
		Trigger string `json:"trigger"`
	} `json:"compactMetadata"`
	// Payload is a Codex CLI rollout line's: told apart by name.
	Payload json.RawMessage `json:"payload"`
}

type tmessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

type tblock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// usageOf is a message's usage, nil when it has none or is Claude Code's
// own (<synthetic>).
func (m *tmessage) usageOf() *logbook.Usage {
	if m.Usage == nil || m.Model == "<synthetic>" {
		return nil
	}
	return &logbook.Usage{Model: m.Model, InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
		CacheReadTokens: m.Usage.CacheReadInputTokens, CacheWriteTokens: m.Usage.CacheCreationInputTokens}
}

type transcriptReader struct {
	subs Subagents
	seen map[string]bool // subagents read: each once, so no transcript names itself
}

// readOne is one transcript read: its events, and what a subagent's
// hands back to its SubagentStop.
type readOne struct {
	session  string
	events   []agent.Event
	lastText string
	leftover *logbook.Usage
}

type callInfo struct {
	idx   int // of its PreTool in events
	name  string
	input json.RawMessage
}

type msgInfo struct {
	usage    *logbook.Usage // the last line's: a message's later lines may count more output
	attached bool
	text     string
}

// read reads one transcript: the session's (subagent "") or a
// subagent's, whose session is given.
func (rd *transcriptReader) read(r io.Reader, session, subagent string, depth int) (readOne, error) {
	lines, err := jsonl.Read(r, "Claude Code transcript")
	if err != nil {
		return readOne{}, err
	}
	t := readOne{session: session}
	calls := map[string]*callInfo{}
	msgs := map[string]*msgInfo{}
	var turn []string // the ids of this turn's model messages, in order
	last := ""        // the id of the turn's last model message
	base := func(kind agent.Kind, l *tline) agent.Event {
		ev := agent.Event{Agent: Agent, Kind: kind, Session: t.session, Subagent: subagent, Cwd: l.Cwd}
		if at, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
			ev.At = at
		}
		return ev
	}
	leftover := func() *logbook.Usage {
		var sum *logbook.Usage
		for _, id := range turn {
			m := msgs[id]
			if m.attached || m.usage == nil {
				continue
			}
			if sum == nil {
				sum = &logbook.Usage{}
			}
			sum.Add(*m.usage)
			m.attached = true
		}
		return sum
	}
	var lastAt *tline // the turn's last model message's line
	endTurn := func() {
		if subagent != "" || len(turn) == 0 {
			return
		}
		ev := base(agent.Stop, lastAt)
		ev.Text = msgs[last].text
		ev.Usage = leftover()
		t.events = append(t.events, ev)
		turn, last = nil, ""
	}
	for _, ln := range lines {
		var l tline
		if err := json.Unmarshal(ln.Data, &l); err != nil {
			return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: %v", ErrNotTranscript, err)}
		}
		switch {
		case l.Type == "":
			return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: the line has no type", ErrNotTranscript)}
		case l.Payload != nil && (l.Type == "session_meta" || l.Type == "response_item" || l.Type == "event_msg" || l.Type == "turn_context"):
			return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: a Codex CLI rollout line (%s)", ErrNotTranscript, l.Type)}
		}
		if l.Type != "user" && l.Type != "assistant" && l.Type != "system" {
			continue // bookkeeping: last-prompt, tools-used, api-request, attachment, ...
		}
		if l.SessionID == "" {
			return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: a %s line without a sessionId", ErrNotTranscript, l.Type)}
		}
		if t.session == "" {
			t.session = l.SessionID
		}
		if l.Type == "system" {
			if l.Subtype == "compact_boundary" {
				endTurn()
				ev := base(agent.Compaction, &l)
				if l.CompactMetadata != nil {
					ev.Text = l.CompactMetadata.Trigger
				}
				t.events = append(t.events, ev)
			}
			continue
		}
		var m tmessage
		if len(l.Message) > 0 {
			if err := json.Unmarshal(l.Message, &m); err != nil {
				return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: its message: %v", ErrNotTranscript, err)}
			}
		}
		var text string
		var blocks []tblock
		if len(m.Content) > 0 && json.Unmarshal(m.Content, &text) != nil {
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: its message's content is neither text nor a list of blocks", ErrNotTranscript)}
			}
		}
		if l.Type == "assistant" {
			if m.ID == "" {
				m.ID = fmt.Sprintf("line-%d", ln.N)
			}
			mi := msgs[m.ID]
			if mi == nil {
				mi = &msgInfo{}
				msgs[m.ID] = mi
				turn = append(turn, m.ID)
			}
			last, lastAt = m.ID, &l
			if u := m.usageOf(); u != nil {
				if mi.usage == nil {
					mi.usage = u
				} else {
					*mi.usage = *u
				}
			}
			if text != "" {
				blocks = append(blocks, tblock{Type: "text", Text: text})
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if mi.text != "" && b.Text != "" {
						mi.text += "\n\n"
					}
					mi.text += b.Text
				case "tool_use":
					input, err := hookio.Object(b.Input, "tool_use input")
					if err != nil {
						return readOne{}, &LineError{Line: ln.N, Err: fmt.Errorf("%w: tool call %s: %v", ErrNotTranscript, b.ID, err)}
					}
					ev := base(agent.PreTool, &l)
					ev.Tool = &agent.ToolCall{ID: b.ID, Name: b.Name, Input: input}
					if !mi.attached && mi.usage != nil {
						ev.Usage, mi.attached = mi.usage, true
					}
					calls[b.ID] = &callInfo{idx: len(t.events), name: b.Name, input: input}
					t.events = append(t.events, ev)
				}
			}
			continue
		}
		// A user line: a prompt, tool results, or what Claude Code adds.
		if l.IsMeta || l.IsCompactSummary {
			continue
		}
		var said []string
		if text != "" {
			said = append(said, text)
		}
		var results []tblock
		for _, b := range blocks {
			switch b.Type {
			case "text":
				said = append(said, b.Text)
			case "tool_result":
				results = append(results, b)
			}
		}
		if p := promptText(strings.Join(said, "\n\n")); p.text != "" && subagent == "" {
			endTurn()
			ev := base(p.kind, &l)
			ev.Text = p.text
			t.events = append(t.events, ev)
		}
		for _, b := range results {
			c := calls[b.ToolUseID]
			if c == nil {
				continue // a result whose call this transcript does not hold
			}
			out := resultText(b.Content)
			denied := l.ToolDenialKind != "" || l.PermissionDecision != nil && l.PermissionDecision.Decision == "reject"
			if denied {
				tc := t.events[c.idx].Tool
				tc.Failed, tc.Error = true, out
				continue
			}
			tc := &agent.ToolCall{ID: b.ToolUseID, Name: c.name, Input: c.input}
			switch {
			case b.IsError:
				tc.Failed, tc.Error = true, out
			case len(results) == 1 && hookio.Raw(l.ToolUseResult) != nil:
				tc.Response = hookio.Raw(l.ToolUseResult)
				tc.Failed, tc.Error = responseFailed(tc.Response)
			default:
				tc.Response, _ = json.Marshal(out)
			}
			if (c.name == "Agent" || c.name == "Task") && !tc.Failed {
				sub, err := rd.subagent(&t, c, b, &l, depth, base)
				if err != nil {
					return readOne{}, &LineError{Line: ln.N, Err: err}
				}
				t.events = append(t.events, sub...)
			}
			ev := base(agent.PostTool, &l)
			ev.Tool = tc
			t.events = append(t.events, ev)
		}
	}
	if subagent != "" {
		if last != "" {
			t.lastText = msgs[last].text
		}
		t.leftover = leftover()
		return t, nil
	}
	endTurn()
	return t, nil
}

// subagent returns the events of the subagent a finished Agent (Task)
// call b ran: its start, its own transcript's events, its stop.
func (rd *transcriptReader) subagent(t *readOne, c *callInfo, b tblock, l *tline, depth int, base func(agent.Kind, *tline) agent.Event) ([]agent.Event, error) {
	var res struct {
		AgentID   string `json:"agentId"`
		AgentType string `json:"agentType"`
	}
	_ = json.Unmarshal(l.ToolUseResult, &res) // a result of another shape names no agent
	id, typ := res.AgentID, res.AgentType
	if id == "" {
		if m := agentIDLine().FindStringSubmatch(resultText(b.Content)); m != nil {
			id = m[1]
		}
	}
	if finder, ok := rd.subs.(interface {
		ByToolUse(string) (string, string, bool)
	}); ok && (id == "" || typ == "") {
		if fid, ftyp, found := finder.ByToolUse(b.ToolUseID); found && (id == "" || id == fid) {
			id, typ = fid, ftyp
		}
	}
	if typ == "" {
		typ = hookio.Str(hookio.Fields(c.input), "subagent_type")
	}
	if id == "" || rd.seen[id] {
		return nil, nil
	}
	rd.seen[id] = true
	start := base(agent.SubagentStart, l)
	start.Subagent, start.SubagentType = id, typ
	stop := start
	stop.Kind = agent.SubagentStop
	events := []agent.Event{start}
	if rd.subs != nil && depth < maxDepth && plainID(id) {
		f, err := rd.subs.Open(id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("open the transcript of subagent %s: %w", id, err)
		default:
			sub, err := rd.read(f, t.session, id, depth+1)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("the transcript of subagent %s: %w", id, err)
			}
			events = append(events, sub.events...)
			stop.Text, stop.Usage = sub.lastText, sub.leftover
		}
	}
	return append(events, stop), nil
}

// agentIDLine is where an Agent call's result names its subagent when
// the line carries no toolUseResult.
var agentIDLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^agentId: ([A-Za-z0-9_-]+)`) })

// resultText is a tool_result's content as text: a string, or its text
// blocks joined.
func resultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []tblock
	if json.Unmarshal(content, &blocks) != nil {
		return hookio.JSONText(content)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type said struct {
	kind agent.Kind
	text string
}

// commandName is a slash command as a transcript keeps it.
var (
	commandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`) })
	commandArgs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`) })
)

// promptText tells what a user line said: a person's prompt, a slash
// command (its name and arguments), a background task's completion (a
// notification), or what Claude Code adds on its own (nothing).
func promptText(s string) said {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return said{}
	case strings.HasPrefix(t, "<task-notification>"):
		return said{agent.Notification, t}
	case strings.HasPrefix(t, "<local-command-"), strings.HasPrefix(t, "[Request interrupted by user"):
		return said{}
	case strings.HasPrefix(t, "<command-name>"), strings.HasPrefix(t, "<command-message>"):
		if m := commandName().FindStringSubmatch(t); m != nil {
			p := m[1]
			if a := commandArgs().FindStringSubmatch(t); a != nil {
				p += " " + a[1]
			}
			return said{agent.Prompt, strings.TrimSpace(p)}
		}
	}
	return said{agent.Prompt, s}
}
