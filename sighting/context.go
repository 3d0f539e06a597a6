package sighting

func init() {
	Register("context", func() Sighting { return &Context{} })
}

// Context answers a context mark. Human-provided context has no source to
// look at, so the sighting echoes the description.
type Context struct {
	Description string `json:"description"`
}

// Kind returns "context".
func (*Context) Kind() string { return "context" }
