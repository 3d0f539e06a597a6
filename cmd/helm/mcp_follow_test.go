package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Subscriptions to a voyage's story through helm mcp itself: the SDK's
// client (MCP 2026-07-28: subscriptions/listen) and a host of 2025-06-18
// on standard input and output (resources/subscribe).

// TestMCPStorySubscriptionNotifiesOfEachEntry: a client subscribed to a
// voyage's story is sent notifications/resources/updated for its URI
// when another process records an entry, reads the new entry, and can
// unsubscribe; a subscription left when the session ends does not keep
// helm mcp from ending cleanly (c.close requires it).
func TestMCPStorySubscriptionNotifiesOfEachEntry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := h.start("subscribe to me")
	uri := "helm://voyages/" + id + "/story"

	srvT, cliT := mcp.NewInMemoryTransports()
	m := h.main()
	m.serveMCP = func(ctx context.Context, s *mcp.Server) error { return s.Run(ctx, srvT) }
	c := &mcpClient{t: t, done: h.runAsync(m, []string{"mcp"})}
	updated := make(chan string, 16)
	ack := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	// The SDK's Subscribe sends subscriptions/listen and returns: the
	// server's acknowledgement says the subscription is in place.
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ack <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(context.Background(), cliT, nil)
	require.NoError(t, err)
	c.cs = cs
	t.Cleanup(c.close)
	ctx := context.Background()
	waitAck := func() {
		t.Helper()
		select {
		case <-ack:
		case <-time.After(mcpWait):
			t.Fatalf("no subscriptions/acknowledged within %s", mcpWait)
		}
	}

	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	waitAck()
	h.ok("--voyage", id, "note", "recorded by another handle")
	select {
	case got := <-updated:
		assert.Equal(t, uri, got)
	case <-time.After(mcpWait):
		t.Fatalf("no notifications/resources/updated within %s", mcpWait)
	}
	story, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err)
	assert.Contains(t, story.Contents[0].Text, "recorded by another handle")
	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}))

	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	waitAck()
}

// TestAttackSubscribeOverStdio: a host of MCP 2025-06-18 on helm mcp's
// standard input asks to follow a path-like voyage, another resource and
// a voyage the home has not: each answered with an error, the session
// going on; the story of the home's voyage is followed, and another
// process's entry is notified on standard output.
func TestAttackSubscribeOverStdio(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := h.start("follow me over stdio")
	other := newHarness(t)
	other.start("the other home's first")
	otherID := other.start("another home's") // not id: the harnesses number alike
	require.NotEqual(t, id, otherID)
	s := startRawMCP(t, h)
	subscribe := func(n int, uri string) map[string]any {
		t.Helper()
		data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": "resources/subscribe", "params": map[string]string{"uri": uri}})
		require.NoError(t, err)
		s.send(string(data))
		for {
			m := s.recvObject()
			if m["id"] == float64(n) {
				return m
			}
		}
	}
	for i, uri := range []string{
		"helm://voyages/..%2F..%2F" + otherID + "/story",
		"helm://voyages/" + otherID + "/story",
		"helm://voyages/" + id + "/sightings/00",
		"helm://voyages/" + id + "/story?offset=1",
	} {
		m := subscribe(i+1, uri)
		assert.Contains(t, m, "error", "%s is refused", uri)
	}
	m := subscribe(10, "helm://voyages/"+id+"/story")
	require.Contains(t, m, "result", "the home's voyage's story is followed: %v", m)
	h.ok("--voyage", id, "note", "recorded by another process")
	for {
		m := s.recvObject()
		if m["method"] == "notifications/resources/updated" {
			assert.Equal(t, "helm://voyages/"+id+"/story", m["params"].(map[string]any)["uri"])
			break
		}
	}
	r := s.close()
	assert.Empty(t, s.stderr.String(), "%s", r)
}
