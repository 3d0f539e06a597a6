package marks

import (
	"context"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/helmlog/helm/sighting"
)

func init() {
	Register("go-project", func() Mark { return &GoProject{} })
}

// GoProject is a Go project rooted at a directory: an orientation mark like
// RustProject. It lists the tree (honouring .gitignore, skipping vendor/
// unless IncludeVendor is set), reads the documentation files RustProject
// reads, parses every go.mod with golang.org/x/mod/modfile (module path, go
// version, toolchain, requirements with the indirect flag, replacements),
// and records each package's name and doc comment. Go files are parsed up
// to their package clause only: function bodies are never read.
type GoProject struct {
	// Root is the project directory, cleaned; relative roots resolve
	// against Env.Dir.
	Root string `json:"root"`
	Anchor
	// IncludeVendor walks vendor/ directories too.
	IncludeVendor bool `json:"include_vendor,omitempty"`
}

// NewGoProject returns a mark observing the Go project at root, without
// its vendor directories; set IncludeVendor on the result to include them.
func NewGoProject(root string) (*GoProject, error) {
	r, err := cleanPath("go-project", "path", root)
	if err != nil {
		return nil, err
	}
	return &GoProject{Root: r}, nil
}

// Validate applies NewGoProject's checks to m, which may have been decoded
// rather than constructed.
func (m *GoProject) Validate() error {
	if _, err := cleanPath(m.Kind(), "path", m.Root); err != nil {
		return err
	}
	return m.Anchor.validate(m.Kind())
}

// Kind returns "go-project".
func (*GoProject) Kind() string { return "go-project" }

// Key is `go-project:"ROOT"`, with " include-vendor" when set.
func (m *GoProject) Key() string {
	k := projectKey(m.Kind(), m.abs(m.Root))
	if m.IncludeVendor {
		k += " include-vendor"
	}
	return k
}

// String renders "GoProject @ ROOT", such as "GoProject @ .", with
// " (with vendor)" when IncludeVendor is set.
func (m *GoProject) String() string {
	s := "GoProject @ " + m.Root
	if m.IncludeVendor {
		s += " (with vendor)"
	}
	return s
}

// Observe walks the project once, reading documentation, go.mod files and
// package clauses as it goes. It fails when the root is missing or not a
// directory, or ctx is cancelled.
func (m *GoProject) Observe(ctx context.Context, env *Env) (sighting.Sighting, error) {
	v := &projectVisitor{ctx: ctx}
	s := &sighting.GoProject{Modules: []sighting.GoModule{}, Packages: []sighting.GoPackage{}}
	opt := walkOptions{
		maxDepth: -1,
		visit: func(fsDir string, l *sighting.DirectoryListing) error {
			v.visit(fsDir, l)
			s.Modules = append(s.Modules, goModules(ctx, fsDir, l)...)
			s.Packages = append(s.Packages, goPackages(ctx, fsDir, l)...)
			return nil
		},
	}
	if !m.IncludeVendor {
		opt.skipDirs = map[string]bool{"vendor": true}
	}
	listings, err := walkTree(ctx, env.resolve(m.abs(m.Root)), opt)
	if err != nil {
		return nil, err
	}
	s.Listings = listings
	s.Contents = nonNil(v.contents)
	return s, nil
}

// goModules parses the go.mod in a listed directory, if there is one. A
// go.mod that is not a regular file (a FIFO, a device) is recorded with the
// reason it was not read; symbolic links are not followed, as in the walk.
func goModules(ctx context.Context, fsDir string, l *sighting.DirectoryListing) []sighting.GoModule {
	for _, e := range l.Entries {
		if e.Name != "go.mod" || e.IsDir || e.Symlink != "" || (e.SizeBytes == nil && e.Error != "") {
			continue
		}
		mod := sighting.GoModule{File: joinRel(l.Path, e.Name)}
		data, err := readRegular(ctx, filepath.Join(fsDir, e.Name))
		if err != nil {
			mod.Error = errorMessage(err)
			return []sighting.GoModule{mod}
		}
		f, err := modfile.Parse(mod.File, data, nil)
		if err != nil {
			mod.Error = err.Error()
			return []sighting.GoModule{mod}
		}
		if f.Module != nil {
			mod.Module = f.Module.Mod.Path
		}
		if f.Go != nil {
			mod.Go = f.Go.Version
		}
		if f.Toolchain != nil {
			mod.Toolchain = f.Toolchain.Name
		}
		for _, r := range f.Require {
			mod.Requires = append(mod.Requires, sighting.GoRequire{Path: r.Mod.Path, Version: r.Mod.Version, Indirect: r.Indirect})
		}
		for _, r := range f.Replace {
			mod.Replaces = append(mod.Replaces, sighting.GoReplace{
				Old: r.Old.Path, OldVersion: r.Old.Version, New: r.New.Path, NewVersion: r.New.Version,
			})
		}
		return []sighting.GoModule{mod}
	}
	return nil
}

// goPackages reads the package clauses of a listed directory's Go files
// (test files excluded) and returns one package per name found, with the
// doc comment of doc.go if it has one, else of the first file that does.
// Directories the go command ignores — testdata and names starting with
// "." or "_" — hold no packages.
func goPackages(ctx context.Context, fsDir string, l *sighting.DirectoryListing) []sighting.GoPackage {
	if l.Path != "." {
		for _, part := range strings.Split(l.Path, "/") {
			if part == "testdata" || strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") {
				return nil
			}
		}
	}
	var pkgs []sighting.GoPackage
	fset := token.NewFileSet()
	for _, e := range l.Entries {
		name := e.Name
		if e.IsDir || e.SizeBytes == nil || e.RawName != nil || !strings.HasSuffix(name, ".go") ||
			strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		rel := joinRel(l.Path, name)
		src, err := readRegular(ctx, filepath.Join(fsDir, name))
		if err != nil {
			pkgs = append(pkgs, sighting.GoPackage{Dir: l.Path, Error: rel + ": " + errorMessage(err)})
			continue
		}
		// Named by its relative path, so errors read the same on every machine.
		f, err := parser.ParseFile(fset, rel, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			pkgs = append(pkgs, sighting.GoPackage{Dir: l.Path, Error: err.Error()})
			continue
		}
		doc := ""
		if f.Doc != nil {
			doc = f.Doc.Text()
		}
		i := slices.IndexFunc(pkgs, func(p sighting.GoPackage) bool { return p.Name == f.Name.Name && p.Error == "" })
		if i < 0 {
			pkgs = append(pkgs, sighting.GoPackage{Dir: l.Path, Name: f.Name.Name, Doc: doc})
			continue
		}
		if doc != "" && (pkgs[i].Doc == "" || name == "doc.go") {
			pkgs[i].Doc = doc
		}
	}
	return pkgs
}
