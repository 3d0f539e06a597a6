// Package web is helm's read-only web UI over a home: the voyages, each
// voyage's timeline followed live, and a transcript across voyages with
// one lane per identity. It is built with the standard library
// (net/http, html/template, embed) and a little vanilla JavaScript served
// from its own file; sightings' file contents are highlighted by chroma
// with CSS classes.
//
// It is safe by default: no endpoint writes (only GET and HEAD are
// answered, others are 405); every stored text goes through
// html/template's escaping; every answer carries a Content-Security-Policy
// that allows scripts and styles from the server alone (no inline script
// or style), nosniff and no framing; a raw sighting is served as
// text/plain; voyage ids and artifact hashes are checked before they
// reach the home; a request naming a host other than a loopback one is
// refused unless the server was told to serve any host (a guard against
// DNS rebinding); a damaged voyage shows its error, and the rest of the
// home is still served.
//
// The package is internal: only the CLI serves it, so neither its API nor
// chroma is part of what the library's users import.
package web

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// CSP is the Content-Security-Policy of every answer: scripts, styles,
// and everything else from the server itself, images also as data: URLs;
// no plugins, no <base>, no framing. Inline script and style are refused,
// so a stored text that got past escaping still could not run.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// Options tune a Server.
type Options struct {
	// AnyHost answers requests whatever host their Host header names.
	// Without it, only a loopback name or address (localhost,
	// 127.0.0.1, [::1]) is answered, so that a web page whose name was
	// made to point at the loopback address (DNS rebinding) cannot read
	// the home through the visitor's browser. Set it when serving on an
	// address other than loopback.
	AnyHost bool
	// MaxStreams caps the event streams (live pages) followed at once;
	// one more is answered 503 with a page that says why and what to do.
	// 0 means DefaultMaxStreams.
	MaxStreams int
	// MoreStreams says how to raise MaxStreams, in the words of what
	// serves (the helm program names its flag); the page refusing a
	// stream over the cap shows it. Empty: in the Options' terms.
	MoreStreams string
	// KeepAlive is how often an idle event stream sends a comment;
	// 0 means DefaultKeepAlive.
	KeepAlive time.Duration
	// WriteTimeout is how long one write to an event stream may block
	// (a client that stopped reading but keeps its connection) before
	// the stream is ended and its place freed; 0 means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
}

// Server serves a home's voyages. It is an http.Handler.
type Server struct {
	home    *helm.Home
	opts    Options
	mux     *http.ServeMux
	pages   map[string]*template.Template
	chroma  []byte // the highlighting's style sheet
	started time.Time
	// streams holds a token per event stream under way: at most
	// cap(streams) at once.
	streams      chan struct{}
	keepAlive    time.Duration
	writeTimeout time.Duration
}

// New returns a Server for home.
func New(home *helm.Home, opts *Options) (*Server, error) {
	s := &Server{home: home, mux: http.NewServeMux(), started: time.Now()}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxStreams < 0 {
		return nil, fmt.Errorf("web: MaxStreams is %d: want 0 (the default, %d) or more", s.opts.MaxStreams, DefaultMaxStreams)
	}
	if s.opts.KeepAlive < 0 {
		return nil, fmt.Errorf("web: KeepAlive is %v: want 0 (the default, %v) or more", s.opts.KeepAlive, DefaultKeepAlive)
	}
	if s.opts.WriteTimeout < 0 {
		return nil, fmt.Errorf("web: WriteTimeout is %v: want 0 (the default, %v) or more", s.opts.WriteTimeout, DefaultWriteTimeout)
	}
	s.streams = make(chan struct{}, cmp.Or(s.opts.MaxStreams, DefaultMaxStreams))
	s.keepAlive = cmp.Or(s.opts.KeepAlive, DefaultKeepAlive)
	s.writeTimeout = cmp.Or(s.opts.WriteTimeout, DefaultWriteTimeout)
	var err error
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	if s.chroma, err = highlightCSS(); err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s.mux.HandleFunc("GET /{$}", s.voyagesPage)
	s.mux.HandleFunc("GET /voyages/{id}", s.voyagePage)
	s.mux.HandleFunc("GET /voyages/{id}/events", s.events)
	s.mux.HandleFunc("GET /voyages/{id}/sightings/{hash}", s.sightingPage)
	s.mux.HandleFunc("GET /voyages/{id}/artifacts/{hash}", s.rawArtifact)
	s.mux.HandleFunc("GET /transcript", s.transcriptPage)
	s.mux.HandleFunc("GET /static/chroma.css", s.chromaCSS)
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("nothing is at %s", r.URL.Path))
	})
	return s, nil
}

