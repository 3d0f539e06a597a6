package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// hangGuard bounds a wait for what must happen by itself: a guard
// against a hang, not a latency assertion.
const hangGuard = 30 * time.Second

var testWho = logbook.Who{Identity: "claude-1", Role: "coder", Method: "claude-test"}

// newTestServer serves a home of its own with one voyage, returning the
// server and the voyage's id; Stop runs with the test's cleanup.
func newTestServer(t *testing.T) (*Server, *helm.Home, string) {
	t.Helper()
	ctx := context.Background()
	h, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "follow me", helm.OpenWaters, testWho, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Close())
	s, err := New(Config{Home: h, Who: testWho, Version: "test", Log: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Stop()
		for _, v := range s.Voyages() {
			v.Close()
		}
	})
	return s, h, id
}

// waitFor waits until cond holds, within the hang guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, hangGuard)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// acked connects a client (the SDK's, which subscribes by
// subscriptions/listen) whose subscriptions are in place once the
// channel it returns says so (notifications/subscriptions/acknowledged).
func acked(t *testing.T, s *Server, onUpdate func(string)) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	ctx := context.Background()
	srvT, cliT := mcp.NewInMemoryTransports()
	_, err := s.MCP().Connect(ctx, srvT, nil)
	require.NoError(t, err)
	ack := make(chan struct{}, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { onUpdate(r.Params.URI) },
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ack <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(ctx, cliT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, ack
}

func waitAck(t *testing.T, ack chan struct{}) {
	t.Helper()
	select {
	case <-ack:
	case <-time.After(hangGuard):
		t.Fatalf("no subscriptions/acknowledged within %s", hangGuard)
	}
}

// legacyConn is a connection to s speaking MCP 2025-06-18, whose hosts
// subscribe with resources/subscribe: raw JSON-RPC, each answer read.
type legacyConn struct {
	t    *testing.T
	conn mcp.Connection
	id   int64
}

func legacy(t *testing.T, s *Server) *legacyConn {
	t.Helper()
	ctx := context.Background()
	srvT, cliT := mcp.NewInMemoryTransports()
	_, err := s.MCP().Connect(ctx, srvT, nil)
	require.NoError(t, err)
	conn, err := cliT.Connect(ctx)
	require.NoError(t, err)
	c := &legacyConn{t: t, conn: conn}
	t.Cleanup(func() { conn.Close() })
	_, err = c.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}`)
	require.NoError(t, err)
	require.NoError(t, conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}))
	return c
}

// call sends a request and returns its answer's error.
func (c *legacyConn) call(method, params string) (json.RawMessage, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c.id++
	id, err := jsonrpc.MakeID(float64(c.id))
	require.NoError(c.t, err)
	require.NoError(c.t, c.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}))
	for {
		m, err := c.conn.Read(ctx)
		require.NoError(c.t, err)
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == id {
			return r.Result, r.Error
		}
	}
}

func (c *legacyConn) subscribe(uri string) error {
	data, err := json.Marshal(map[string]string{"uri": uri})
	require.NoError(c.t, err)
	_, err = c.call("resources/subscribe", string(data))
	return err
}

// TestSubscriptionEndsWithTheLastSession: a client that goes without
// unsubscribing leaves no follower behind once no session is subscribed,
// and one that stays keeps being notified.
func TestSubscriptionEndsWithTheLastSession(t *testing.T) {
	t.Parallel()
	s, h, id := newTestServer(t)
	ctx := context.Background()
	uri := storyURI(id)
	updated := make(chan string, 16)
	a, aAck := acked(t, s, func(string) {})
	b, bAck := acked(t, s, func(u string) { updated <- u })
	require.NoError(t, a.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	waitAck(t, aAck)
	require.NoError(t, b.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	waitAck(t, bAck)
	require.Equal(t, []string{uri}, s.subscribed())

	require.NoError(t, a.Close()) // gone without unsubscribing
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "written by another handle", testWho)
	require.NoError(t, err)
	select {
	case got := <-updated:
		assert.Equal(t, uri, got, "the session still subscribed is notified")
	case <-time.After(hangGuard):
		t.Fatalf("no notification within %s", hangGuard)
	}
	assert.Equal(t, []string{uri}, s.subscribed(), "b still follows the story")

	require.NoError(t, b.Close())
	waitFor(t, "the follower ends with the last subscribed session", func() bool { return len(s.subscribed()) == 0 })
}

// TestLegacySubscriptionEndsWithItsSession: a host of MCP 2025-06-18
// subscribes with resources/subscribe, and goes without
// resources/unsubscribe: its follower ends with its session.
func TestLegacySubscriptionEndsWithItsSession(t *testing.T) {
	t.Parallel()
	s, _, id := newTestServer(t)
	c := legacy(t, s)
	require.NoError(t, c.subscribe(storyURI(id)))
	require.Equal(t, []string{storyURI(id)}, s.subscribed())
	require.NoError(t, c.conn.Close())
	waitFor(t, "the follower ends with its session", func() bool { return len(s.subscribed()) == 0 })
}

// TestAttackSubscribeOutsideTheHome: the recorded agent, with the
// server's protocol in hand, asks to follow what is not a story of a
// voyage of the server's home: a voyage of another home (by its id, or
// a path to it), a path-like id, another resource. Each is refused, with
// an error answer, and nothing is followed.
func TestAttackSubscribeOutsideTheHome(t *testing.T) {
	t.Parallel()
	s, _, id := newTestServer(t)
	ctx := context.Background()
	otherDir := t.TempDir()
	other, err := helm.Open(otherDir, nil)
	require.NoError(t, err)
	ov, err := other.Start(ctx, "another home's voyage", helm.OpenWaters, testWho, nil)
	require.NoError(t, err)
	otherID := ov.ID()
	require.NoError(t, ov.Close())
	c := legacy(t, s)
	for _, tt := range []struct{ name, uri string }{
		{"another home's voyage", storyURI(otherID)},
		{"a path to another home's voyage", "helm://voyages/" + url.PathEscape(otherDir+"/voyages/"+otherID) + "/story"},
		{"dot-dot", "helm://voyages/../story"},
		{"dot-dot escaped", "helm://voyages/..%2F..%2F" + otherID + "/story"},
		{"an absolute path", "helm://voyages/%2Ftmp%2F" + otherID + "/story"},
		{"two segments", "helm://voyages/" + id + "/x/story"},
		{"a sighting", "helm://voyages/" + id + "/sightings/abc"},
		{"a page of the story", storyURI(id) + "?offset=10"},
		{"a fragment", storyURI(id) + "#x"},
		{"another host", "helm://evil/" + id + "/story"},
		{"a file", "file:///etc/passwd"},
		{"no voyage", "helm://voyages//story"},
		{"not a URI", "helm://voyages/%zz/story"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, c.subscribe(tt.uri), "%s is refused", tt.uri)
			assert.Empty(t, s.subscribed(), "nothing is followed")
		})
	}
	require.NoError(t, c.subscribe(storyURI(id)), "the story of a voyage of the home can be followed")
	assert.Equal(t, []string{storyURI(id)}, s.subscribed())
}
