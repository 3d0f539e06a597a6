package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPToolArgumentsKeepTheirOrderOnTheWire: a host shows a tool's
// arguments in the order tools/list sends them (the schema's properties
// as written), and so does a model read them. mcp-tools.golden.json
// cannot see that order (the client decodes the schema into a map), so
// the order each tool's arguments go out in is a golden of its own:
// testdata/mcp-tools-order.golden, one tool a line (-update rewrites it).
func TestMCPToolArgumentsKeepTheirOrderOnTheWire(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	s := startRawMCP(t, h, "--tools", "all")
	s.send(`{"jsonrpc":"2.0","id":"order","method":"tools/list"}`)
	line := s.recv()
	var res struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(line, &res), "%s", line)
	require.NotEmpty(t, res.Result.Tools)
	var b strings.Builder
	for _, tool := range res.Result.Tools {
		var schema struct {
			Properties json.RawMessage `json:"properties"`
			Required   []string        `json:"required"`
		}
		require.NoError(t, json.Unmarshal(tool.InputSchema, &schema), tool.Name)
		b.WriteString(tool.Name + ": " + strings.Join(keysInOrder(t, schema.Properties), " "))
		if len(schema.Required) > 0 {
			b.WriteString(" | required: " + strings.Join(schema.Required, " "))
		}
		b.WriteString("\n")
	}
	s.close()
	golden := filepath.Join("testdata", "mcp-tools-order.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String(), "the order of the tools' arguments changed: go test ./cmd/helm -run TestMCPToolArgumentsKeepTheirOrderOnTheWire -update, and say so in the commit")
}

// keysInOrder returns the keys of the JSON object obj in the order they
// are written.
func keysInOrder(t *testing.T, obj json.RawMessage) []string {
	t.Helper()
	if len(obj) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}
