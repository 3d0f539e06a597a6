package marks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/internal/utf8x"
	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("web", func() Mark { return &Web{} })
}

const (
	// WebTimeout bounds a whole web observation (connect, redirects and
	// body) when Env.HTTPClient is nil.
	WebTimeout = 30 * time.Second
	// WebMaxRedirects is how many redirects the default client follows,
	// as many as browsers tolerate before calling it a loop.
	WebMaxRedirects = 10
	// WebBodyCap is how many body bytes a web sighting keeps; beyond it
	// the body is cut, Body.Truncated is set and the rest is not
	// downloaded.
	WebBodyCap = 4 << 20
)

// Web fetches a URL with an HTTP GET and records the final response:
// status, headers, and body (text, or binary by size). Redirects are
// followed up to WebMaxRedirects. An error status is an ordinary
// observation; so is a request that got no response (Error says why).
type Web struct {
	// URL is an absolute http or https URL in canonical form: scheme and
	// host lower-cased, default port and fragment dropped, empty path "/".
	URL string `json:"url"`
}

// NewWeb returns a mark fetching rawURL, which must be an absolute http or
// https URL.
func NewWeb(rawURL string) (*Web, error) {
	c, err := canonicalURL(rawURL)
	if err != nil {
		return nil, invalidf("web", "%v", err)
	}
	return &Web{URL: c}, nil
}

// Validate applies NewWeb's checks to m, which may have been decoded rather
// than constructed: an absolute http or https URL without credentials.
func (m *Web) Validate() error {
	if _, err := canonicalURL(m.URL); err != nil {
		return invalidf("web", "%v", err)
	}
	return nil
}

func canonicalURL(raw string) (string, error) {
	if err := safetext.Check("URL", raw); err != nil { // not quoted: it may hold credentials
		return "", err
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("bad URL %q: %v", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("URL %q is not http or https (give a full URL such as https://example.com/)", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("URL %q has no host", raw)
	}
	if u.User != nil {
		// Marks are stored in the event log and shown in the logbook.
		return "", fmt.Errorf("URL %q carries credentials; helm would store them in the log", u.Redacted())
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	u.Host = host
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	if port != "" {
		u.Host += ":" + port
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// Kind returns "web".
func (*Web) Kind() string { return "web" }

// Key is "web:" and the canonical URL.
func (m *Web) Key() string {
	if c, err := canonicalURL(m.URL); err == nil {
		return "web:" + c
	}
	return "web:" + m.URL
}

// String renders "Web: URL".
func (m *Web) String() string { return "Web: " + m.URL }

// Observe fetches the URL. It returns an error only when ctx is done;
// failures to get a response are recorded in the sighting. With
// Env.HTTPClient set, that client's timeout and redirect policy apply and
// Redirects stays empty.
func (m *Web) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	s := &sighting.Web{URL: m.URL}
	var redirects []string
	client := defaultWebClient(&redirects)
	if env != nil && env.HTTPClient != nil {
		client = env.HTTPClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL, nil)
	if err != nil {
		s.Error = err.Error()
		return s, nil
	}
	req.Header.Set("User-Agent", "helm (+https://github.com/helmlog/helm)")
	resp, err := client.Do(req)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("web %s: %w", m.URL, ctx.Err())
	}
	s.Redirects = redirects
	if err != nil {
		s.Error = err.Error()
		return s, nil
	}
	defer resp.Body.Close()
	s.URL = resp.Request.URL.String()
	s.Status = resp.StatusCode
	s.Headers = map[string][]string(resp.Header.Clone())

	body, err := io.ReadAll(io.LimitReader(resp.Body, WebBodyCap+1))
	if ctx.Err() != nil {
		return nil, fmt.Errorf("web %s: %w", m.URL, ctx.Err())
	}
	if err != nil {
		s.Body = sighting.ErrorContent("reading body: " + err.Error())
		return s, nil
	}
	truncated := len(body) > WebBodyCap
	if truncated {
		body = body[:WebBodyCap]
	}
	text := body
	if truncated {
		text = body[:utf8x.CompleteRunes(body)] // do not count a rune cut in half as binary
	}
	if utf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
		s.Body = sighting.TextContent(string(text))
		if truncated {
			s.Body.Text += truncationMarker(resp.ContentLength, len(text))
		}
	} else {
		s.Body = sighting.BinaryContent(uint64(len(body)))
	}
	s.Body.Truncated = truncated
	return s, nil
}

func truncationMarker(contentLength int64, kept int) string {
	if contentLength > int64(kept) {
		return fmt.Sprintf("\n… [truncated %d bytes]", contentLength-int64(kept))
	}
	return "\n… [truncated]"
}

// defaultWebClient is used when Env.HTTPClient is nil: WebTimeout overall,
// at most WebMaxRedirects redirects, each recorded in *redirects.
func defaultWebClient(redirects *[]string) *http.Client {
	return &http.Client{
		Timeout: WebTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > WebMaxRedirects {
				return errTooManyRedirects
			}
			*redirects = append(*redirects, req.URL.String())
			return nil
		},
	}
}

var errTooManyRedirects = fmt.Errorf("stopped after %d redirects", WebMaxRedirects)
