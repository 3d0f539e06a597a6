package marks

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/sighting"
)

// docStems are the well-known documentation names a project mark reads,
// matched case-insensitively with or without a documentation extension.
var docStems = map[string]bool{
	"readme":               true,
	"changelog":            true,
	"vision":               true,
	"charter":              true,
	"contributing":         true,
	"design":               true,
	"agents":               true, // AGENTS.md: instructions for coding agents
	"claude":               true, // CLAUDE.md
	"copilot-instructions": true, // .github/copilot-instructions.md
}

// docExts are the extensions a well-known documentation name may carry.
var docExts = map[string]bool{"": true, ".md": true, ".markdown": true, ".txt": true, ".rst": true, ".adoc": true, ".org": true}

// isDoc reports whether a project mark reads the file name found in the
// directory dir (slash-separated, relative to the root): a well-known
// documentation name anywhere in the tree (README, CHANGELOG, LICENSE*,
// agent instructions, .cursorrules, ...), or any Markdown file in the root
// or under a docs directory.
func isDoc(dir, name string) bool {
	lower := strings.ToLower(name)
	if lower == ".cursorrules" || strings.HasPrefix(lower, "license") || strings.HasPrefix(lower, "licence") {
		return true
	}
	ext := path.Ext(lower)
	if docStems[strings.TrimSuffix(lower, ext)] && docExts[ext] {
		return true
	}
	if ext != ".md" {
		return false
	}
	return dir == "." || dir == "docs" || strings.HasPrefix(dir, "docs/") || strings.Contains(dir, "/docs/") || strings.HasSuffix(dir, "/docs")
}

// projectVisitor collects the files a project mark reads while the tree is
// walked, so the tree is traversed once.
type projectVisitor struct {
	ctx      context.Context
	contents []sighting.FileContents
	// extra reports further names to read (Cargo.toml).
	extra func(name string) bool
}

func (v *projectVisitor) visit(fsDir string, l *sighting.DirectoryListing) {
	for _, e := range l.Entries {
		if e.IsDir {
			continue
		}
		if !isDoc(l.Path, e.Name) && (v.extra == nil || !v.extra(e.Name)) {
			continue
		}
		v.contents = append(v.contents, sighting.FileContents{
			Path:    joinRel(l.Path, e.Name),
			Content: readContent(v.ctx, filepath.Join(fsDir, e.FSName())),
		})
	}
}

// joinRel joins a listing path and a name into a root-relative path.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// projectKey gives the project marks' keys one shape: `KIND:"ROOT"`.
func projectKey(kind, root string) string { return kind + ":" + quote(keyPath(root)) }
