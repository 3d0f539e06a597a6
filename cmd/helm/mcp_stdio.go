package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the session on the first line that is not
// a JSON-RPC message (not JSON, nested too deep, longer than its limit, no
// "jsonrpc":"2.0"): one bad line from a host would end the server and
// every call in flight. jsonrpcLines stands between the host and the SDK:
// it passes each message on, and answers a line that is none itself, with
// the JSON-RPC error the specification gives it, and reads on.

// lockedWriter serialises whole writes: the SDK's messages and the
// errors jsonrpcLines answers with, each a line written in one call.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
}

func newJSONRPCLines(r io.Reader, w io.Writer, logf func(string, ...any)) *jsonrpcLines {
	return &jsonrpcLines{r: bufio.NewReader(r), w: w, logf: logf, max: mcp.DefaultMaxLineLength}
}

func (l *jsonrpcLines) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.err != nil {
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
		if id, derr := checkMessages(msg); derr != nil {
			l.refuse(id, jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: "+derr.Error())
			msg = msg[:0]
			if err != nil {
				return nil, err
			}
			continue
		}
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

// checkMessages checks that msg (JSON) is a JSON-RPC message, or a batch
// of them, as the SDK decodes them; when it is not, the id it has, if any,
// for the answer.
func checkMessages(msg []byte) (any, error) {
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) == nil {
		if len(batch) == 0 {
			return nil, errors.New("an empty batch")
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		var withID struct {
			ID any `json:"id"`
		}
		json.Unmarshal(msg, &withID)
		switch withID.ID.(type) {
		case string, float64:
			return withID.ID, err
		}
		return nil, err
	}
	return nil, nil
}

// refuse answers a message that was none: with its id when it had one.
func (l *jsonrpcLines) refuse(id any, code int64, what string) {
	l.logf("helm: mcp: the host sent %s; answered with an error, serving on\n", what)
	data, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": "helm mcp: " + what + " (one JSON-RPC 2.0 message a line is expected)"},
	})
	if err != nil {
		return
	}
	l.w.Write(append(data, '\n'))
}
