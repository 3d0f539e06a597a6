package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/otlp"
)

// otlpTracesPath is where an OTLP/HTTP receiver takes traces, appended to
// an endpoint given with no path, as the OTLP exporter's specification
// does for OTEL_EXPORTER_OTLP_ENDPOINT.
const otlpTracesPath = "/v1/traces"

// otlpBodyShown bounds how much of a refusing receiver's body an error
// quotes.
const otlpBodyShown = 512

// voyageTrace is the trace of voyage v and its sub-voyages.
func (a *app) voyageTrace(ctx context.Context, v *helm.Voyage) (*otlp.Traces, error) {
	h, err := a.openHome()
	if err != nil {
		return nil, err
	}
	return otlp.Trace(ctx, h, v, &otlp.Options{ServiceVersion: readVersion().Version})
}

// writeOTLP writes the trace of v as one line of OTLP/JSON.
func (a *app) writeOTLP(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	td, err := a.voyageTrace(ctx, v)
	if err != nil {
		return err
	}
	b, err := otlp.JSON(td)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// otlpTarget is where --otlp-endpoint sends a trace: the URL to POST to
// and the headers to send with it.
type otlpTarget struct {
	url     *url.URL
	headers http.Header
	timeout time.Duration
}

// parseOTLPTarget checks --otlp-endpoint, --otlp-header and
// --otlp-timeout; what is wrong with them is a usage error.
func parseOTLPTarget(endpoint string, headers []string, timeout time.Duration) (*otlpTarget, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL may hold a credential: it is not quoted.
		return nil, &usageError{
			Err:  errors.New("voyage export: --otlp-endpoint is not an http or https URL with a host"),
			Hint: "give the OTLP/HTTP endpoint of a collector, e.g. --otlp-endpoint http://127.0.0.1:4318",
		}
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = otlpTracesPath
	}
	if timeout <= 0 {
		return nil, &usageError{Err: fmt.Errorf("voyage export: --otlp-timeout %s is not positive", timeout), Hint: "give how long to wait for the collector, e.g. --otlp-timeout 10s"}
	}
	t := &otlpTarget{url: u, headers: http.Header{}, timeout: timeout}
	for _, kv := range headers {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			// The value may be a credential: only its name is quoted.
			return nil, &usageError{
				Err:  fmt.Errorf("voyage export: --otlp-header %q is not NAME=VALUE", printable(k)),
				Hint: "give each header as NAME=VALUE, e.g. --otlp-header 'Authorization=Bearer TOKEN'",
			}
		}
		t.headers.Add(k, strings.TrimSpace(v))
	}
	return t, nil
}

// sendOTLP POSTs the trace of v to t as OTLP/HTTP protobuf and returns
// how many spans it sent. A receiver that does not answer 2xx is an error
// naming the endpoint, the status and the start of its body.
func (a *app) sendOTLP(ctx context.Context, v *helm.Voyage, t *otlpTarget) (int, error) {
	td, err := a.voyageTrace(ctx, v)
	if err != nil {
		return 0, err
	}
	body, err := otlp.Proto(td)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	where := shownEndpoint(t.url)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("voyage export: send to %s: %w", where, err)
	}
	for k, vs := range t.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "helm/"+readVersion().Version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var hint string
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			hint = fmt.Sprintf("the collector did not answer within %s: check that it runs at %s, or give a longer --otlp-timeout", t.timeout, where)
		default:
			hint = fmt.Sprintf("check that an OTLP/HTTP collector listens at %s (its port is usually 4318)", where)
		}
		// url.Error quotes the URL unredacted: say it once, redacted.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, &hinted{Err: fmt.Errorf("voyage export: send voyage %s to %s: %w", v.ID(), where, err), Hint: hint}
	}
	defer resp.Body.Close()
	shown, _ := io.ReadAll(io.LimitReader(resp.Body, otlpBodyShown+1))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return td.SpanCount(), nil
	}
	text := strings.TrimSpace(string(bytes.ToValidUTF8(shown, []byte("?"))))
	if len(shown) > otlpBodyShown {
		text = strings.TrimSpace(string(bytes.ToValidUTF8(shown[:otlpBodyShown], []byte("?")))) + "…"
	}
	msg := fmt.Sprintf("voyage export: send voyage %s to %s: HTTP %s", v.ID(), where, resp.Status)
	if text != "" {
		msg += ": " + text
	}
	hint := "check the endpoint's URL and path (helm appends " + otlpTracesPath + " only to a URL with no path)"
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = "give the collector's credentials with --otlp-header NAME=VALUE (e.g. 'Authorization=Bearer TOKEN')"
	case http.StatusRequestEntityTooLarge:
		hint = "raise the collector's request size limit: a voyage is sent as one request"
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		hint = "the collector is busy or down: send again later (the same spans keep their ids, so a viewer keeps one copy)"
	}
	return 0, &hinted{Err: errors.New(msg), Hint: hint}
}

// shownEndpoint is u for messages and --json: without its user
// information (a password, or a user name that may be a token) and its
// query (some receivers take a key there).
func shownEndpoint(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = "…"
	}
	return printable(c.String())
}