// ServeHTTP sets the security headers, refuses every method but GET and
// HEAD and, unless AnyHost, every host but loopback ones; then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		s.fail(w, r, http.StatusMethodNotAllowed, fmt.Errorf("%s is not served: this server only reads (GET, HEAD)", r.Method))
		return
	}
	if !s.opts.AnyHost && !loopbackHost(r.Host) {
		s.fail(w, r, http.StatusForbidden, fmt.Errorf("host %q is not a loopback name: this server answers requests for localhost, 127.0.0.1 or [::1] only", r.Host))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names the loopback
// interface: localhost, or a loopback address, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve answers requests on ln until ctx ends, then shuts down: the live
// pages' streams are ended and the requests under way get a few seconds
// to finish. It returns nil once stopped by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	cancel() // ends the event streams, which never go idle by themselves
	sctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := srv.Shutdown(sctx)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// idPattern is what a voyage id, or a prefix of one, may hold.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F-]{1,36}$`) })

// hashPattern is an artifact's address: a BLAKE3-256 hash in hex.
var hashPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// httpError is an error with the status it answers with, and what to do
// about it when the page should say.
type httpError struct {
	status int
	err    error
	hint   string
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// voyageID resolves the {id} of a request's path: a full id or an
// unambiguous prefix, never a path.
func (s *Server) voyageID(r *http.Request) (string, error) {
	raw := r.PathValue("id")
	if strings.ContainsAny(raw, `/\`) || strings.Contains(raw, "..") || !idPattern().MatchString(raw) {
		return "", &httpError{status: http.StatusBadRequest, err: fmt.Errorf("%q is not a voyage id or a prefix of one", raw)}
	}
	id, err := s.home.Resolve(r.Context(), raw)
	switch {
	case errors.Is(err, helm.ErrNoVoyage):
		return "", &httpError{status: http.StatusNotFound, err: err}
	case errors.Is(err, helm.ErrAmbiguous):
		return "", &httpError{status: http.StatusBadRequest, err: err}
	case err != nil:
		return "", err
	}
	return id, nil
}

// artifactHash checks the {hash} of a request's path.
func artifactHash(r *http.Request) (string, error) {
	h := r.PathValue("hash")
	if !hashPattern().MatchString(h) {
		return "", &httpError{status: http.StatusBadRequest, err: fmt.Errorf("%q is not an artifact hash (64 lowercase hex digits)", h)}
	}
	return h, nil
}

// openVoyage opens the voyage the request names. A voyage that cannot be
// opened (damaged) is a 500 whose page says why.
func (s *Server) openVoyage(r *http.Request) (*helm.Voyage, error) {
	id, err := s.voyageID(r)
	if err != nil {
		return nil, err
	}
	v, err := s.home.Voyage(r.Context(), id)
	if errors.Is(err, helm.ErrNoVoyage) {
		return nil, &httpError{status: http.StatusNotFound, err: err}
	}
	return v, err
}

// errorPage is what the error template shows.
type errorPage struct {
	Status  int
	Title   string
	Message string
	Hint    string
}

// fail answers with err's page: status, or err's own when it is an
// *httpError, or 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	p := errorPage{Status: status, Title: http.StatusText(status), Message: err.Error()}
	if h := helm.HintOf(err); h.Text != "" {
		p.Hint = h.Text
	}
	if he != nil && he.hint != "" {
		p.Hint = he.hint
	}
	if errors.Is(err, helm.ErrDamaged) {
		p.Title = "Damaged voyage"
	}
	s.render(w, r, status, "error", p)
}

// render executes the page's template into a buffer first, so that a
// failing template is a clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var b strings.Builder
	if err := s.pages[page].ExecuteTemplate(&b, "layout", data); err != nil {
		if page == "error" {
			http.Error(w, "helm: cannot render the error page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		s.fail(w, r, http.StatusInternalServerError, fmt.Errorf("render %s: %w", page, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (s *Server) chromaCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(s.chroma)
}
