package sighting

func init() {
	Register("web", func() Sighting { return &Web{} })
}

// Web answers a web mark: the final response of an HTTP GET after
// redirects. A 404 or 500 is an ordinary observation; a request that got no
// response at all (refused, timed out, too many redirects) has Error set.
type Web struct {
	// URL is the URL of the final response, after redirects.
	URL string `json:"url"`
	// Redirects lists the URLs redirected to, in order.
	Redirects []string `json:"redirects,omitzero"`
	// Status is the response status code, such as 200; 0 with Error.
	Status int `json:"status,omitempty"`
	// Headers are the response headers, canonical names, encoded with
	// sorted keys.
	Headers map[string][]string `json:"headers,omitzero"`
	// Body is the response body: text, binary (size only), or error when
	// reading it failed part-way. Bodies beyond the observer's cap are
	// truncated, with Body.Truncated set.
	Body  FileContent `json:"body"`
	Error string      `json:"error,omitempty"`
}

// Kind returns "web".
func (*Web) Kind() string { return "web" }
