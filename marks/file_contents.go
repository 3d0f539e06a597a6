package marks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("file-contents", func() Mark { return &FileContents{} })
}

// FileContents reads specific files: the simplest file-system mark. Each
// file comes back as UTF-8 text, binary (its size only) or an error (no such
// file, permission denied, is a directory); one bad file never fails the
// observation.
type FileContents struct {
	// Paths are the files to read, cleaned, in the caller's order without
	// duplicates. Relative paths resolve against Env.Dir.
	Paths []string `json:"paths"`
	Anchor
}

// NewFileContents returns a mark reading paths. It needs at least one path;
// each must be non-empty valid UTF-8 and is cleaned ("./a.go" → "a.go").
func NewFileContents(paths ...string) (*FileContents, error) {
	if len(paths) == 0 {
		return nil, errNoFiles
	}
	m := &FileContents{Paths: make([]string, 0, len(paths))}
	for _, p := range paths {
		c, err := cleanPath("file-contents", "path", p)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(m.Paths, c) {
			m.Paths = append(m.Paths, c)
		}
	}
	return m, nil
}

var errNoFiles = invalidf("file-contents", "no files to read (give at least one path)")

// Validate applies NewFileContents' checks to m, which may have been
// decoded rather than constructed: at least one path, each non-empty
// valid UTF-8 without NUL bytes, and an absolute anchor if any.
func (m *FileContents) Validate() error {
	if len(m.Paths) == 0 {
		return errNoFiles
	}
	for _, p := range m.Paths {
		if _, err := cleanPath(m.Kind(), "path", p); err != nil {
			return err
		}
	}
	return m.Anchor.validate(m.Kind())
}

// Kind returns "file-contents".
func (*FileContents) Kind() string { return "file-contents" }

// Key is "file-contents:" and the cleaned paths sorted and deduplicated,
// each quoted: the order and spelling the caller used do not matter.
func (m *FileContents) Key() string {
	paths := make([]string, len(m.Paths))
	for i, p := range m.Paths {
		paths[i] = keyPath(m.abs(p))
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var b strings.Builder
	b.WriteString("file-contents:")
	for i, p := range paths {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quote(p))
	}
	return b.String()
}

// maxListed is how many paths String names before summarising the rest.
const maxListed = 3

// String renders "FileContents: a.go, b.go", naming at most three paths
// and counting the others ("…, c.go (+2 more)").
func (m *FileContents) String() string {
	shown := m.Paths
	if len(shown) > maxListed {
		shown = shown[:maxListed]
	}
	s := "FileContents: " + strings.Join(shown, ", ")
	if more := len(m.Paths) - len(shown); more > 0 {
		s += " (+" + itoa(more) + " more)"
	}
	return s
}

// Observe reads every file. It fails only when ctx is cancelled. A file
// larger than env.StreamAbove (when set) is not read: its content is a
// sighting.TextSource, read when the sighting is stored.
func (m *FileContents) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	s := &sighting.Files{Contents: make([]sighting.FileContents, 0, len(m.Paths))}
	for _, p := range m.Paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("file-contents: %w", err)
		}
		path := env.resolve(m.abs(p))
		content, large := largeText(ctx, env, path)
		if !large {
			content = readContent(ctx, path)
		}
		s.Contents = append(s.Contents, sighting.FileContents{Path: p, Content: content})
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("file-contents: %w", err)
	}
	return s, nil
}
