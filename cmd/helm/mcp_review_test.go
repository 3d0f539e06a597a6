package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// TestMCPPagesSmallerThanACharacterMoveOn: a limit smaller than the
// character at the offset still gives that character, so that a caller
// following the notes reaches the end, and the pages make up the text.
func TestMCPPagesSmallerThanACharacterMoveOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "pages"})
	ok[logbook.Entry](c, "note", map[string]any{"voyage": info.ID, "text": "€uro 😀 ok"})
	whole, _ := ok[any](c, "log", map[string]any{"voyage": info.ID})
	next := regexp.MustCompile(`\n\[helm: bytes \d+ to \d+ of \d+ shown; call log again with offset (\d+) for the rest\]\n$`)
	for _, limit := range []int{1, 2, 3} {
		var b strings.Builder
		offset := 0
		for range len(whole) + 1 {
			text, _ := ok[any](c, "log", map[string]any{"voyage": info.ID, "offset": offset, "limit": limit})
			m := next.FindStringSubmatchIndex(text)
			if m == nil {
				b.WriteString(text)
				break
			}
			b.WriteString(text[:m[0]])
			n, err := strconv.Atoi(text[m[2]:m[3]])
			require.NoError(t, err)
			require.Greater(t, n, offset, "limit %d: the page at offset %d moves on: %q", limit, offset, text)
			offset = n
		}
		assert.Equal(t, whole, b.String(), "limit %d: the pages make up the story", limit)
	}
}

// TestMCPTextEscapesTerminalControls: what a tool's text says, as the
// command line prints it, shows a terminal's control characters escaped
// (a host prints it in a terminal): the error and its hint, a failed
// look, a dry run and an action performed.
func TestMCPTextEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	h, _, _ := newGitHubHarness(t)
	agentEnv(h)
	c := h.mcp()
	const esc = "\x1b]0;owned\x07\x1b[2J"
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "escapes"})

	text, te := c.fails("voyage_show", map[string]any{"voyage": esc})
	assert.NotContains(t, text, "\x1b")
	assert.NotContains(t, te.Error, "\x1b")
	assert.Contains(t, text, `\x1b]0;owned`)

	text, _ = ok[any](c, "observe", map[string]any{"voyage": info.ID, "kind": "command", "command": []string{"true"}, "dir": "gone" + esc})
	assert.Contains(t, text, "Observed, but")
	assert.NotContains(t, text, "\x1b", "a failed look's message")

	text, _ = ok[any](c, "commit", map[string]any{"voyage": info.ID, "message": "msg" + esc, "dry_run": true})
	assert.NotContains(t, text, "\x1b", "a dry run")

	text, _ = ok[any](c, "create_issue", map[string]any{"voyage": info.ID, "title": "title" + esc})
	first, _, _ := strings.Cut(text, "\n")
	assert.NotContains(t, first, "\x1b", "the line saying what was performed")
	assert.NotContains(t, first, "\a")
}

// TestMCPBadLinesAreAnsweredNotTheEnd: on standard input, a line that is
// no JSON-RPC message (not JSON, nested too deep, no version, a message
// too long) is answered with a JSON-RPC error and the server reads on; a
// message spread over lines is taken whole.
func TestMCPBadLinesAreAnsweredNotTheEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan result, 1)
	var stderr bytes.Buffer
	go func() {
		err := h.main().Run(context.Background(), []string{"mcp"}, inR, outW, &stderr)
		outW.Close()
		done <- result{Code: ReportError(&stderr, err), Err: err}
	}()
	lines := bufio.NewReader(outR)
	send := func(line string) {
		t.Helper()
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	recv := func() map[string]any {
		t.Helper()
		line, err := lines.ReadBytes('\n')
		require.NoError(t, err, "helm mcp still serves: %s", stderr.String())
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	assert.Contains(t, recv(), "result")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	for _, bad := range []string{
		"not json",
		`{"id":7}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"note","arguments":{"text":` + deep + `}}}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		`{"a":1} {"b":2}`,
	} {
		send(bad)
		m := recv()
		assert.Contains(t, m, "error", "%.40s: answered with an error", bad)
	}
	send(`{"jsonrpc":"2.0","id":9,` + "\n" + `"method":"tools/call","params":{"name":"voyage_list","arguments":{}}}`)
	m := recv()
	assert.Equal(t, float64(9), m["id"])
	assert.Contains(t, m, "result", "a message over two lines")

	require.NoError(t, inW.Close())
	r := <-done
	assert.Equal(t, 0, r.Code, "%s", stderr.String())
	assert.Contains(t, stderr.String(), "answered with an error, serving on")
}
