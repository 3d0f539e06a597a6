package helm_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The facade's budgets (issue 30, held to the end of the round): the root
// package exports at most 150 identifiers — top-level names and the
// methods of its exported types — and Voyage has at most 30 methods.
// What reads voyages belongs in a feature package on the read path; the
// record's types belong in logbook.
const (
	rootExportBudget   = 150
	voyageMethodBudget = 30
)

// TestFacadeStaysWithinItsBudget counts the root's exported identifiers
// in its non-test files and prints the figures (go test -v -run Budget).
func TestFacadeStaysWithinItsBudget(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var top int
	methods := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					top++
					continue
				}
				if recv := receiver(d.Recv.List[0].Type); ast.IsExported(recv) {
					methods[recv]++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							top++
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								top++
							}
						}
					}
				}
			}
		}
	}
	total := top
	for _, n := range methods {
		total += n
	}
	t.Logf("root exports %d (%d top-level, %d methods); Voyage %d methods, Home %d", total, top, total-top, methods["Voyage"], methods["Home"])
	assert.LessOrEqual(t, total, rootExportBudget, "the root exports more than its budget: move what reads voyages to a feature package, and the record's types to logbook")
	assert.LessOrEqual(t, methods["Voyage"], voyageMethodBudget, "Voyage has more methods than its budget: fold a read into an iterator or an option")
}

// receiver names a method's receiver type: T in T, *T, T[P] and *T[P].
func receiver(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
