package runner

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiffStatCountsWhatGitCounts: real git, between two commits: lines
// added and deleted, a binary file, a rename, a deletion, and paths with
// spaces and non-ASCII letters, which -z gives as they are.
func TestDiffStatCountsWhatGitCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	r := &Runner{Dir: dir}
	git := func(args ...string) string {
		t.Helper()
		out, err := r.Git(ctx, args...)
		require.NoError(t, err, "git %s", strings.Join(args, " "))
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "a@example.com")
	git("config", "user.name", "A")
	git("config", "commit.gpgsign", "false")
	git("config", "diff.renames", "false") // DiffStat finds renames anyway
	write("a.go", "package a\n\nfunc A() {}\n")
	write("gone.txt", "one\ntwo\n")
	write("docs/moved from.md", strings.Repeat("a line that stays the same\n", 20))
	write("logo.png", "\x89PNG\x00\x01\x02")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	base := git("rev-parse", "HEAD")

	write("a.go", "package a\n\n// A does a.\nfunc A() { println(1) }\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	require.NoError(t, os.Rename(filepath.Join(dir, "docs/moved from.md"), filepath.Join(dir, "docs/déplacé.md")))
	write("logo.png", "\x89PNG\x00\x03\x04\x05")
	write("new file.txt", "x\ny\nz\n")
	git("add", "-A")
	git("commit", "-q", "-m", "head")
	head := git("rev-parse", "HEAD")

	got, err := r.DiffStat(ctx, base, head)
	require.NoError(t, err)
	assert.Equal(t, []FileStat{
		{Path: "a.go", Added: 2, Deleted: 1},
		{Path: "docs/déplacé.md", From: "docs/moved from.md"},
		{Path: "gone.txt", Deleted: 2},
		{Path: "logo.png", Binary: true},
		{Path: "new file.txt", Added: 3},
	}, got)

	same, err := r.DiffStat(ctx, head, head)
	require.NoError(t, err)
	assert.Empty(t, same, "no change, no file")

	if runtime.GOOS != "windows" {
		write("tab\there\nnewline.txt", "a\n")
		git("add", "-A")
		git("commit", "-q", "-m", "odd name")
		odd, err := r.DiffStat(ctx, head, "HEAD")
		require.NoError(t, err)
		assert.Equal(t, []FileStat{{Path: "tab\there\nnewline.txt", Added: 1}}, odd)
	}
}

func TestDiffStatErrorsNameTheCommitsAndDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	r := &Runner{Dir: dir}
	_, err := r.Git(ctx, "init", "-q", "-b", "main")
	require.NoError(t, err)

	_, err = r.DiffStat(ctx, "1111111111111111111111111111111111111111", "HEAD")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "diff 1111111111111111111111111111111111111111..HEAD in "+dir)
	var xe *ExitError
	assert.ErrorAs(t, err, &xe, "git's own failure, with its message")

	for _, bad := range []string{"", "--output=/tmp/x", "a b"} {
		_, err = r.DiffStat(ctx, bad, "HEAD")
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), "is not a revision")
	}
}

func TestParseNumstatRejectsWhatIsNotNumstat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, out string }{
		{"no tabs", "garbage\x00"},
		{"letters for numbers", "x\t1\ta.go\x00"},
		{"cut rename", "1\t1\t\x00from\x00"},
		{"cut short", "1\t1\ta.go"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseNumstat(tt.out)
			assert.ErrorContains(t, err, "numstat")
		})
	}
	got, err := parseNumstat("")
	require.NoError(t, err)
	assert.Empty(t, got)
}
