package marks

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helmlog/helm/internal/gitignore"
	"github.com/helmlog/helm/sighting"
)

// walkOptions shape a tree walk shared by the directory-tree, rust-project
// and go-project marks.
type walkOptions struct {
	// skip names entries (files or directories) omitted at any depth.
	skip map[string]bool
	// skipDirs names directories omitted at any depth (target, vendor).
	skipDirs map[string]bool
	// maxDepth is the deepest directory listed, the root being 0; negative
	// means unlimited.
	maxDepth int
	// visit, when set, sees each listing as it is made, with the directory's
	// file-system path, before the walk descends into its children.
	visit func(fsDir string, l *sighting.DirectoryListing) error
}

// walkTree lists the directory tree at root, one listing per directory,
// parents before children and siblings in byte order, which makes the
// result deterministic.
//
// It honours .gitignore the way git does (internal/gitignore, tested
// against git itself: nested .gitignore files, negation, directory-only
// patterns, **). The patterns in force are .git/info/exclude and the
// .gitignore files of the enclosing repository's directories from its top
// down to root, plus each .gitignore met on the way down. Outside any
// repository, root is treated as the top of one. A root that git ignores
// (itself or through a directory above it) lists no entries: git sees
// nothing in it. The user's global excludes file is not consulted: it
// would make the same tree look different on different machines.
//
// .git is always skipped. Symbolic links are listed but never followed, so
// a link loop cannot hang the walk. A directory that cannot be read becomes
// a listing with its Error set. Memory holds the output and the gitignore
// patterns of the current directory's ancestors, nothing more: the walk
// streams through directories.
//
// Errors say what failed at root, not which mark looked (the caller,
// such as helm's Voyage.Observe, names the mark as it was spelled), and
// wrap the cause, so errors.Is(err, fs.ErrNotExist) works.
func walkTree(ctx context.Context, root string, opt walkOptions) ([]sighting.DirectoryListing, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err // "stat /abs/root: ...": where it looked
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	w := &walker{ctx: ctx, opt: opt}
	w.loadRepoPatterns(abs)
	if err := w.walk(abs, nil, 0); err != nil {
		return nil, err
	}
	// Files read while visiting the last directory may have been cut
	// short: an interrupted walk is no observation.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return w.out, nil
}

type walker struct {
	ctx context.Context
	opt walkOptions
	// prefix is root's path inside its repository ("" at its top, else
	// "a/b/"); the gitignore matcher sees every path as prefix + relative
	// path.
	prefix string
	// rootIgnored: git ignores root itself, so everything below it.
	rootIgnored bool
	patterns    gitignore.Matcher
	out         []sighting.DirectoryListing
}

// loadRepoPatterns finds the repository enclosing root and loads the
// patterns that apply above root: info/exclude and the .gitignore files of
// root's ancestors inside the repository.
func (w *walker) loadRepoPatterns(root string) {
	top := root
	for {
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(top)
		if parent == top {
			top = root // not in a repository: root is the top
			break
		}
		top = parent
	}
	w.patterns.Add(readPatterns(w.ctx, filepath.Join(top, ".git", "info", "exclude"), "", ".git/info/exclude")...)
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." {
		return
	}
	rel = filepath.ToSlash(rel)
	w.prefix = rel + "/"
	dir, inRepo := top, ""
	for _, name := range strings.Split(rel, "/") {
		w.patterns.Add(readPatterns(w.ctx, filepath.Join(dir, ".gitignore"), inRepo, path.Join(inRepo, ".gitignore"))...)
		dir, inRepo = filepath.Join(dir, name), path.Join(inRepo, name)
	}
	w.rootIgnored = w.patterns.Ignored(rel, true)
}

