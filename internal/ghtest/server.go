// Package ghtest is a loopback stand-in for GitHub's REST API that the real
// `gh` binary talks to, so helm's GitHub marks and actions are tested
// end to end without the network.
//
// NewServer starts an httptest TLS server on 127.0.0.1 serving the REST
// endpoints helm uses under /api/v3/ (as GitHub Enterprise does) from
// in-memory state: repositories, issues, pull requests (which share the
// issue numbers, as on GitHub), issue comments, reviews, inline review
// comments and check runs. Its certificate's CA is written to a PEM file.
// Env returns the environment that points gh at it:
//
//	srv := ghtest.NewServer(t)
//	srv.AddRepo("octo/widgets", "main")
//	n := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "crash"})
//	r := srv.Runner(t, "")                  // a *runner.Runner with srv.Env()
//	out, err := r.GH(ctx, "api", "repos/octo/widgets/issues/1")
//	srv.Calls()                             // ["GET repos/octo/widgets/issues/1"]
//
// Every request is recorded (Requests, Calls) with its decoded JSON body,
// and Fail makes one path answer with an error status and a GitHub-style
// {"message": ...} body, so tests can show that failures reach the caller.
//
// GitRepo makes a local working repository whose origin URL names the
// stand-in's repository (https://127.0.0.1:PORT/OWNER/NAME.git, from which
// helm derives OWNER/NAME) while its push URL is a local bare repository:
// `git push origin BRANCH` works offline, and the stand-in checks a pull
// request's head branch against that bare repository, as GitHub does.
//
// If gh is not installed, NewServer fails the test with a message naming
// ./test (which builds gh when it is missing) and `apt-get install gh`:
// the GitHub tests never skip silently.
package ghtest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/helmlog/helm/runner"
)

// Token is the token the stand-in accepts; any other is "Bad credentials".
const Token = "ghtest-token-5a1e"

// Login is the user every write is attributed to.
const Login = "helm-bot"

// Server is the running stand-in. Its methods are safe for concurrent use.
type Server struct {
	// URL is https://127.0.0.1:PORT.
	URL string
	// Host is 127.0.0.1:PORT, the value of GH_HOST.
	Host string
	// CAFile is the PEM file holding the server's certificate.
	CAFile string

	srv *httptest.Server

	mu       sync.Mutex
	repos    map[string]*repoState
	requests []Request
	failures []failure
	pageSize int
	nextID   int64
	tokens   map[string]string // token -> login, besides Token
}

// Request is one request the stand-in received.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the REST path without /api/v3/ and query, as given to
	// `gh api`: "repos/o/r/pulls/1".
	Path string
	// Query is the decoded query string.
	Query url.Values
	// Accept is the Accept header (the diff focus asks for
	// application/vnd.github.diff).
	Accept string
	// Body is the decoded JSON body, nil when there was none.
	Body map[string]any
	// Token is the token the request was authorised with ("" for none).
	Token string
}

