package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The model stand-in: a loopback server answering the Anthropic Messages
// API (POST /v1/messages, streamed as server-sent events or plain JSON,
// and /v1/messages/count_tokens) from a fixed script, so the real Claude
// Code CLI runs a session offline and the same way every time. It
// records every request body so a test can check what the model was
// sent (a denied call's tool_result, say).

// Who a request to the model is from: the session's own agent, or a
// subagent it started with the Agent tool. A subagent's requests reach
// the same endpoint, between the parent's.
const (
	roleMain     = "main"
	roleSubagent = "subagent"
	// roleUtility: a request that offers no tools (a title, a summary,
	// a check Claude Code makes on the side); it is not scripted.
	roleUtility = "utility"
)

// modelTurn is one scripted answer: text, tool_use blocks, or both (the
// text first). A turn with tool_use blocks stops with stop_reason
// tool_use, one with only text with end_turn.
type modelTurn struct {
	Role  string // roleMain or roleSubagent: whose request it answers
	Text  string
	Tools []toolUse
}

// toolUse is a tool_use block: its id is fixed by the script, so hook
// payloads and transcripts carry the same ids on every run.
type toolUse struct {
	ID    string
	Name  string
	Input map[string]any
}

// Fixed token counts on every answer: non-zero, so a recorder can pick
// tokens up from the transcript, and the same every run.
const (
	usageInput       = 1200
	usageOutput      = 34
	usageCacheRead   = 800
	usageCacheCreate = 50
)

// modelRequest is one request the stand-in received.
type modelRequest struct {
	Path string
	Role string
	Body json.RawMessage
	// Decoded parts of a Messages request.
	Model    string
	Stream   bool
	Tools    []string
	System   string
	Messages []apiMessage
	// Turn is the scripted turn served (-1: none).
	Turn int
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// apiBlock is a content block of a message (the fields this test reads).
type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// blocks returns a message's content blocks (a plain string is one text
// block).
func (m apiMessage) blocks() []apiBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []apiBlock{{Type: "text", Text: s}}
	}
	var bs []apiBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// text returns a tool_result's content as text (a string, or the text
// blocks joined).
func (b apiBlock) text() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var bs []apiBlock
	_ = json.Unmarshal(b.Content, &bs)
	var out []string
	for _, c := range bs {
		out = append(out, c.Text)
	}
	return strings.Join(out, "\n")
}

// toolResult returns the tool_result block for the tool_use id in the
// request's messages, and whether there is one.
func (r modelRequest) toolResult(id string) (apiBlock, bool) {
	for _, m := range r.Messages {
		for _, b := range m.blocks() {
			if b.Type == "tool_result" && b.ToolUseID == id {
				return b, true
			}
		}
	}
	return apiBlock{}, false
}

// modelServer serves a script. Each role has its own queue of turns, so
// a subagent's requests may come between the parent's in any order the
// host chooses.
type modelServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	queues   map[string][]int // role → indexes of the script's turns not yet served
	script   []modelTurn
	requests []modelRequest
	problems []string // what went wrong serving: the test fails on any
	msgs     int
}

// newModelServer starts the stand-in on loopback for t's duration.
func newModelServer(t *testing.T, script []modelTurn) *modelServer {
	t.Helper()
	m := &modelServer{script: script, queues: map[string][]int{}}
	for i, turn := range script {
		if turn.Role != roleMain && turn.Role != roleSubagent {
			t.Fatalf("turn %d: role %q is neither %q nor %q", i, turn.Role, roleMain, roleSubagent)
		}
		m.queues[turn.Role] = append(m.queues[turn.Role], i)
	}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the base URL to give Claude Code as ANTHROPIC_BASE_URL.
func (m *modelServer) URL() string { return m.srv.URL }

// Requests returns the requests received so far.
func (m *modelServer) Requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.requests...)
}

