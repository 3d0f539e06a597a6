package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm/cmd/helm/internal/view"
)

// The SDK's stdio transport ends the session on the first line that is not
// a JSON-RPC message (not JSON, nested too deep, longer than its limit, no
// "jsonrpc":"2.0"), and on a JSON-RPC batch once MCP 2025-06-18 is agreed:
// one bad line from a host would end the server and every call in
// flight. jsonrpcLines stands between the host and the SDK:
// it passes each message on, and answers a line that is none itself, with
// the JSON-RPC error the specification gives it, and reads on.

// lockedWriter serialises whole writes: the SDK's messages and the
// errors jsonrpcLines answers with, each a line written in one call. It
// tells calls of the answers it wrote.
type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	calls *inFlight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if err == nil && l.calls != nil {
		if m, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
			if r, ok := m.(*jsonrpc.Response); ok {
				l.calls.done(r.ID)
			}
		}
	}
	return n, err
}

// inFlight are the host's calls given to the SDK and not answered yet,
// by id: at the end of standard input, the server answers them before it
// ends (a host may write its last request and close its end at once, as
// the MCP specification's shutdown for stdio has it: close the server's
// input, then wait for it to exit).
type inFlight struct {
	mu      sync.Mutex
	ids     map[string]bool
	changed chan struct{} // has a value when ids changed
}

func newInFlight() *inFlight {
	return &inFlight{ids: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// seen notes a message given to the SDK: a call is in flight until its
// answer is written; a cancellation ends one unanswered (MCP: a
// cancelled request gets no answer).
func (c *inFlight) seen(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		c.mu.Lock()
		c.ids[idKey(req.ID)] = true
		c.mu.Unlock()
		return
	}
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				c.done(id)
			}
		}
	}
}

// done notes that call id was answered (or cancelled).
func (c *inFlight) done(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ids[idKey(id)] {
		return
	}
	delete(c.ids, idKey(id))
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *inFlight) empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids) == 0
}

// drain waits until every call in flight is answered, or gone is closed
// (the host went, or the server is stopped).
func (c *inFlight) drain(gone <-chan struct{}) {
	for !c.empty() {
		select {
		case <-c.changed:
		case <-gone:
			return
		}
	}
}

// jsonrpcLines reads a host's messages from r, a line each (a message
// spread over lines, pretty-printed, is taken whole too), and gives the
// SDK those that are JSON-RPC messages; to the others it answers on w,
// and says so with logf.
type jsonrpcLines struct {
	r    *bufio.Reader
	w    io.Writer
	logf func(format string, args ...any)
	max  int    // the longest message taken
	out  []byte // what is left to give of the message being read
	err  error  // the end of r, given once out is

	calls *inFlight // the calls given and not answered
	// atEnd, when set, is run once r ends, before its end is given: it
	// returns once the calls in flight are answered (or the host went).
	atEnd func()
}

func newJSONRPCLines(r io.Reader, w io.Writer, logf func(string, ...any)) *jsonrpcLines {
	return &jsonrpcLines{r: bufio.NewReader(r), w: w, logf: logf, max: mcp.DefaultMaxLineLength, calls: newInFlight()}
}