// String reads "GET repos/o/r/issues?state=open", the query's per_page
// and page (gh's pagination) left out.
func (r Request) String() string {
	q := url.Values{}
	for k, v := range r.Query {
		if k != "per_page" && k != "page" {
			q[k] = v
		}
	}
	s := r.Method + " " + r.Path
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

type failure struct {
	method, path string
	status       int
	message      string
}

// NewServer starts the stand-in and stops it when the test ends. It fails
// the test at once if gh is not installed.
func NewServer(t testing.TB) *Server {
	t.Helper()
	RequireGH(t)
	s := &Server{repos: map[string]*repoState{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	s.Host = strings.TrimPrefix(s.srv.URL, "https://")
	s.CAFile = filepath.Join(t.TempDir(), "ghtest-ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	if err := os.WriteFile(s.CAFile, ca, 0o600); err != nil {
		t.Fatalf("ghtest: write CA: %v", err)
	}
	return s
}

// AddToken makes the stand-in accept token as login's, besides Token:
// tests of several identities give each its own, and Requests says which
// token each request carried.
func (s *Server) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[string]string{}
	}
	s.tokens[token] = login
}

// HostEnv is Env without the token: it points gh at the stand-in, and
// each identity authenticates with its own configuration (gh auth login).
func (s *Server) HostEnv() []string {
	var out []string
	for _, kv := range s.Env() {
		if !strings.HasPrefix(kv, "GH_ENTERPRISE_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}

// RequireGH fails the test with an install hint when gh is not in PATH.
func RequireGH(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Fatalf("ghtest: the GitHub CLI `gh` is not installed (%v); run the tests with ./test, which builds gh from the Go module proxy when it is missing, or install it (`apt-get install gh`) — helm's GitHub tests run the real gh against a loopback stand-in", err)
	}
}

// Env is the environment that points gh at the stand-in: GH_HOST,
// GH_ENTERPRISE_TOKEN, SSL_CERT_FILE and the switches that keep gh quiet.
func (s *Server) Env() []string {
	return []string{
		"GH_HOST=" + s.Host,
		"GH_ENTERPRISE_TOKEN=" + Token,
		"SSL_CERT_FILE=" + s.CAFile,
		"GH_PROMPT_DISABLED=1",
		"GH_NO_UPDATE_NOTIFIER=1",
		"NO_COLOR=1",
	}
}

// Runner returns a runner for identity "helm-test" with a fresh helm home,
// working in dir ("" for the process's directory), talking to the stand-in.
func (s *Server) Runner(t testing.TB, dir string) *runner.Runner {
	return &runner.Runner{Home: t.TempDir(), Identity: "helm-test", Dir: dir, Env: s.Env()}
}

// Requests returns a copy of the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns the requests as "METHOD path?query" lines (see
// Request.String), oldest first.
func (s *Server) Calls() []string {
	reqs := s.Requests()
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.String()
	}
	return out
}

// ClearRequests forgets the requests received so far.
func (s *Server) ClearRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Fail makes every request for path (as in Request.Path, e.g.
// "repos/o/r/pulls/1/files") with method ("" for any) answer status with
// a GitHub-style body {"message": message, "documentation_url": ...}.
func (s *Server) Fail(method, path string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{method: method, path: strings.Trim(path, "/"), status: status, message: message})
}

// SetPageSize caps the page size of list endpoints (GitHub's is 30 by
// default, at most 100), so tests can show that --paginate follows pages.
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v3"), "/")
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	req := Request{Method: r.Method, Path: path, Query: r.URL.Query(), Accept: r.Header.Get("Accept"), Token: token}
	if r.Body != nil {
		var body map[string]any
		dec := json.NewDecoder(r.Body)
		if err := dec.Decode(&body); err == nil {
			req.Body = body
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)

	login, known := s.tokens[token]
	if token == Token {
		login, known = Login, true
	}
	switch {
	case r.URL.Path == "/api/graphql" && known:
		// gh auth login asks who the token belongs to; nothing else here
		// speaks GraphQL.
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"viewer": map[string]any{"login": login}}})
		return
	case r.URL.Path == "/api/v3/user" && r.Method == http.MethodGet && known:
		writeJSON(w, http.StatusOK, map[string]any{"login": login, "type": "User"})
		return
	case r.URL.Path == "/api/v3/" && known:
		// gh auth login checks the token's scopes here.
		w.Header().Set("X-Oauth-Scopes", "repo, read:org, gist")
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	case !strings.HasPrefix(r.URL.Path, "/api/v3/"):
		writeError(w, http.StatusNotFound, "Not Found")
		return
	case !known:
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	for _, f := range s.failures {
		if f.path == path && (f.method == "" || f.method == r.Method) {
			writeError(w, f.status, f.message)
			return
		}
	}
	s.route(w, r, req)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	})
}

func validationFailed(w http.ResponseWriter, resource, field, code string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Validation Failed",
		"errors":            []map[string]string{{"resource": resource, "field": field, "code": code}},
		"documentation_url": "https://docs.github.com/rest",
	})
}

// paginate writes one page of items with GitHub's Link header.
func (s *Server) paginate(w http.ResponseWriter, r *http.Request, items []any) {
	q := r.URL.Query()
	per := 30
	if n, err := atoi(q.Get("per_page")); err == nil && n > 0 {
		per = min(n, 100)
	}
	if s.pageSize > 0 {
		per = min(per, s.pageSize)
	}
	page := 1
	if n, err := atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	if end < len(items) {
		q.Set("page", fmt.Sprint(page+1))
		q.Set("per_page", fmt.Sprint(per))
		next := s.URL + r.URL.Path + "?" + q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next))
	}
	pg := items[start:end]
	if pg == nil {
		pg = []any{}
	}
	writeJSON(w, http.StatusOK, pg)
}
