package ghtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitRepo is a local working repository wired to the stand-in.
type GitRepo struct {
	// Dir is the working tree, with one commit on main.
	Dir string
	// Bare is the local bare repository that pushes go to.
	Bare string
	// Repo is OWNER/NAME.
	Repo string
}

// GitRepo makes a working repository for OWNER/NAME (added to the stand-in
// if missing) with one commit on main, already pushed. Its origin has two
// URLs:
//
//   - fetch: https://127.0.0.1:PORT/OWNER/NAME.git — only read, by
//     runner.Repo, to derive OWNER/NAME the way it does for github.com;
//   - push: a local bare repository (git remote set-url --push), so
//     `git push origin BRANCH` works offline.
//
// The stand-in checks pull requests' head and base branches against the
// bare repository and takes the head commit from it, so a test must push
// a branch before opening a pull request from it, as on GitHub.
func (s *Server) GitRepo(t testing.TB, fullName string) *GitRepo {
	t.Helper()
	root := t.TempDir()
	g := &GitRepo{Dir: filepath.Join(root, "work"), Bare: filepath.Join(root, "origin.git"), Repo: fullName}
	s.mu.Lock()
	repo, ok := s.repos[fullName]
	if !ok {
		repo = s.addRepoLocked(fullName, "main")
	}
	repo.bare = g.Bare
	s.mu.Unlock()

	g.run(t, root, "init", "--quiet", "--bare", "-b", "main", g.Bare)
	g.run(t, root, "init", "--quiet", "-b", "main", g.Dir)
	for _, kv := range [][2]string{
		{"user.name", "Helm Test"}, {"user.email", "helm-test@example.com"},
		{"commit.gpgsign", "false"}, {"core.hooksPath", "/dev/null"},
	} {
		g.Git(t, "config", kv[0], kv[1])
	}
	g.WriteFile(t, "README.md", "# "+fullName+"\n")
	g.Git(t, "add", "README.md")
	g.Git(t, "commit", "--quiet", "-m", "Initial commit")
	g.Git(t, "remote", "add", "origin", s.URL+"/"+fullName+".git")
	g.Git(t, "remote", "set-url", "--push", "origin", g.Bare)
	g.Git(t, "push", "--quiet", "origin", "main")
	return g
}

// Git runs git in the working tree and returns its trimmed output,
// failing the test on error.
func (g *GitRepo) Git(t testing.TB, args ...string) string {
	t.Helper()
	return g.run(t, g.Dir, args...)
}

// WriteFile writes a file in the working tree.
func (g *GitRepo) WriteFile(t testing.TB, name, content string) {
	t.Helper()
	path := filepath.Join(g.Dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BareRef returns the commit a branch points to in the bare repository,
// or "" if it does not exist.
func (g *GitRepo) BareRef(t testing.TB, branch string) string {
	t.Helper()
	sha, _ := revParse(g.Bare, branch)
	return sha
}

func (g *GitRepo) run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ghtest: git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
