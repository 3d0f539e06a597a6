package marks_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

func contentPaths(cs []sighting.FileContents) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func TestRustProjectListsTreeAndReadsDocsOnly(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		".gitignore":                      "*.bak\n",
		"Cargo.toml":                      "[package]\nname = \"w\"\n",
		"README.md":                       "# W\n",
		"LICENSE-MIT":                     "mit",
		"license.txt":                     "lic",
		"Vision":                          "see far",
		"CLAUDE.md":                       "be brief",
		"AGENTS.md":                       "agents",
		".cursorrules":                    "rules",
		".github/copilot-instructions.md": "copilot",
		"notes.md":                        "root markdown",
		"docs/guide/intro.md":             "intro",
		"docs/img.png":                    "\x89PNG\x00",
		"src/main.rs":                     "fn main() {}",
		"src/notes.md":                    "not root, not docs",
		"src/README.bak":                  "ignored",
		"crates/x/Cargo.toml":             "[package]\nname = \"x\"\n",
		"crates/x/readme.rst":             "x readme",
		"crates/x/design.rs":              "not a doc extension",
		"target/debug/w":                  "\x7fELF",
		"crates/x/target/release/x":       "\x7fELF",
	})
	m, err := marks.NewRustProject(dir)
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), nil)
	require.NoError(t, err)
	got := s.(*sighting.RustProject)

	assert.Equal(t, []string{
		".cursorrules", "AGENTS.md", "CLAUDE.md", "Cargo.toml", "LICENSE-MIT", "README.md", "Vision", "license.txt", "notes.md",
		".github/copilot-instructions.md",
		"crates/x/Cargo.toml", "crates/x/readme.rst",
		"docs/guide/intro.md",
	}, contentPaths(got.Contents))
	assert.Equal(t, sighting.TextContent("# W\n"), got.Contents[5].Content)
	all := paths(got.Listings)
	assert.Contains(t, all, "src/main.rs")
	assert.Contains(t, all, "docs/img.png")
	assert.NotContains(t, all, "target/")
	assert.NotContains(t, all, "crates/x/target/")
	assert.NotContains(t, all, "src/README.bak")
}

func TestGoProjectReadsModulesPackagesAndDocs(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"go.mod":                     "module example.com/w\n\ngo 1.26.0\n\ntoolchain go1.26.1\n\nrequire (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/mod v0.42.0 // indirect\n)\n\nreplace github.com/a/b => ../b\n",
		"README.md":                  "# w\n",
		"w.go":                       "// Package w does widgets.\npackage w\n\nfunc F() { this is not parsed }\n",
		"w_test.go":                  "// Package w_test is ignored.\npackage w_test\n",
		"internal/x/a.go":            "package x\n",
		"internal/x/doc.go":          "// Package x is documented in doc.go.\npackage x\n",
		"internal/x/b.go":            "// Package x from b.go loses to doc.go.\npackage x\n",
		"broken/bad.go":              "not go at all",
		"testdata/t.go":              "package ignored\n",
		"vendor/github.com/a/b/b.go": "// Package b is vendored.\npackage b\n",
		"tools/go.mod":               "module example.com/w/tools\n\ngo 1.25\n",
		"badmod/go.mod":              "this is not a go.mod\n",
		"docs/design.md":             "design",
	})
	m, err := marks.NewGoProject(dir)
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), nil)
	require.NoError(t, err)
	got := s.(*sighting.GoProject)

	require.Len(t, got.Modules, 3)
	assert.Equal(t, sighting.GoModule{
		File: "go.mod", Module: "example.com/w", Go: "1.26.0", Toolchain: "go1.26.1",
		Requires: []sighting.GoRequire{{Path: "github.com/a/b", Version: "v1.2.3"}, {Path: "golang.org/x/mod", Version: "v0.42.0", Indirect: true}},
		Replaces: []sighting.GoReplace{{Old: "github.com/a/b", New: "../b"}},
	}, got.Modules[0])
	assert.Equal(t, "badmod/go.mod", got.Modules[1].File)
	assert.Contains(t, got.Modules[1].Error, "badmod/go.mod:1")
	assert.Equal(t, sighting.GoModule{File: "tools/go.mod", Module: "example.com/w/tools", Go: "1.25"}, got.Modules[2])

	require.Len(t, got.Packages, 3)
	assert.Equal(t, sighting.GoPackage{Dir: ".", Name: "w", Doc: "Package w does widgets.\n"}, got.Packages[0])
	assert.Equal(t, "broken", got.Packages[1].Dir)
	assert.Contains(t, got.Packages[1].Error, "broken/bad.go:1")
	assert.Equal(t, sighting.GoPackage{Dir: "internal/x", Name: "x", Doc: "Package x is documented in doc.go.\n"}, got.Packages[2])

	assert.Equal(t, []string{"README.md", "docs/design.md"}, contentPaths(got.Contents))
	assert.NotContains(t, paths(got.Listings), "vendor/")

	t.Run("vendor when asked", func(t *testing.T) {
		m.IncludeVendor = true
		s, err := m.Observe(context.Background(), nil)
		require.NoError(t, err)
		got := s.(*sighting.GoProject)
		assert.Contains(t, paths(got.Listings), "vendor/github.com/a/b/b.go")
		assert.Equal(t, "b", got.Packages[len(got.Packages)-1].Name)
	})
}

func TestProjectMarksFailOnMissingRoot(t *testing.T) {
	rust, err := marks.NewRustProject("nope")
	require.NoError(t, err)
	goProj, err := marks.NewGoProject("nope")
	require.NoError(t, err)
	for _, m := range []marks.Mark{rust, goProj} {
		dir := t.TempDir()
		_, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.ErrorContains(t, err, "stat "+filepath.Join(dir, "nope")+": ", "where it looked")
		assert.NotContains(t, err.Error(), m.Kind(), "the caller names the mark")
	}
}