// Unserved returns the scripted turns not served yet, and what went
// wrong serving (a request no turn was left for, a body that did not
// decode).
func (m *modelServer) Unserved() (left []string, problems []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for role, q := range m.queues {
		for _, i := range q {
			left = append(left, fmt.Sprintf("turn %d (%s)", i, role))
		}
	}
	return left, append([]string(nil), m.problems...)
}

func (m *modelServer) problem(format string, args ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	defer m.mu.Unlock()
	req := modelRequest{Path: r.URL.Path, Body: body, Turn: -1}
	defer func() { m.requests = append(m.requests, req) }()

	if r.Method != http.MethodPost {
		m.problem("%s %s: not a POST", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	switch r.URL.Path {
	case "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": usageInput})
		return
	case "/v1/messages":
	default:
		m.problem("POST %s: not an endpoint of the stand-in", r.URL.Path)
		http.NotFound(w, r)
		return
	}

	var in struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []apiMessage    `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		m.problem("POST /v1/messages: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Model, req.Stream, req.Messages = in.Model, in.Stream, in.Messages
	req.System = systemText(in.System)
	for _, tool := range in.Tools {
		req.Tools = append(req.Tools, tool.Name)
	}
	req.Role = classify(req)

	turn := modelTurn{Text: "ok"}
	if req.Role != roleUtility {
		q := m.queues[req.Role]
		if len(q) == 0 {
			m.problem("request %d (%s): no scripted turn left", len(m.requests), req.Role)
			turn = modelTurn{Text: "The script has no turn left for this request."}
		} else {
			req.Turn = q[0]
			turn = m.script[q[0]]
			m.queues[req.Role] = q[1:]
		}
	}
	m.msgs++
	id := fmt.Sprintf("msg_stand_in_%03d", m.msgs)
	if req.Stream {
		writeStream(w, id, in.Model, turn)
	} else {
		writeJSON(w, message(id, in.Model, turn))
	}
}

// classify tells whose request it is. Claude Code 2.1.332 marks a
// subagent's requests in the billing line that opens the system prompt
// (cc_is_subagent=true); a subagent is also offered fewer tools (no
// ListAgents, no Workflow), but the mark says it outright. A request
// offering no tools is a side request.
func classify(r modelRequest) string {
	if len(r.Tools) == 0 {
		return roleUtility
	}
	first, _, _ := strings.Cut(r.System, "\n")
	if strings.Contains(first, "cc_is_subagent=true") {
		return roleSubagent
	}
	return roleMain
}

// systemText flattens the system prompt (a string or text blocks).
func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []apiBlock
	_ = json.Unmarshal(raw, &bs)
	var out []string
	for _, b := range bs {
		out = append(out, b.Text)
	}
	return strings.Join(out, "\n")
}

func usageStart() map[string]any {
	return map[string]any{
		"input_tokens":                usageInput,
		"output_tokens":               1,
		"cache_read_input_tokens":     usageCacheRead,
		"cache_creation_input_tokens": usageCacheCreate,
	}
}

func stopReason(turn modelTurn) string {
	if len(turn.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// contentBlocks returns the turn's blocks as the API gives them whole.
func contentBlocks(turn modelTurn) []map[string]any {
	var out []map[string]any
	if turn.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, tu := range turn.Tools {
		out = append(out, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": tu.Input})
	}
	return out
}

// message is the non-streamed answer.
func message(id, model string, turn modelTurn) map[string]any {
	u := usageStart()
	u["output_tokens"] = usageOutput
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content":     contentBlocks(turn),
		"stop_reason": stopReason(turn), "stop_sequence": nil,
		"usage": u,
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeStream answers as server-sent events, as the API streams a
// message: message_start, each block's start, delta and stop,
// message_delta with the stop reason and usage, message_stop.
func writeStream(w http.ResponseWriter, id, model string, turn modelTurn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": usageStart(),
	}})
	for i, b := range contentBlocks(turn) {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(turn), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usageOutput},
	})
	event("message_stop", map[string]any{})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
