package actions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// performedKinds returns the kind of every action this package defines:
// the string each Kind method of its sources returns.
func performedKinds(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var out []string
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Kind" || fn.Body == nil || len(fn.Body.List) != 1 {
				continue
			}
			ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
			require.True(t, ok, "%s: a Kind method that does not return its kind", fset.Position(fn.Pos()))
			lit, ok := ret.Results[0].(*ast.BasicLit)
			require.True(t, ok, "%s: a Kind method that does not return a literal", fset.Position(fn.Pos()))
			kind, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			out = append(out, kind)
		}
	}
	return out
}

// TestEveryKindSaysWhatItIsAbout: every action this package performs is
// described (what its number names, whether it moves the branch), so a
// new pull request action cannot drop out of a search by pull request;
// and no kind is described that no action has.
func TestEveryKindSaysWhatItIsAbout(t *testing.T) {
	performed := performedKinds(t)
	require.GreaterOrEqual(t, len(performed), 18, "the actions' Kind methods were found")
	for _, k := range performed {
		_, ok := kinds[k]
		assert.True(t, ok, "action kind %q is not described in results.go", k)
	}
	for k := range kinds {
		assert.Contains(t, performed, k, "results.go describes %q, which no action has", k)
	}
}

func TestWhatEachKindIsAbout(t *testing.T) {
	tests := []struct {
		name, kind                    string
		pullRequest, issue, movesHead bool
	}{
		{"a commit moves the branch", "commit", false, false, true},
		{"a push moves the branch", "push", false, false, true},
		{"the undo of a commit by reset", "reset-commit", false, false, true},
		{"the undo of a commit by revert", "revert-commit", false, false, true},
		{"creating a pull request", "create-pull-request", true, false, false},
		{"merging one", "merge-pull-request", true, false, false},
		{"commenting on one", "comment-pull-request", true, false, false},
		{"replying on one", "reply-pull-request", true, false, false},
		{"asking a review", "request-review", true, false, false},
		{"closing a pull request (an undo)", "close-pull-request", true, false, false},
		{"deleting a review comment (an undo)", "delete-review-comment", true, false, false},
		{"taking back a review request (an undo)", "remove-review-request", true, false, false},
		{"creating an issue", "create-issue", false, true, false},
		{"closing one", "close-issue", false, true, false},
		{"commenting on one", "comment-issue", false, true, false},
		{"reopening one (an undo)", "reopen-issue", false, true, false},
		{"a deleted comment was on either", "delete-comment", true, true, false},
		{"deleting a pushed branch names neither", "delete-remote-branch", false, false, false},
		{"a kind another program recorded names nothing", "deploy", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.pullRequest, OnPullRequest(tt.kind), "OnPullRequest")
			assert.Equal(t, tt.issue, OnIssue(tt.kind), "OnIssue")
			assert.Equal(t, tt.movesHead, MovesHead(tt.kind), "MovesHead")
		})
	}
}
