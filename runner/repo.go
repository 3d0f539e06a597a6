package runner

import (
	"context"
	"fmt"
	"net/url"
	pathpkg "path"
	"regexp"
	"strings"
	"sync"
)

var repoPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// ValidateRepo reports whether name is OWNER/NAME.
func ValidateRepo(name string) error {
	owner, repo, ok := strings.Cut(name, "/")
	if !ok || !repoPart().MatchString(owner) || !repoPart().MatchString(repo) ||
		owner == "." || owner == ".." || repo == "." || repo == ".." {
		return fmt.Errorf("repository %q is not OWNER/NAME", name)
	}
	return nil
}

// Repo returns the GitHub repository (OWNER/NAME) the runner works on: the
// Repository field when set, else the one named by the URL of the origin
// remote in Dir (https://host/OWNER/NAME(.git), git@host:OWNER/NAME(.git)
// or ssh://git@host/OWNER/NAME(.git)).
func (r *Runner) Repo(ctx context.Context) (string, error) {
	if r.Repository != "" {
		if err := ValidateRepo(r.Repository); err != nil {
			return "", err
		}
		return r.Repository, nil
	}
	out, err := r.Git(ctx, "remote", "get-url", "origin")
	if err != nil {
		return "", fmt.Errorf("find the GitHub repository from the origin remote of %s (or name it): %w", r.dirName(), err)
	}
	repo, err := ParseRemoteURL(strings.TrimSpace(string(out)))
	if err != nil {
		return "", fmt.Errorf("find the GitHub repository from the origin remote of %s (or name it): %w", r.dirName(), err)
	}
	return repo, nil
}

// ParseRemoteURL extracts OWNER/NAME from a git remote URL in https, ssh or
// scp-like (git@host:OWNER/NAME) form, with or without ".git". A local path
// names no GitHub repository and is an error.
func ParseRemoteURL(raw string) (string, error) {
	var path string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("remote URL %q: %w", scrubURLCredentials(raw), err)
		}
		path = u.Path
	case isSCPLike(raw):
		_, path, _ = strings.Cut(raw, ":")
	default:
		return "", fmt.Errorf("remote URL %q names no GitHub repository", raw)
	}
	// Dot segments are resolved as the operating system (a local
	// path) and an HTTP client (curl) resolve them: .../prod.git/. is
	// prod.git.
	path = strings.Trim(pathpkg.Clean("/"+path), "/")
	path = strings.TrimSuffix(path, ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 {
		return "", fmt.Errorf("remote URL %q names no OWNER/NAME", scrubURLCredentials(raw))
	}
	repo := parts[len(parts)-2] + "/" + parts[len(parts)-1]
	if err := ValidateRepo(repo); err != nil {
		return "", fmt.Errorf("remote URL %q: %w", scrubURLCredentials(raw), err)
	}
	return repo, nil
}

// isSCPLike reports git's "[user@]host:path" syntax: a colon before any
// slash.
func isSCPLike(raw string) bool {
	colon := strings.IndexByte(raw, ':')
	slash := strings.IndexByte(raw, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// dirName names the runner's working directory in messages.
func (r *Runner) dirName() string {
	if r.Dir == "" {
		return "the working directory"
	}
	return r.Dir
}

// Workspace is the git working tree a runner works in, as a voyage
// records it when it starts there.
type Workspace struct {
	// Top is the working tree's top directory.
	Top string
	// Repo is the GitHub repository (OWNER/NAME) its origin remote
	// names; empty when there is no origin or it names none.
	Repo string
	// Head is the commit checked out; empty in a repository without
	// commits.
	Head string
	// Branch is the branch checked out; empty when HEAD is detached.
	Branch string
}

// Workspace describes the git working tree of the runner's directory.
// Outside a working tree it returns an error (git's own).
func (r *Runner) Workspace(ctx context.Context) (Workspace, error) {
	top, err := r.Git(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return Workspace{}, err
	}
	w := Workspace{Top: strings.TrimSpace(string(top))}
	if head, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
		w.Head = strings.TrimSpace(string(head))
	}
	if branch, err := r.Git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		w.Branch = strings.TrimSpace(string(branch))
	}
	if repo, err := r.Repo(ctx); err == nil {
		w.Repo = repo
	}
	return w, nil
}

// AddWorktree makes a working tree at dir for a new branch, from base
// (a commit; empty means HEAD): git worktree add -b BRANCH DIR BASE, run
// in the runner's repository.
func (r *Runner) AddWorktree(ctx context.Context, dir, branch, base string) error {
	if base == "" {
		base = "HEAD"
	}
	for _, s := range []string{dir, branch, base} {
		if strings.HasPrefix(s, "-") {
			return fmt.Errorf("add a worktree: %q may not begin with -", s)
		}
	}
	_, err := r.Git(ctx, "worktree", "add", "-q", "-b", branch, dir, base)
	return err
}

// Dirty reports whether the working tree in the runner's directory has
// changes not committed (untracked files count).
func (r *Runner) Dirty(ctx context.Context) (bool, error) {
	out, err := r.Git(ctx, "status", "--porcelain")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) != "", nil
}

// RemoveWorktree removes the working tree at dir (git worktree remove,
// with --force when force, which drops its uncommitted changes), run in
// the runner's repository. Its branch is kept.
func (r *Runner) RemoveWorktree(ctx context.Context, dir string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := r.Git(ctx, append(args, "--", dir)...)
	return err
}
