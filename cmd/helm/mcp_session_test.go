package main

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// TestMCPSessionActsOnTheVoyageItStarted: after voyage_start, a session's
// calls that leave voyage out act on the voyage it started (the last one,
// when it starts another); a voyage named wins for that call alone;
// another session of the same server, which started none, must name one.
func TestMCPSessionActsOnTheVoyageItStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	srvA, cliA := mcp.NewInMemoryTransports()
	srvB, cliB := mcp.NewInMemoryTransports()
	m := h.main()
	m.serveMCP = func(ctx context.Context, s *mcp.Server) error {
		a, err := s.Connect(ctx, srvA, nil)
		if err != nil {
			return err
		}
		b, err := s.Connect(ctx, srvB, nil)
		if err != nil {
			return err
		}
		a.Wait()
		return b.Wait()
	}
	done := h.runAsync(m, []string{"mcp", "--tools", "all"})
	client := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, nil)
	csA, err := client.Connect(context.Background(), cliA, nil)
	require.NoError(t, err)
	csB, err := client.Connect(context.Background(), cliB, nil)
	require.NoError(t, err)
	a := &mcpClient{t: t, cs: csA, done: make(chan result, 1)}
	b := &mcpClient{t: t, cs: csB, done: done}

	_, te := a.fails("note", map[string]any{"text": "before any start"})
	assert.Contains(t, te.Error, "this session started no voyage")
	assert.Contains(t, te.Try, "call voyage_start first")

	_, first := ok[helm.VoyageInfo](a, "voyage_start", map[string]any{"intent": "first"})
	_, e := ok[logbook.Entry](a, "note", map[string]any{"text": "on the first"})
	assert.Equal(t, agentWho, e.Who, "recorded as the server's identity")
	_, second := ok[helm.VoyageInfo](a, "voyage_start", map[string]any{"intent": "second"})
	ok[logbook.Entry](a, "note", map[string]any{"text": "on the second"})
	ok[logbook.Entry](a, "note", map[string]any{"voyage": first.ID, "text": "named: the first"})
	ok[logbook.Entry](a, "note", map[string]any{"text": "the second again"})
	_, shown := ok[struct {
		Voyage helm.VoyageInfo `json:"voyage"`
	}](a, "voyage_show", nil)
	assert.Equal(t, second.ID, shown.Voyage.ID)

	_, te = b.fails("note", map[string]any{"text": "another session"})
	assert.Contains(t, te.Error, "this session started no voyage", "a voyage started in one session is not another's")

	firstLog := h.ok("--voyage", first.ID, "log")
	secondLog := h.ok("--voyage", second.ID, "log")
	assert.Contains(t, firstLog, "on the first")
	assert.Contains(t, firstLog, "named: the first")
	assert.NotContains(t, firstLog, "on the second")
	assert.Contains(t, secondLog, "on the second")
	assert.Contains(t, secondLog, "the second again")
	assert.NotContains(t, secondLog, "named: the first")
	assert.NoError(t, csA.Close())
	b.close()
}

// TestMCPPinnedServerKeepsItsVoyage: on a server pinned with --voyage,
// voyage_start is refused, so calls that leave voyage out stay on the
// pinned voyage: the pin wins over a session's voyage.
func TestMCPPinnedServerKeepsItsVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := h.start("pinned")
	c := h.mcp("--voyage", id)
	_, te := c.fails("voyage_start", map[string]any{"intent": "elsewhere"})
	assert.Contains(t, te.Error, "alone")
	_, e := ok[logbook.Entry](c, "note", map[string]any{"text": "still pinned"})
	assert.NotEmpty(t, e.Who.Identity)
	assert.Contains(t, h.ok("--voyage", id, "log"), "still pinned")
	list := h.ok("voyage", "list")
	assert.NotContains(t, list, "elsewhere", "no voyage was started")
}
