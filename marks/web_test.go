package marks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// webServer serves fixtures on loopback only; tests never touch any other
// network.
func webServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-B", "2")
		w.Header().Add("X-A", "1")
		fmt.Fprint(w, "héllo")
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0x00, 0xff})
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(marks.WebBodyCap+10))
		fmt.Fprint(w, strings.Repeat("x", marks.WebBodyCap+10))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebRecordsResponses(t *testing.T) {
	srv := webServer(t)
	observe := func(t *testing.T, url string) *sighting.Web {
		t.Helper()
		m, err := marks.NewWeb(url)
		require.NoError(t, err)
		s, err := m.Observe(context.Background(), nil)
		require.NoError(t, err)
		return s.(*sighting.Web)
	}
	t.Run("text", func(t *testing.T) {
		got := observe(t, srv.URL+"/text")
		assert.Equal(t, 200, got.Status)
		assert.Equal(t, sighting.TextContent("héllo"), got.Body)
		assert.Equal(t, []string{"1"}, got.Headers["X-A"])
		assert.Empty(t, got.Error)
		data, err := sighting.Marshal(got)
		require.NoError(t, err)
		assert.Less(t, strings.Index(string(data), `"X-A"`), strings.Index(string(data), `"X-B"`), "headers encode with sorted keys")
	})
	t.Run("binary", func(t *testing.T) {
		got := observe(t, srv.URL+"/binary")
		assert.Equal(t, sighting.BinaryContent(6), got.Body)
	})
	t.Run("404 is an observation", func(t *testing.T) {
		got := observe(t, srv.URL+"/missing")
		assert.Equal(t, 404, got.Status)
		assert.Empty(t, got.Error)
	})
	t.Run("redirects are followed and recorded", func(t *testing.T) {
		got := observe(t, srv.URL+"/hop/1")
		assert.Equal(t, srv.URL+"/text", got.URL)
		assert.Equal(t, []string{srv.URL + "/text"}, got.Redirects)
		assert.Equal(t, "héllo", got.Body.Text)
	})
	t.Run("redirect loop stops at the limit", func(t *testing.T) {
		got := observe(t, srv.URL+"/loop")
		assert.Contains(t, got.Error, "stopped after 10 redirects")
		assert.Len(t, got.Redirects, marks.WebMaxRedirects)
	})
	t.Run("huge body is capped with a marker", func(t *testing.T) {
		got := observe(t, srv.URL+"/huge")
		assert.True(t, got.Body.Truncated)
		assert.True(t, strings.HasSuffix(got.Body.Text, "\n… [truncated 10 bytes]"))
	})
	t.Run("refused connection is an observation", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		got := observe(t, url+"/")
		assert.Zero(t, got.Status)
		assert.Contains(t, got.Error, "refused")
	})
}

func TestNewWebCanonicalises(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "lower-cases scheme and host, adds path", in: "HTTPS://Example.COM", want: "https://example.com/"},
		{name: "drops default port and fragment", in: "http://example.com:80/a?b=1#frag", want: "http://example.com/a?b=1"},
		{name: "keeps other ports", in: "http://127.0.0.1:8080/x", want: "http://127.0.0.1:8080/x"},
		{name: "IPv6", in: "http://[::1]:443/", want: "http://[::1]:443/"},
		{name: "not http", in: "ftp://example.com/", wantErr: "not http or https"},
		{name: "relative", in: "/just/a/path", wantErr: "not http or https"},
		{name: "no host", in: "https:///x", wantErr: "no host"},
		{name: "credentials", in: "https://me:hunter2@example.com/", wantErr: "carries credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := marks.NewWeb(tt.in)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, marks.ErrInvalid)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.URL)
		})
	}
}
