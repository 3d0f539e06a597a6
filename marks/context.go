package marks

import (
	"context"
	"strings"

	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("context", func() Mark { return &Context{} })
}

// Context is human-provided context with no source helm can look at: an
// offline conversation, a decision made elsewhere, background knowledge.
// Observing it never fails; the sighting echoes the description.
type Context struct {
	Description string `json:"description"`
}

// NewContext returns a context mark. The description is trimmed and must
// not be empty.
func NewContext(description string) (*Context, error) {
	d := strings.TrimSpace(description)
	if err := checkDescription(d); err != nil {
		return nil, err
	}
	return &Context{Description: d}, nil
}

func checkDescription(d string) error {
	if strings.TrimSpace(d) == "" {
		return invalidf("context", "empty description (say what the context is about)")
	}
	if err := safetext.Check("description", d); err != nil {
		return invalidf("context", "%v", err)
	}
	return nil
}

// Validate applies NewContext's checks to m, which may have been decoded
// rather than constructed.
func (m *Context) Validate() error { return checkDescription(m.Description) }

// Kind returns "context".
func (*Context) Kind() string { return "context" }

// Key is "context:" and the trimmed description: the same words are one
// slate entry.
func (m *Context) Key() string { return "context:" + strings.TrimSpace(m.Description) }

// contextWidth is how many characters of a description String shows.
const contextWidth = 72

// String renders "Context: DESCRIPTION" on one line, cutting descriptions
// longer than 72 characters with "…".
func (m *Context) String() string { return "Context: " + shorten(m.Description, contextWidth) }

// Observe echoes the description.
func (m *Context) Observe(context.Context, *Env) (sighting.Sighting, error) {
	return &sighting.Context{Description: m.Description}, nil
}
