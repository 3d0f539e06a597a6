package mcpserver

import (
	"context"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
)

// Subscriptions to a voyage's story (resources/subscribe): while any
// session is subscribed to a story's URI, one goroutine follows that
// voyage (helm.Voyage.Follow: any process's appends) and another sends
// notifications/resources/updated for the URI once per batch of events
// (a notification pending absorbs those that come meanwhile), so the
// work per subscription stays bounded however fast the voyage is
// written. The last unsubscription, the end of the last subscribed
// session (a client that goes without unsubscribing), or Stop ends both.
// Only a story of a voyage of the home, as the tools name voyages, can
// be subscribed to: any other URI is refused.

// watch is the following of one subscribed URI.
type watch struct {
	sessions map[*mcp.ServerSession]bool
	stop     context.CancelFunc
}

// watches are the server's subscriptions; the Server holds one.
type watches struct {
	byURI     map[string]*watch
	sessions  map[*mcp.ServerSession]bool // those whose end is awaited
	followers sync.WaitGroup              // every follower and notifier
}

// storyVoyage is the voyage a story URI names, or "" when uri names no
// story: helm://voyages/ID/story, ID an id or a prefix, nothing more.
func storyVoyage(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "helm" || u.Host != "voyages" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 2 || parts[1] != "story" || parts[0] == "" {
		return ""
	}
	return parts[0]
}

func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return s.guard("resources/subscribe", func() error {
		uri := req.Params.URI
		arg := storyVoyage(uri)
		if arg == "" {
			return notFound(uri, "only a voyage's story (helm://voyages/ID/story) can be subscribed to")
		}
		v, err := s.voyage(ctx, arg)
		if err != nil {
			return resourceError(uri, err)
		}
		from, err := nextSeq(ctx, v)
		if err != nil {
			return resourceError(uri, err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stopping {
			return notFound(uri, "helm mcp is ending")
		}
		if !s.subs.sessions[req.Session] {
			s.subs.sessions[req.Session] = true
			sess := req.Session
			go func() { // a session that ends drops its subscriptions
				sess.Wait()
				s.dropSession(sess)
			}()
		}
		if w := s.subs.byURI[uri]; w != nil {
			w.sessions[req.Session] = true
			return nil
		}
		wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.subs.byURI[uri] = &watch{sessions: map[*mcp.ServerSession]bool{req.Session: true}, stop: stop}
		s.follow(wctx, v, from, uri)
		return nil
	})
}

// nextSeq is the sequence number the voyage's next event will have.
func nextSeq(ctx context.Context, v *helm.Voyage) (uint64, error) {
	if h, err := v.Head(ctx); err == nil {
		return h.Seq + 1, nil
	}
	var last uint64 // no head (compacted before the BLAKE3 chain): read to the end
	for e, err := range v.Events(ctx, 0) {
		if err != nil {
			return 0, err
		}
		last = e.Seq
	}
	return last + 1, nil
}

// follow follows v from seq from until ctx ends, notifying the sessions
// subscribed to uri of each batch of events.
func (s *Server) follow(ctx context.Context, v *helm.Voyage, from uint64, uri string) {
	wake := make(chan struct{}, 1)
	s.subs.followers.Add(2)
	go func() { // sends what follow finds, one notification at a time
		defer s.subs.followers.Done()
		for range wake {
			if err := s.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil && ctx.Err() == nil {
				s.Logf("helm: mcp: notify %s: %v\n", uri, err)
			}
		}
	}()
	go func() {
		defer s.subs.followers.Done()
		defer close(wake)
		for _, err := range v.Follow(ctx, from) {
			if err != nil {
				if ctx.Err() == nil {
					s.Logf("helm: mcp: following %s ended: %v\n", uri, err)
				}
				return
			}
			select {
			case wake <- struct{}{}:
			default: // one is pending: it tells of this event too
			}
		}
	}()
}

func (s *Server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.subs.byURI[req.Params.URI]; w != nil {
		delete(w.sessions, req.Session)
		if len(w.sessions) == 0 {
			delete(s.subs.byURI, req.Params.URI)
			w.stop()
		}
	}
	return nil
}

// dropSession ends the subscriptions of sess, which has ended.
func (s *Server) dropSession(sess *mcp.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs.sessions, sess)
	for uri, w := range s.subs.byURI {
		delete(w.sessions, sess)
		if len(w.sessions) == 0 {
			delete(s.subs.byURI, uri)
			w.stop()
		}
	}
}

// stopWatches ends every following, and waits for them (Stop): the
// voyages they follow are closed next.
func (s *Server) stopWatches() {
	s.mu.Lock()
	for uri, w := range s.subs.byURI {
		delete(s.subs.byURI, uri)
		w.stop()
	}
	s.mu.Unlock()
	s.subs.followers.Wait()
}
