package helm_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The layout's walls, checked against the sources.

// librarySources returns the parsed non-test Go files of the library: the
// module but the CLI (cmd/), the programs using it (examples/), its own
// modules (bench/, integration/) and test helpers (internal/ghtest).
func librarySources(t *testing.T) map[string]*ast.File {
	t.Helper()
	skip := map[string]bool{"cmd": true, "examples": true, "bench": true, "integration": true, "testdata": true, filepath.Join("internal", "ghtest"): true, filepath.Join("internal", "testfs"): true, filepath.Join("internal", "voyagetest"): true} // test support, not library
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[path] || (path != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files[path] = f
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

var (
	// cliCommand is the helm program's name followed by one of its
	// commands.
	cliCommand = regexp.MustCompile(`\bhelm (voyage|observe|slate|bearing|action|complete|log|note|sighting|artifact|auth|policy|transcript|stats|judge|report|search|serve|version|completion|mcp|undo|help)\b`)
	// cliFlag is a long flag in running text.
	cliFlag = regexp.MustCompile("(^|[\\s(`'\"\\[=,])--[a-z][a-z-]*")
	// argvFlag is a string that is one flag alone, or with its value
	// attached (--format=%(refname)): an argument the library passes to
	// git or gh, not text shown to anyone.
	argvFlag = regexp.MustCompile(`^--[a-z][a-z-]*(=\S*)?$`)
)

// TestLibraryNamesNoCLICommandOrFlag: the library's messages and docs say
// what to do in the library's terms (a Hint is data); only cmd/helm turns
// that into a command line. No string of the library names a command of
// the helm program or a flag, and no comment names a command.
func TestLibraryNamesNoCLICommandOrFlag(t *testing.T) {
	for path, f := range librarySources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			assert.False(t, cliCommand.MatchString(s), "%s: string %s names a command of the helm program", path, lit.Value)
			if !argvFlag.MatchString(s) {
				assert.False(t, cliFlag.MatchString(s), "%s: string %s names a flag", path, lit.Value)
			}
			return true
		})
		for _, cg := range f.Comments {
			assert.False(t, cliCommand.MatchString(cg.Text()), "%s: a comment names a command of the helm program: %q", path, cliCommand.FindString(cg.Text()))
		}
	}
}

// module is the import path of the root package.
const module = "github.com/helmlog/helm"

// features are the packages beside the root that read voyages through its
// public read path (Voyage.Events, Follow, the views): what cmd/helm and
// a library user import for reports, stories, transcripts, searches and
// replays.
var features = []string{"report", "story", "transcript", "search", "replay"}

// storage are the packages that hold a voyage's bytes: the root's
// business alone, under its facade.
var storage = []string{"segment", "artifact", "store", "internal/durable", "internal/homeindex"}

// importsOf returns the import paths of the Go files matching pattern,
// by file; test files too when tests is set.
func importsOf(t *testing.T, pattern string, tests bool) map[string][]string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, paths, pattern)
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, path := range paths {
		if !tests && strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[path] = append(out[path], p)
		}
	}
	return out
}

// under reports whether import path p is package pkg of the module or
// one below it.
func under(p, pkg string) bool {
	return p == module+"/"+pkg || strings.HasPrefix(p, module+"/"+pkg+"/")
}

// TestCLIImportsTheFacadeAndItsFeatures: the helm program (its own
// packages included) works through the root package, the record's types
// (logbook), the events' schema (projection, as Voyage.Events yields
// them) and the feature packages built on the root; the log and the
// artifact pack beneath them are the engine's. (Every package is among
// `go list -deps ./cmd/helm`; the wall is what cmd/helm imports itself.)
func TestCLIImportsTheFacadeAndItsFeatures(t *testing.T) {
	seen := map[string]bool{}
	imported := importsOf(t, filepath.Join("cmd", "helm", "*.go"), false)
	maps.Copy(imported, importsOf(t, filepath.Join("cmd", "helm", "internal", "*", "*.go"), false))
	for path, imports := range imported {
		for _, p := range imports {
			seen[p] = true
			for _, wall := range []string{"segment", "artifact"} {
				assert.False(t, under(p, wall), "%s imports %s: the facade or a feature package should offer what it needs", path, p)
			}
		}
	}
	for _, f := range features {
		assert.True(t, seen[module+"/"+f], "cmd/helm reads through package %s", f)
	}
}

