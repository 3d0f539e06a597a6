package marks

import (
	"context"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("rust-project", func() Mark { return &RustProject{} })
}

// RustProject is a Rust project rooted at a directory: an orientation mark.
// It lists the whole tree (honouring .gitignore, skipping target/ at any
// depth) and reads documentation only — README, CHANGELOG, VISION,
// CHARTER, CONTRIBUTING, DESIGN, LICENSE*, agent instructions (AGENTS.md,
// CLAUDE.md, copilot-instructions.md, .cursorrules) anywhere, Markdown in
// the root or docs/ — and every Cargo.toml. Source is not read: orient
// first, then target files with a file-contents mark.
type RustProject struct {
	// Root is the project directory, cleaned; relative roots resolve
	// against Env.Dir.
	Root string `json:"root"`
	Anchor
}

// NewRustProject returns a mark observing the Rust project at root.
func NewRustProject(root string) (*RustProject, error) {
	r, err := cleanPath("rust-project", "path", root)
	if err != nil {
		return nil, err
	}
	return &RustProject{Root: r}, nil
}

// Validate applies NewRustProject's checks to m, which may have been
// decoded rather than constructed.
func (m *RustProject) Validate() error {
	if _, err := cleanPath(m.Kind(), "path", m.Root); err != nil {
		return err
	}
	return m.Anchor.validate(m.Kind())
}

// Kind returns "rust-project".
func (*RustProject) Kind() string { return "rust-project" }

// Key is `rust-project:"ROOT"`.
func (m *RustProject) Key() string { return projectKey(m.Kind(), m.abs(m.Root)) }

// String renders "RustProject @ ROOT", such as "RustProject @ .".
func (m *RustProject) String() string { return "RustProject @ " + m.Root }

// Observe walks the project once, reading documentation as it goes. It
// fails when the root is missing or not a directory, or ctx is cancelled.
func (m *RustProject) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	v := &projectVisitor{ctx: ctx, extra: func(name string) bool { return name == "Cargo.toml" }}
	listings, err := walkTree(ctx, env.resolve(m.abs(m.Root)), walkOptions{
		maxDepth: -1,
		skipDirs: map[string]bool{"target": true},
		visit: func(fsDir string, l *sighting.DirectoryListing) error {
			v.visit(fsDir, l)
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &sighting.RustProject{Listings: listings, Contents: nonNil(v.contents)}, nil
}

// nonNil makes an empty result encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
