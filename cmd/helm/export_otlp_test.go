package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// otlpHarness records a voyage with a note and a sub-voyage.
func otlpHarness(t *testing.T) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	id := h.start("Resolve #42: fix widget crash")
	h.at(1)
	h.ok("note", "Asking for a review.")
	h.at(2)
	sub := strings.TrimSpace(h.ok("voyage", "new", "--as", "ann", "--parent", id, "Review the fix"))
	h.at(3)
	h.ok("--voyage", sub, "note", "--as", "ann", "Reads well.")
	return h, id
}

// received is what a stand-in collector was sent.
type received struct {
	Method, Path, ContentType string
	Header                    http.Header
	Body                      []byte
}

// collector is an httptest server that answers status and body to every
// request and keeps what it received.
func collector(t *testing.T, status int, body string) (*httptest.Server, func() []received) {
	t.Helper()
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Header: r.Header.Clone(), Body: b})
		mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func TestVoyageExportOTLPWritesOneLineOfOTLPJSON(t *testing.T) {
	t.Parallel()
	h, id := otlpHarness(t)
	out := h.ok("voyage", "export", id, "--format", "otlp")
	require.True(t, strings.HasSuffix(out, "\n"))
	require.Equal(t, 1, strings.Count(out, "\n"), "one ExportTraceServiceRequest a line, as the file exporter writes")
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 4, td.SpanCount(), "two voyages, a note each")
	assert.Equal(t, out, h.ok("voyage", "export", id, "--format", "otlp"), "the same trace every time")

	assert.Equal(t, "Exported voyage "+id[:8]+" (otlp) to trace.jsonl\n", h.ok("voyage", "export", id, "--format", "otlp", "-o", "trace.jsonl"))
	data, err := os.ReadFile(filepath.Join(h.Dir, "trace.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, out, string(data))
}

func TestVoyageExportOTLPEndpointSendsProtobuf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, wantPath string
	}{
		{name: "no path gets /v1/traces", path: "", wantPath: "/v1/traces"},
		{name: "a bare slash gets /v1/traces", path: "/", wantPath: "/v1/traces"},
		{name: "a path is kept", path: "/api/public/otel/v1/traces", wantPath: "/api/public/otel/v1/traces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, id := otlpHarness(t)
			srv, got := collector(t, http.StatusOK, "")
			head := h.ok("voyage", "head", id)
			out := h.ok("voyage", "export", id, "--otlp-endpoint", srv.URL+tt.path,
				"--otlp-header", "Authorization=Bearer s3cr3t", "--otlp-header", "x-honeycomb-team=team key")
			assert.Equal(t, "Sent voyage "+id[:8]+" (4 spans) to "+srv.URL+tt.wantPath+"\n", out)
			reqs := got()
			require.Len(t, reqs, 1)
			r := reqs[0]
			assert.Equal(t, http.MethodPost, r.Method)
			assert.Equal(t, tt.wantPath, r.Path)
			assert.Equal(t, "application/x-protobuf", r.ContentType)
			assert.Equal(t, "Bearer s3cr3t", r.Header.Get("Authorization"))
			assert.Equal(t, "team key", r.Header.Get("X-Honeycomb-Team"))
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r.Body)
			require.NoError(t, err, "the body is an ExportTraceServiceRequest")
			assert.Equal(t, 4, td.SpanCount())
			want, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(h.ok("voyage", "export", id, "--format", "otlp")))
			require.NoError(t, err)
			assert.Equal(t, want, td, "the trace sent is the trace written")
			assert.Equal(t, head, h.ok("voyage", "head", id), "an export never writes to the voyage")
		})
	}
}

func TestVoyageExportOTLPEndpointJSONSaysWhereAndHowMany(t *testing.T) {
	t.Parallel()
	h, id := otlpHarness(t)
	srv, _ := collector(t, http.StatusOK, "")
	var res exportResult
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "export", id, "--otlp-endpoint", srv.URL, "--json")), &res))
	assert.Equal(t, exportResult{Voyage: id, Format: "otlp", Endpoint: srv.URL + "/v1/traces", Spans: 4}, res)
}

