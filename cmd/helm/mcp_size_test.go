package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The size of the tools' schemas, in bytes of the tools/list result helm
// mcp sends: what every tool costs an agent's context for the whole
// session. Before the default list was trimmed (issue 33) helm mcp listed
// 28 tools in 36,543 bytes.

// mcpDefaultToolsBudget is the most bytes the default tools/list may take:
// well under half of the 36,543 the full list took before.
const mcpDefaultToolsBudget = 14_000

// toolListBytes is the size of the tools/list result helm mcp --tools
// tools sends ("": the default), as JSON on the wire, with its tools.
func toolListBytes(t *testing.T, tools string) (int, []string) {
	t.Helper()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcpTools(tools)
	res, err := c.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	data, err := json.Marshal(res)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return len(data), names
}

// TestMCPDefaultToolListStaysSmall: the default list is the record set,
// within its byte budget; --tools all lists every tool (go test -v
// prints both sizes).
func TestMCPDefaultToolListStaysSmall(t *testing.T) {
	t.Parallel()
	n, names := toolListBytes(t, "")
	t.Logf("tools/list (default, record): %d bytes, %d tools", n, len(names))
	assert.Equal(t, []string{"action", "bearing_take", "complete", "log", "note", "observe", "sighting_show", "voyage_show", "voyage_start"}, names)
	assert.LessOrEqual(t, n, mcpDefaultToolsBudget, "the default tools' schemas grew past their budget: trim them, or move the tool out of the record set")

	all, allNames := toolListBytes(t, "all")
	t.Logf("tools/list --tools all: %d bytes, %d tools", all, len(allNames))
	assert.Equal(t, mcpTools, allNames)

	read, readNames := toolListBytes(t, "read")
	t.Logf("tools/list --tools read: %d bytes, %d tools", read, len(readNames))
	assert.NotContains(t, readNames, "action", "read records nothing")
}
