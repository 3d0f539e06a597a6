package marks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("directory-tree", func() Mark { return &DirectoryTree{} })
}

// DirectoryTree is a recursive listing of a directory: one listing per
// directory with each entry's name, kind and size. It honours .gitignore as
// git does (see the walk's rules below), always skips .git, lists symbolic
// links without following them, and records unreadable directories as
// listings with an error.
type DirectoryTree struct {
	// Root is the directory to walk, cleaned; relative roots resolve
	// against Env.Dir.
	Root string `json:"root"`
	Anchor
	// Skip names entries omitted at any depth (node_modules, .DS_Store),
	// sorted and without duplicates.
	Skip []string `json:"skip,omitzero"`
	// MaxDepth, when set, is the deepest directory listed: 0 lists the
	// root only, 1 the root and its subdirectories, and so on. Directories
	// below the limit still appear as entries in their parent's listing.
	MaxDepth *int `json:"max_depth,omitzero"`
}

// DirectoryTreeOptions are the optional parts of a directory-tree mark; the
// zero value skips nothing beyond .git and .gitignore and has no depth
// limit.
type DirectoryTreeOptions struct {
	// Skip names entries to omit at any depth. A name is one path element:
	// no slashes, not "." or "..".
	Skip []string
	// MaxDepth limits the walk when non-nil; it must not be negative.
	MaxDepth *int
}

// NewDirectoryTree returns a mark walking root; opt may be nil (skip
// nothing more, no depth limit).
func NewDirectoryTree(root string, opt *DirectoryTreeOptions) (*DirectoryTree, error) {
	const kind = "directory-tree"
	if opt == nil {
		opt = &DirectoryTreeOptions{}
	}
	r, err := cleanPath(kind, "root", root)
	if err != nil {
		return nil, err
	}
	m := &DirectoryTree{Root: r}
	for _, name := range opt.Skip {
		if err := checkSkip(name); err != nil {
			return nil, err
		}
		m.Skip = append(m.Skip, name)
	}
	slices.Sort(m.Skip)
	m.Skip = slices.Compact(m.Skip)
	if opt.MaxDepth != nil {
		if err := checkDepth(*opt.MaxDepth); err != nil {
			return nil, err
		}
		d := *opt.MaxDepth
		m.MaxDepth = &d
	}
	return m, nil
}

func checkSkip(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.IndexByte(name, 0) >= 0 {
		return invalidf("directory-tree", "skip %q is not a file name (give one name, such as node_modules, without slashes)", name)
	}
	if err := safetext.Check(fmt.Sprintf("skip %q", name), name); err != nil {
		return invalidf("directory-tree", "%v", err)
	}
	return nil
}

func checkDepth(d int) error {
	if d < 0 {
		return invalidf("directory-tree", "max depth %d is negative (0 lists the root only)", d)
	}
	return nil
}

// Validate applies NewDirectoryTree's checks to m, which may have been
// decoded rather than constructed.
func (m *DirectoryTree) Validate() error {
	if _, err := cleanPath(m.Kind(), "root", m.Root); err != nil {
		return err
	}
	for _, name := range m.Skip {
		if err := checkSkip(name); err != nil {
			return err
		}
	}
	if m.MaxDepth != nil {
		if err := checkDepth(*m.MaxDepth); err != nil {
			return err
		}
	}
	return m.Anchor.validate(m.Kind())
}

// Kind returns "directory-tree".
func (*DirectoryTree) Kind() string { return "directory-tree" }

// Key is `directory-tree:"ROOT"`, followed by ` skip="NAME"` for each
// skipped name in order and ` max-depth=N` when limited.
func (m *DirectoryTree) Key() string {
	var b strings.Builder
	b.WriteString("directory-tree:")
	b.WriteString(quote(keyPath(m.abs(m.Root))))
	skip := slices.Clone(m.Skip)
	slices.Sort(skip)
	for _, s := range slices.Compact(skip) {
		b.WriteString(" skip=")
		b.WriteString(quote(s))
	}
	if m.MaxDepth != nil {
		fmt.Fprintf(&b, " max-depth=%d", *m.MaxDepth)
	}
	return b.String()
}

// String renders "DirectoryTree @ src", adding "(skip: a, b; max depth 2)"
// when the walk is narrowed.
func (m *DirectoryTree) String() string {
	s := "DirectoryTree @ " + m.Root
	var opts []string
	if len(m.Skip) > 0 {
		opts = append(opts, "skip: "+strings.Join(m.Skip, ", "))
	}
	if m.MaxDepth != nil {
		opts = append(opts, fmt.Sprintf("max depth %d", *m.MaxDepth))
	}
	if len(opts) > 0 {
		s += " (" + strings.Join(opts, "; ") + ")"
	}
	return s
}

// Observe walks the tree. It fails when the root is missing or not a
// directory, or ctx is cancelled; anything below the root that cannot be
// read is recorded in the sighting instead.
func (m *DirectoryTree) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	opt := walkOptions{maxDepth: -1}
	if len(m.Skip) > 0 {
		opt.skip = make(map[string]bool, len(m.Skip))
		for _, s := range m.Skip {
			opt.skip[s] = true
		}
	}
	if m.MaxDepth != nil {
		opt.maxDepth = max(*m.MaxDepth, 0)
	}
	listings, err := walkTree(ctx, env.resolve(m.abs(m.Root)), opt)
	if err != nil {
		return nil, err
	}
	return &sighting.DirectoryTree{Listings: listings}, nil
}