func TestVoyageExportOTLPEndpointRefusedIsAnErrorNamingIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		want     []string
		wantHint string
	}{
		{name: "bad request", status: http.StatusBadRequest, body: "proto: cannot parse invalid wire-format data", want: []string{"HTTP 400 Bad Request", "proto: cannot parse invalid wire-format data"}, wantHint: "Try: check the endpoint's URL and path"},
		{name: "unauthorized", status: http.StatusUnauthorized, body: "missing API key", want: []string{"HTTP 401 Unauthorized", "missing API key"}, wantHint: "--otlp-header NAME=VALUE"},
		{name: "not found", status: http.StatusNotFound, body: "404 page not found", want: []string{"HTTP 404 Not Found"}, wantHint: "appends /v1/traces only to a URL with no path"},
		{name: "unavailable", status: http.StatusServiceUnavailable, want: []string{"HTTP 503 Service Unavailable"}, wantHint: "send again later"},
		{name: "a long body is cut", status: http.StatusInternalServerError, body: strings.Repeat("x", 4096), want: []string{"HTTP 500", strings.Repeat("x", otlpBodyShown) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, id := otlpHarness(t)
			srv, got := collector(t, tt.status, tt.body)
			head := h.ok("voyage", "head", id)
			r := h.fails(exitFailed, "voyage", "export", id, "--otlp-endpoint", srv.URL, "--otlp-header", "Authorization=Bearer s3cr3t")
			assert.Contains(t, r.Stderr, srv.URL+"/v1/traces", "the endpoint is named")
			assert.Contains(t, r.Stderr, id, "the voyage is named")
			for _, w := range tt.want {
				assert.Contains(t, r.Stderr, w)
			}
			assert.NotContains(t, r.Stderr, strings.Repeat("x", otlpBodyShown+1))
			assert.Contains(t, r.Stderr, tt.wantHint)
			assert.NotContains(t, r.Stderr, "s3cr3t", "a header's value is never printed")
			assert.Empty(t, r.Stdout)
			assert.Len(t, got(), 1, "one request: helm does not retry by itself")
			assert.Equal(t, head, h.ok("voyage", "head", id), "nothing recorded")
		})
	}
}

func TestVoyageExportOTLPEndpointUnreachableNamesItWithoutItsCredentials(t *testing.T) {
	t.Parallel()
	h, id := otlpHarness(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close() // nothing listens there now
	r := h.fails(exitFailed, "voyage", "export", id, "--otlp-endpoint", "http://user:hunter2@"+addr+"?key=k3y")
	assert.Contains(t, r.Stderr, "http://"+addr+"/v1/traces")
	assert.Contains(t, r.Stderr, "connection refused")
	assert.Contains(t, r.Stderr, "Try: check that an OTLP/HTTP collector listens at")
	assert.NotContains(t, r.Stderr, "hunter2", "a password in the URL is never printed")
	assert.NotContains(t, r.Stderr, "k3y", "nor a key in its query")
}

func TestVoyageExportOTLPUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "not a URL", args: []string{"--otlp-endpoint", "127.0.0.1:4318"}, want: "not an http or https URL"},
		{name: "another scheme", args: []string{"--otlp-endpoint", "grpc://127.0.0.1:4317"}, want: "not an http or https URL"},
		{name: "a header with no value", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header", "Authorization"}, want: `--otlp-header "Authorization" is not NAME=VALUE`},
		{name: "a header with a line break", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header", "A=b\r\nX-Injected: 1"}, want: "is not NAME=VALUE"},
		{name: "a header with no endpoint", args: []string{"--otlp-header", "A=b"}, want: "go with --otlp-endpoint"},
		{name: "a timeout with no endpoint", args: []string{"--otlp-timeout", "3s"}, want: "go with --otlp-endpoint"},
		{name: "a zero timeout", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-timeout", "0s"}, want: "not positive"},
		{name: "another format", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "--format", "md"}, want: "--format md is not one"},
		{name: "an output file too", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "-o", "t.jsonl"}, want: "give one of them"},
		{name: "json on standard output", args: []string{"--format", "otlp", "--json"}, want: "--json and --format otlp disagree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, id := otlpHarness(t)
			r := h.fails(exitUsage, append([]string{"voyage", "export", id}, tt.args...)...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Regexp(t, `Try: |"try":`, r.Stderr, "a Try: line, or a try under --json")
			assert.NotContains(t, r.Stderr, "X-Injected: 1\n")
		})
	}
}
