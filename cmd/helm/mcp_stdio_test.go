package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawMCP is helm mcp on in-process standard input and output, driven a
// line at a time as a host that writes its own JSON does.
type rawMCP struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte
	done   chan result
	stderr *lockedBuffer
}

// startRawMCP starts helm mcp with args in h's home and initializes the
// session.
func startRawMCP(t *testing.T, h *harness, args ...string) *rawMCP {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawMCP{t: t, in: inW, lines: make(chan []byte, 16), done: make(chan result, 1), stderr: &lockedBuffer{}}
	go func() {
		err := h.main().Run(context.Background(), append([]string{"mcp"}, args...), inR, outW, s.stderr)
		outW.Close()
		s.done <- result{Code: ReportError(s.stderr, err), Err: err}
	}()
	go func() {
		defer close(s.lines)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			s.lines <- line
		}
	}()
	t.Cleanup(func() { inW.Close(); inR.Close(); outR.Close() })
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	assert.Contains(t, s.recvObject(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawMCP) send(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(s.t, err, "helm mcp reads on: %s", s.stderr.String())
}

// recv returns the next line helm mcp writes; it fails the test when the
// session ended instead.
func (s *rawMCP) recv() []byte {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		require.True(s.t, ok, "helm mcp ended the session: %s", s.stderr.String())
		return line
	case <-time.After(mcpWait):
		s.t.Fatalf("helm mcp said nothing in %s", mcpWait)
		return nil
	}
}

func (s *rawMCP) recvObject() map[string]any {
	s.t.Helper()
	line := s.recv()
	var m map[string]any
	require.NoError(s.t, json.Unmarshal(line, &m), "%s", line)
	return m
}

// until sends a tools/list with id, and returns what helm mcp wrote
// before its answer, requiring that answer: the session went on.
func (s *rawMCP) until(id string) [][]byte {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list"}`)
	var before [][]byte
	for {
		line := s.recv()
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["id"] == id {
			assert.Contains(s.t, m, "result", "tools/list after: %s", line)
			return before
		}
		before = append(before, line)
	}
}

// close ends the session as a host does, and requires helm mcp to end
// with status 0.
func (s *rawMCP) close() result {
	s.t.Helper()
	require.NoError(s.t, s.in.Close())
	select {
	case r := <-s.done:
		assert.Equal(s.t, 0, r.Code, "%s", s.stderr.String())
		return r
	case <-time.After(mcpWait):
		s.t.Fatalf("helm mcp still running %s after its host went", mcpWait)
		return result{}
	}
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMCPBatchesAndOddMessagesAreAnsweredAndTheSessionGoesOn: a
// JSON-RPC batch (MCP 2025-06-18 has none) is answered as the JSON-RPC
// specification answers a batch, an array with an Invalid Request error
// for each request in it, by its id, saying batches are not supported;
// an empty batch with one error; a batch of notifications with nothing.
// Neither they nor a line that is no message (not JSON, JSON but no
// object) end the session: the next request is answered.
func TestMCPBatchesAndOddMessagesAreAnsweredAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	const unsupported = "batches are not supported"
	type want struct {
		id      any // of a single error; nil: null
		code    int64
		message string
	}
	tests := []struct {
		name  string
		line  string
		batch []want // the answer is an array of these
		one   *want  // the answer is one error
	}{
		{name: "a batch of one request", line: `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
			batch: []want{{float64(1), -32600, unsupported}}},
		{name: "a batch of requests and a notification",
			line:  `[{"jsonrpc":"2.0","id":"a","method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"voyage_list","arguments":{}}}]`,
			batch: []want{{"a", -32600, unsupported}, {float64(2), -32600, unsupported}}},
		{name: "a batch repeating an id", line: `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`,
			batch: []want{{float64(3), -32600, unsupported}, {float64(3), -32600, unsupported}}},
		{name: "a batch of things that are no messages", line: `[1,"two",{"id":3}]`,
			batch: []want{{nil, -32600, "not a JSON-RPC 2.0 message"}, {nil, -32600, "not a JSON-RPC 2.0 message"}, {float64(3), -32600, "not a JSON-RPC 2.0 message"}}},
		{name: "an empty batch", line: `[]`, one: &want{nil, -32600, "an empty batch"}},
		{name: "a batch of notifications", line: `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`},
		{name: "not JSON", line: `tools/list please`, one: &want{nil, -32700, "not JSON"}},
		{name: "a number", line: `42`, one: &want{nil, -32600, "not a JSON-RPC 2.0 message"}},
		{name: "a string", line: `"tools/list"`, one: &want{nil, -32600, "not a JSON-RPC 2.0 message"}},
		{name: "null", line: `null`, one: &want{nil, -32600, "not a JSON-RPC 2.0 message"}},
		{name: "true", line: `true`, one: &want{nil, -32600, "not a JSON-RPC 2.0 message"}},
		{name: "an empty object", line: `{}`, one: &want{nil, -32600, "not a JSON-RPC 2.0 message"}},
		{name: "binary", line: "\x00\xff\xfe{", one: &want{nil, -32700, "not JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			agentEnv(h)
			s := startRawMCP(t, h)
			s.send(tt.line)
			got := s.until("after")
			check := func(w want, e rpcError, raw json.RawMessage) {
				t.Helper()
				assert.Equal(t, "2.0", e.JSONRPC, "%s", raw)
				assert.Equal(t, w.id, e.ID, "%s", raw)
				if assert.NotNil(t, e.Error, "%s", raw) {
					assert.Equal(t, w.code, e.Error.Code, "%s", raw)
					assert.Contains(t, e.Error.Message, w.message)
				}
			}
			switch {
			case tt.batch != nil:
				require.Len(t, got, 1, "one answer to the batch")
				var answers []json.RawMessage
				require.NoError(t, json.Unmarshal(got[0], &answers), "an array: %s", got[0])
				require.Len(t, answers, len(tt.batch), "%s", got[0])
				for i, w := range tt.batch {
					var e rpcError
					require.NoError(t, json.Unmarshal(answers[i], &e))
					check(w, e, answers[i])
				}
			case tt.one != nil:
				require.Len(t, got, 1, "one answer")
				var e rpcError
				require.NoError(t, json.Unmarshal(got[0], &e), "one object: %s", got[0])
				check(*tt.one, e, got[0])
			default:
				assert.Empty(t, got, "no answer to notifications")
			}
			s.until("again")
			s.close()
			assert.Contains(t, s.stderr.String(), "serving on")
		})
	}
}

// TestMCPBatchAnswerSaysWhatToDo: the error a batch gets says that MCP
// has no batches and to send each message on its own line.
func TestMCPBatchAnswerSaysWhatToDo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	s := startRawMCP(t, h)
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`)
	got := s.until("after")
	require.Len(t, got, 1)
	assert.True(t, bytes.HasPrefix(got[0], []byte("[")), "%s", got[0])
	text := string(got[0])
	assert.Contains(t, text, "MCP 2025-06-18")
	assert.Contains(t, text, "send each message on a line of its own")
	s.close()
	assert.Contains(t, s.stderr.String(), "helm: mcp: the host sent a JSON-RPC batch of 1 message")
	assert.False(t, strings.Contains(s.stderr.String(), "panic"))
}
