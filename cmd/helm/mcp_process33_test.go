//go:build unix

package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPProcessNewTools: helm mcp as a process (the test binary as
// helm) lists the record set by default and, with --tools read, follows
// and exports a voyage another process recorded.
func TestMCPProcessNewTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("a voyage to read")
	h.Env["HELM_IDENTITY"], h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "john-agent", "coder", "human"
	h.ok("--voyage", id, "note", "read me")
	ctx := context.Background()

	rec := mcpProcess(t, h, "claude-1")
	defer rec.Close()
	list, err := rec.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list.Tools, 9, "the record set")

	cs := mcpProcess(t, h, "claude-1", "--tools", "read")
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "follow", Arguments: map[string]any{"voyage": id, "wait": 0}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.Contains(t, string(data), "read me")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "export", Arguments: map[string]any{"voyage": id, "format": "md"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	var exp struct {
		URI   string `json:"uri"`
		Bytes int    `json:"bytes"`
	}
	data, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &exp))
	doc, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: exp.URI})
	require.NoError(t, err)
	assert.Len(t, doc.Contents[0].Text, exp.Bytes)
	assert.Contains(t, doc.Contents[0].Text, "read me")
}