func (l *jsonrpcLines) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.err != nil {
			if l.atEnd != nil {
				// The SDK cancels the calls still running when its input
				// ends: answer them first.
				l.atEnd()
				l.atEnd = nil
			}
			return 0, l.err
		}
		l.out, l.err = l.next()
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// next reads the next message, newline-terminated; a line that is not one
// is answered and skipped.
func (l *jsonrpcLines) next() ([]byte, error) {
	var msg []byte
	for {
		line, err := l.readLine(l.max - len(msg))
		if errors.Is(err, errLineTooLong) {
			l.refuse(nil, jsonrpc.CodeParseError, fmt.Sprintf("a message longer than %d bytes", l.max))
			msg = nil
			continue
		}
		msg = append(msg, line...)
		if len(bytes.TrimSpace(msg)) == 0 {
			msg = msg[:0]
			if err != nil {
				return nil, err
			}
			continue
		}
		var syntax *json.SyntaxError
		if jerr := json.Unmarshal(msg, new(json.RawMessage)); jerr != nil {
			if errors.As(jerr, &syntax) && syntax.Offset >= int64(len(msg)) && err == nil {
				continue // a message spread over lines: read on
			}
			l.refuse(nil, jsonrpc.CodeParseError, "not JSON: "+jerr.Error())
			msg = msg[:0]
			if err != nil {
				return nil, err
			}
			continue
		}
		if trimmed := bytes.TrimSpace(msg); trimmed[0] == '[' {
			l.refuseBatch(trimmed)
			msg = msg[:0]
			if err != nil {
				return nil, err
			}
			continue
		}
		m, derr := jsonrpc.DecodeMessage(msg)
		if derr != nil {
			l.refuse(idOf(msg), jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: "+derr.Error())
			msg = msg[:0]
			if err != nil {
				return nil, err
			}
			continue
		}
		l.calls.seen(m)
		return append(bytes.TrimSpace(msg), '\n'), err
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads a line with its newline, at most max bytes of it (the
// rest of a longer line is read and dropped: errLineTooLong).
func (l *jsonrpcLines) readLine(max int) ([]byte, error) {
	var line []byte
	for {
		part, err := l.r.ReadSlice('\n')
		if len(line)+len(part) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.r.ReadSlice('\n')
			}
			return nil, errLineTooLong
		}
		line = append(line, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// idOf is the id of msg, a JSON-RPC message or something like one, when
// it has one an answer can carry (a string or a number); nil otherwise.
func idOf(msg []byte) json.RawMessage {
	var withID struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &withID) != nil || len(withID.ID) == 0 {
		return nil
	}
	var id any
	if json.Unmarshal(withID.ID, &id) != nil {
		return nil
	}
	switch id.(type) {
	case string, float64:
		return withID.ID
	}
	return nil
}

// batchesUnsupported is what a request sent in a batch is answered.
const batchesUnsupported = "helm mcp: JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send each message on a line of its own"

// refuseBatch answers a JSON-RPC batch (batch, a JSON array) without
// giving any of it to the SDK, which ends the session on a batch (MCP
// 2025-06-18 has none; before it the SDK took them, but ended the session
// on one repeating an id). As the JSON-RPC 2.0 specification answers a
// batch: an empty one with one Invalid Request error; any other with an
// array holding an error for each request in it, with its id (so that a
// host waiting for it hears), and one for each element that is no message;
// a batch of notifications (and responses) with nothing.
func (l *jsonrpcLines) refuseBatch(batch []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(batch, &elems); err != nil || len(elems) == 0 {
		l.refuse(nil, jsonrpc.CodeInvalidRequest, "an empty batch")
		return
	}
	var answers []json.RawMessage
	for _, e := range elems {
		m, err := jsonrpc.DecodeMessage(e)
		var answer []byte
		switch {
		case err != nil:
			answer = errorAnswer(idOf(e), jsonrpc.CodeInvalidRequest, "helm mcp: not a JSON-RPC 2.0 message: "+err.Error())
		default:
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				answer = errorAnswer(idOf(e), jsonrpc.CodeInvalidRequest, batchesUnsupported)
			}
		}
		if answer != nil {
			answers = append(answers, answer)
		}
	}
	what := "a JSON-RPC batch of " + view.Plural(len(elems), "message")
	if len(answers) == 0 {
		l.logf("helm: mcp: the host sent %s and no request (MCP has no batches): dropped it, serving on\n", what)
		return
	}
	l.logf("helm: mcp: the host sent %s (MCP has no batches); answered with an error for each request, serving on\n", what)
	data, err := json.Marshal(answers)
	if err != nil {
		return
	}
	l.w.Write(append(data, '\n'))
}

// errorAnswer is a JSON-RPC error response; a nil id is null.
func errorAnswer(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message},
	})
	return data
}

// refuse answers a message that was none: with its id when it had one.
func (l *jsonrpcLines) refuse(id json.RawMessage, code int64, what string) {
	l.logf("helm: mcp: the host sent %s; answered with an error, serving on\n", what)
	l.w.Write(append(errorAnswer(id, code, "helm mcp: "+what+" (one JSON-RPC 2.0 message a line is expected)"), '\n'))
}

// ServeStdio serves the protocol on in and out, a host's standard input
// and output, until the host closes in or ctx ends. A line that is no
// JSON-RPC message is answered and skipped (jsonrpcLines), never the end
// of the session. When in ends, the calls in flight are answered before
// the session ends, unless the host went altogether (out, a pipe, lost
// its reader: the calls are then cancelled, as at once) or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	lines := newJSONRPCLines(in, w, s.Logf)
	w.calls = lines.calls
	lines.atEnd = func() {
		if lines.calls.empty() {
			return
		}
		gone := make(chan struct{})
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-ctx.Done():
			case <-hangup(out, stop):
			case <-stop:
				return
			}
			close(gone)
		}()
		lines.calls.drain(gone)
	}
	// lines bounds a message's length: the SDK's own bound ends the session.
	return s.server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(lines), Writer: nopWriteCloser{w}, MaxLineLength: -1})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
