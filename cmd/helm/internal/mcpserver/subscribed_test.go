package mcpserver

// subscribed are the story URIs followed now, for tests.
func (s *Server) subscribed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var uris []string
	for uri := range s.subs.byURI {
		uris = append(uris, uri)
	}
	return uris
}