// readPatterns parses one ignore file, dir being its directory inside the
// repository and source its name there. A missing or unreadable file has
// no patterns, as in git; so has one of gitignore.MaxFileSize bytes or
// more, which git skips too, and one that is not a regular file: a FIFO
// called .gitignore is not opened (see openRegular), so it cannot block
// the walk. A file is not read once ctx is done; the walk then reports
// it.
func readPatterns(ctx context.Context, file, dir, source string) []gitignore.Pattern {
	if ctx.Err() != nil {
		return nil
	}
	f, err := openRegular(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, gitignore.MaxFileSize))
	if err != nil || len(data) >= gitignore.MaxFileSize {
		return nil
	}
	return gitignore.Parse(data, dir, source)
}

// ignored reports whether git would ignore the entry at rel (components
// relative to root). The walk never enters an ignored directory, so only
// the entry itself is matched: the deepest .gitignore and its latest line
// win, and a negation re-includes.
func (w *walker) ignored(rel []string, isDir bool) bool {
	if w.rootIgnored {
		return true
	}
	if w.patterns.Len() == 0 {
		return false
	}
	p := w.patterns.Match(w.prefix+strings.Join(rel, "/"), isDir)
	return p != nil && !p.Negated()
}

func (w *walker) walk(fsDir string, rel []string, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	l := sighting.DirectoryListing{Path: ".", Entries: []sighting.DirectoryEntry{}}
	if len(rel) > 0 {
		l.Path, l.RawPath = sighting.TextName(strings.Join(rel, "/"))
	}

	dirents, err := readDir(fsDir)
	if err != nil && len(dirents) == 0 {
		l.Error = errorMessage(err)
		w.out = append(w.out, l)
		return w.visit(fsDir, &l)
	}
	if err != nil {
		l.Error = errorMessage(err) // partial read: keep what was read
	}

	// This directory's .gitignore applies to everything below it.
	mark := w.patterns.Len()
	dir := w.prefix + strings.Join(rel, "/")
	w.patterns.Add(readPatterns(w.ctx, filepath.Join(fsDir, ".gitignore"), dir, path.Join(dir, ".gitignore"))...)
	defer w.patterns.Truncate(mark)

	var subdirs []string
	child := make([]string, len(rel)+1)
	copy(child, rel)
	for i, d := range dirents {
		if i%1024 == 1023 {
			if err := w.ctx.Err(); err != nil {
				return err // a huge directory: stat-ing its entries takes a while
			}
		}
		name := d.Name()
		isDir := d.IsDir()
		if name == ".git" || w.opt.skip[name] || (isDir && w.opt.skipDirs[name]) {
			continue
		}
		child[len(rel)] = name
		if w.ignored(child, isDir) {
			continue
		}
		e := sighting.DirectoryEntry{IsDir: isDir}
		e.Name, e.RawName = sighting.TextName(name)
		switch t := d.Type(); {
		case isDir:
			subdirs = append(subdirs, name)
		case t&os.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(fsDir, name))
			if err != nil {
				e.Error = errorMessage(err)
			} else {
				e.Symlink, _ = sighting.TextName(target)
			}
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				e.Error = errorMessage(err)
			} else {
				size := uint64(info.Size())
				e.SizeBytes = &size
			}
		}
		l.Entries = append(l.Entries, e)
	}
	w.out = append(w.out, l)
	if err := w.visit(fsDir, &w.out[len(w.out)-1]); err != nil {
		return err
	}
	if w.opt.maxDepth >= 0 && depth >= w.opt.maxDepth {
		return nil
	}
	for _, name := range subdirs {
		child[len(rel)] = name
		if err := w.walk(filepath.Join(fsDir, name), child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) visit(fsDir string, l *sighting.DirectoryListing) error {
	if w.opt.visit == nil {
		return nil
	}
	return w.opt.visit(fsDir, l)
}

// readDir lists a directory as os.ReadDir does, sorted by name, but opens
// it with openDir: only a directory is opened, never a FIFO or device put
// in its place.
func readDir(path string) ([]fs.DirEntry, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dirents, err := f.ReadDir(-1)
	slices.SortFunc(dirents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return dirents, err
}
