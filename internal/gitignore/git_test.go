package gitignore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/gitignore"
)

// answer is one verdict on a path: whether it is ignored, and the pattern
// that decided it ("source:line:pattern", empty when none did).
type answer struct {
	ignored bool
	by      string
}

func (a answer) String() string {
	if a.by == "" {
		return "not ignored (no pattern matches)"
	}
	if a.ignored {
		return "ignored by " + a.by
	}
	return "not ignored: re-included by " + a.by
}

// layout is a work tree to build: files with their content (a key
// ending in / is a directory).
type layout struct {
	files map[string]string
}

// build writes the layout under a fresh `git init` and returns its top.
func build(t *testing.T, l layout) string {
	t.Helper()
	top := t.TempDir()
	git(t, top, nil, "init", "-q", ".")
	for name, content := range l.files {
		p := filepath.Join(top, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return top
}

// gitEnv keeps the user's and the system's git configuration (a global
// excludes file above all) out of git's answers.
func gitEnv(t *testing.T) []string {
	home := t.TempDir()
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"LC_ALL=C",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

func git(t *testing.T, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is not installed (%v): these tests compare the matcher with the real `git check-ignore`; install it (apt-get install git)", err)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && args[0] == "check-ignore" {
		err = nil // 1: no path is ignored
	}
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

// gitAnswers asks `git check-ignore --no-index -v -n` about each path.
func gitAnswers(t *testing.T, top string, paths []string) map[string]answer {
	t.Helper()
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := git(t, top, in.Bytes(), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	fields := strings.Split(string(out), "\x00")
	require.Equal(t, 4*len(paths)+1, len(fields), "git check-ignore answered %q", out)
	got := make(map[string]answer, len(paths))
	for i := 0; i+4 <= len(fields); i += 4 {
		source, line, pattern, p := fields[i], fields[i+1], fields[i+2], fields[i+3]
		a := answer{}
		if source != "" {
			a.by = source + ":" + line + ":" + pattern
			a.ignored = !strings.HasPrefix(pattern, "!")
		}
		got[p] = a
	}
	return got
}

// load builds the matcher git would use for the work tree at top:
// .git/info/exclude, then every .gitignore from the top down.
func load(t *testing.T, top string) *gitignore.Matcher {
	t.Helper()
	m := &gitignore.Matcher{}
	if data, err := os.ReadFile(filepath.Join(top, ".git", "info", "exclude")); err == nil {
		m.Add(gitignore.Parse(data, "", ".git/info/exclude")...)
	}
	var files []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Name() == ".gitignore" && d.Type().IsRegular() {
			rel, err := filepath.Rel(top, p)
			files = append(files, filepath.ToSlash(rel))
			return err
		}
		return nil
	})
	require.NoError(t, err)
	slices.SortFunc(files, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(f)))
		require.NoError(t, err)
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		m.Add(gitignore.Parse(data, dir, f)...)
	}
	return m
}

func ourAnswer(t *testing.T, m *gitignore.Matcher, top, p string) answer {
	t.Helper()
	info, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
	require.NoError(t, err)
	pat, ignored := m.Decide(p, info.IsDir())
	if pat == nil {
		return answer{}
	}
	return answer{ignored: ignored, by: fmt.Sprintf("%s:%d:%s", pat.Source, pat.Line, pat.Text)}
}

// compare asks git and the matcher about every path of the tree at top
// and fails on each disagreement, naming the patterns in force, the path
// and both answers.
func compare(t *testing.T, top string, paths []string) {
	t.Helper()
	want := gitAnswers(t, top, paths)
	m := load(t, top)
	for _, p := range paths {
		got := ourAnswer(t, m, top, p)
		if !assert.Equal(t, want[p], got, "path %q", p) {
			t.Logf("path %q\n  git:  %v\n  ours: %v\n  ignore files:\n%s", p, want[p], got, ignoreFiles(t, top))
		}
	}
}

// ignoreFiles shows the ignore files of the tree at top, for a failure.
func ignoreFiles(t *testing.T, top string) string {
	var b strings.Builder
	_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == ".gitignore" || (d.Name() == "exclude" && filepath.Base(filepath.Dir(p)) == "info") {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(top, p)
			fmt.Fprintf(&b, "    %s: %q\n", filepath.ToSlash(rel), data)
		}
		return nil
	})
	return b.String()
}

// paths lists every file and directory of the tree at top but .git,
// slash-separated and relative to top.
func paths(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == top {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(top, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	require.NoError(t, err)
	return out
}