// TestRootImportsNoFeature: the root is the facade; what reads voyages
// is built on it, never the other way round. Its own tests test the
// facade alone, so they import none either (internal/hometest, which
// opens homes and compares views, they may).
func TestRootImportsNoFeature(t *testing.T) {
	for path, imports := range importsOf(t, "*.go", true) {
		for _, p := range imports {
			for _, f := range append(features, "helmtest", "cmd", "internal/voyagetest", "internal/markdown") {
				assert.False(t, under(p, f), "%s imports %s: the root never imports what is built on it", path, p)
			}
		}
	}
}

// TestFeaturesStandOnTheRoot: a feature package reads voyages through the
// root's public API, beside the others: it imports the root and the
// packages below it, never the program (cmd/), helmtest, another feature
// package, nor the packages that hold a voyage's bytes.
func TestFeaturesStandOnTheRoot(t *testing.T) {
	for _, f := range features {
		t.Run(f, func(t *testing.T) {
			usesRoot := false
			for path, imports := range importsOf(t, filepath.Join(f, "*.go"), false) {
				for _, p := range imports {
					usesRoot = usesRoot || p == module
					walls := append([]string{"cmd", "helmtest"}, storage...)
					for _, other := range features {
						if other != f {
							walls = append(walls, other)
						}
					}
					for _, wall := range walls {
						assert.False(t, under(p, wall), "%s imports %s: a feature package stands on the root's public API", path, p)
					}
				}
			}
			assert.True(t, usesRoot, "package %s reads voyages through the root", f)
		})
	}
	// helmtest is built on replay, and on nothing above the root but it.
	for path, imports := range importsOf(t, filepath.Join("helmtest", "*.go"), false) {
		for _, p := range imports {
			assert.False(t, under(p, "cmd"), "%s imports %s", path, p)
			for _, f := range features {
				assert.False(t, f != "replay" && under(p, f), "%s imports %s: helmtest builds on replay", path, p)
			}
		}
	}
}

// TestLibraryImportsNoMCP: the MCP server is the helm program's (helm
// mcp); its SDK, and the schema package it brings, stay out of what an
// importer of the library compiles. (A library package that reached the
// SDK through another would show here too: that one imports it.)
func TestLibraryImportsNoMCP(t *testing.T) {
	for path, f := range librarySources(t) {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, wall := range []string{"github.com/modelcontextprotocol/", "github.com/google/jsonschema-go/"} {
				assert.False(t, strings.HasPrefix(p, wall), "%s imports %s: only cmd/helm serves MCP", path, p)
			}
		}
	}
}

// TestEveryPackageStatesItsJob: a reader finds each job from the layout in
// one hop, by the package's doc comment.
func TestEveryPackageStatesItsJob(t *testing.T) {
	docs := map[string]string{}
	names := map[string]string{}
	for path, f := range librarySources(t) {
		dir := filepath.Dir(path)
		names[dir] = f.Name.Name
		if f.Doc != nil {
			docs[dir] += f.Doc.Text()
		}
	}
	for dir, name := range names {
		assert.True(t, strings.HasPrefix(docs[dir], "Package "+name+" "), "package %s (%s) has no doc comment saying its job", name, dir)
	}
}

// TestLibraryMakesNoContextOfItsOwn: everything that may do I/O takes
// its caller's ctx, so the library's code (test support aside: helmtest,
// store/storetest) calls neither context.Background nor context.TODO, but
// for one bounded cleanup: Voyage.Close's timeout (Close takes no ctx),
// marked on its line with a "bounded cleanup" comment.
func TestLibraryMakesNoContextOfItsOwn(t *testing.T) {
	support := []string{"helmtest", filepath.Join("store", "storetest")}
	fset := token.NewFileSet()
	var allowed []string
	for path := range librarySources(t) {
		if slices.ContainsFunc(support, func(dir string) bool { return strings.HasPrefix(path, dir+string(filepath.Separator)) }) {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		name := "" // the name the file imports "context" as
		for _, imp := range file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "context" {
				name = "context"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			continue
		}
		lines := strings.Split(string(src), "\n")
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != name || (sel.Sel.Name != "Background" && sel.Sel.Name != "TODO") {
				return true
			}
			pos := fset.Position(call.Pos())
			at := fmt.Sprintf("%s:%d", path, pos.Line)
			if path == "voyage.go" && sel.Sel.Name == "Background" && strings.Contains(lines[pos.Line-1], "// bounded cleanup:") {
				allowed = append(allowed, at)
				return true
			}
			assert.Fail(t, "the library makes a context of its own", "%s calls context.%s: take the caller's ctx (only Voyage.Close's bounded cleanup may make one)", at, sel.Sel.Name)
			return true
		})
	}
	assert.LessOrEqual(t, len(allowed), 1, "one bounded cleanup at most: %v", allowed)
}
