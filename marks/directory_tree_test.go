package marks_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// paths flattens listings to the set of listed paths: directories end in
// "/", symlinks in "@".
func paths(listings []sighting.DirectoryListing) []string {
	var out []string
	for _, l := range listings {
		for _, e := range l.Entries {
			p := e.Name
			if l.Path != "." {
				p = l.Path + "/" + e.Name
			}
			switch {
			case e.IsDir:
				p += "/"
			case e.Symlink != "":
				p += "@"
			}
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func observeTree(t *testing.T, root string, opt *marks.DirectoryTreeOptions) *sighting.DirectoryTree {
	t.Helper()
	m, err := marks.NewDirectoryTree(root, opt)
	require.NoError(t, err)
	s, err := m.Observe(context.Background(), nil)
	require.NoError(t, err)
	return s.(*sighting.DirectoryTree)
}

func TestDirectoryTreeHonoursGitignoreAsGitDoes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "nested gitignore applies below its directory only",
			files: map[string]string{
				".gitignore":         "*.tmp\n",
				"a.tmp":              "",
				"a.go":               "",
				"sub/.gitignore":     "local.txt\n",
				"sub/local.txt":      "",
				"sub/b.tmp":          "",
				"sub/b.go":           "",
				"other/local.txt":    "",
				"sub/deeper/x.tmp":   "",
				"sub/deeper/keep.md": "",
			},
			want: []string{".gitignore", "a.go", "other/", "other/local.txt", "sub/", "sub/.gitignore", "sub/b.go", "sub/deeper/", "sub/deeper/keep.md"},
		},
		{
			name: "negation re-includes",
			files: map[string]string{
				".gitignore": "*.log\n!keep.log\n",
				"drop.log":   "",
				"keep.log":   "",
				"d/keep.log": "",
				"d/drop.log": "",
			},
			want: []string{".gitignore", "d/", "d/keep.log", "keep.log"},
		},
		{
			name: "directory-only pattern spares files of that name",
			files: map[string]string{
				".gitignore":   "build/\n",
				"build/out.o":  "",
				"src/build/x":  "",
				"src/build.go": "",
				"notes/build":  "a file named build",
			},
			want: []string{".gitignore", "notes/", "notes/build", "src/", "src/build.go"},
		},
		{
			name: "anchored pattern and double star",
			files: map[string]string{
				".gitignore":      "/top.txt\n**/gen/*.pb.go\n",
				"top.txt":         "",
				"sub/top.txt":     "",
				"a/b/gen/x.pb.go": "",
				"a/b/gen/x.go":    "",
			},
			want: []string{".gitignore", "a/", "a/b/", "a/b/gen/", "a/b/gen/x.go", "sub/", "sub/top.txt"},
		},
		{
			name: "info/exclude and .git is never listed",
			files: map[string]string{
				".git/info/exclude": "secret.env\n",
				".git/HEAD":         "ref: refs/heads/main\n",
				"secret.env":        "",
				"app.go":            "",
			},
			want: []string{"app.go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, tt.files)
			got := observeTree(t, dir, nil)
			assert.Equal(t, tt.want, paths(got.Listings))
		})
	}
}

func TestDirectoryTreeInsideRepositoryUsesParentIgnores(t *testing.T) {
	repo := t.TempDir()
	tree(t, repo, map[string]string{
		".git/info/exclude":   "*.secret\n",
		".gitignore":          "*.log\nproj/generated/\n",
		"proj/.gitignore":     "!important.log\n",
		"proj/a.log":          "",
		"proj/important.log":  "",
		"proj/x.secret":       "",
		"proj/main.go":        "",
		"proj/generated/z.go": "",
	})
	got := observeTree(t, filepath.Join(repo, "proj"), nil)
	assert.Equal(t, []string{".gitignore", "important.log", "main.go"}, paths(got.Listings))
}

func TestDirectoryTreeSkipDepthAndOrder(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"b/c/d/e.txt":           "12345",
		"a.txt":                 "1",
		"node_modules/x/y.js":   "",
		"sub/node_modules/z.js": "",
		"sub/.DS_Store":         "",
		"Z.txt":                 "",
		"sub/keep.txt":          "",
	})
	t.Run("skip at any depth, files and directories", func(t *testing.T) {
		got := observeTree(t, dir, &marks.DirectoryTreeOptions{Skip: []string{"node_modules", ".DS_Store"}})
		assert.Equal(t, []string{"Z.txt", "a.txt", "b/", "b/c/", "b/c/d/", "b/c/d/e.txt", "sub/", "sub/keep.txt"}, paths(got.Listings))
	})
	t.Run("listings are parents first, siblings sorted", func(t *testing.T) {
		got := observeTree(t, dir, &marks.DirectoryTreeOptions{Skip: []string{"node_modules"}})
		var order []string
		for _, l := range got.Listings {
			order = append(order, l.Path)
		}
		assert.Equal(t, []string{".", "b", "b/c", "b/c/d", "sub"}, order)
		root := got.Listings[0]
		require.Len(t, root.Entries, 4)
		assert.Equal(t, "Z.txt", root.Entries[0].Name)
		assert.Equal(t, sighting.DirectoryEntry{Name: "a.txt", SizeBytes: ptr(uint64(1))}, root.Entries[1])
		assert.Equal(t, sighting.DirectoryEntry{Name: "b", IsDir: true}, root.Entries[2])
	})
	t.Run("max depth lists deeper directories as entries only", func(t *testing.T) {
		got := observeTree(t, dir, &marks.DirectoryTreeOptions{MaxDepth: ptr(1)})
		var order []string
		for _, l := range got.Listings {
			order = append(order, l.Path)
		}
		assert.Equal(t, []string{".", "b", "node_modules", "sub"}, order)
		assert.Contains(t, paths(got.Listings), "b/c/")
	})
	t.Run("max depth zero lists the root", func(t *testing.T) {
		got := observeTree(t, dir, &marks.DirectoryTreeOptions{MaxDepth: ptr(0)})
		require.Len(t, got.Listings, 1)
		assert.Equal(t, ".", got.Listings[0].Path)
	})
}

func TestDirectoryTreeSurvivesHostileTrees(t *testing.T) {
	t.Run("symlink loops are listed, not followed", func(t *testing.T) {
		dir := t.TempDir()
		tree(t, dir, map[string]string{"a/f.txt": "x"})
		require.NoError(t, os.Symlink("..", filepath.Join(dir, "a", "up")))
		require.NoError(t, os.Symlink("self", filepath.Join(dir, "self")))
		got := observeTree(t, dir, nil)
		assert.Equal(t, []string{"a/", "a/f.txt", "a/up@", "self@"}, paths(got.Listings))
		assert.Equal(t, "..", got.Listings[1].Entries[1].Symlink)
	})
	t.Run("unreadable directory is an error listing", func(t *testing.T) {
		skipIfRoot(t)
		dir := t.TempDir()
		tree(t, dir, map[string]string{"locked/x": "", "ok/y": ""})
		require.NoError(t, os.Chmod(filepath.Join(dir, "locked"), 0o000))
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
		got := observeTree(t, dir, nil)
		require.Len(t, got.Listings, 3)
		assert.Equal(t, sighting.DirectoryListing{Path: "locked", Entries: []sighting.DirectoryEntry{}, Error: "permission denied"}, got.Listings[1])
		assert.Equal(t, "ok", got.Listings[2].Path)
	})
	t.Run("missing root fails the observation", func(t *testing.T) {
		m, err := marks.NewDirectoryTree(filepath.Join(t.TempDir(), "nope"), nil)
		require.NoError(t, err)
		_, err = m.Observe(context.Background(), nil)
		assert.ErrorContains(t, err, "no such file")
	})
	t.Run("file root fails the observation", func(t *testing.T) {
		dir := t.TempDir()
		tree(t, dir, map[string]string{"f": ""})
		m, err := marks.NewDirectoryTree("f", nil)
		require.NoError(t, err)
		_, err = m.Observe(context.Background(), &marks.Env{Dir: dir})
		assert.ErrorContains(t, err, "not a directory")
	})
}

func TestDirectoryTreeRecordsRawNames(t *testing.T) {
	dir := t.TempDir()
	bad := "caf\xe9" // Latin-1 é: not UTF-8
	if err := os.Mkdir(filepath.Join(dir, bad), 0o755); err != nil {
		t.Skipf("file system refuses non-UTF-8 names: %v", err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, bad, bad+".txt"), []byte("hi"), 0o644))
	got := observeTree(t, dir, nil)
	require.Len(t, got.Listings, 2)
	e := got.Listings[0].Entries[0]
	assert.Equal(t, "caf\uFFFD", e.Name)
	assert.Equal(t, []byte(bad), e.RawName)
	assert.Equal(t, bad, e.FSName())
	assert.Equal(t, "caf\uFFFD", got.Listings[1].Path)
	assert.Equal(t, []byte(bad), got.Listings[1].RawPath)

	// The sighting survives the event log's JSON exactly.
	data, err := sighting.Marshal(got)
	require.NoError(t, err)
	back, err := sighting.Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, got, back)
}

func TestNewDirectoryTreeValidates(t *testing.T) {
	tests := []struct {
		name    string
		root    string
		opt     *marks.DirectoryTreeOptions
		wantErr string
	}{
		{name: "empty root", root: "", wantErr: "empty root"},
		{name: "slash in skip", root: ".", opt: &marks.DirectoryTreeOptions{Skip: []string{"a/b"}}, wantErr: "not a file name"},
		{name: "dot skip", root: ".", opt: &marks.DirectoryTreeOptions{Skip: []string{".."}}, wantErr: "not a file name"},
		{name: "negative depth", root: ".", opt: &marks.DirectoryTreeOptions{MaxDepth: ptr(-1)}, wantErr: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := marks.NewDirectoryTree(tt.root, tt.opt)
			require.ErrorIs(t, err, marks.ErrInvalid)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
	m, err := marks.NewDirectoryTree("./src/", &marks.DirectoryTreeOptions{Skip: []string{"b", "a", "b"}, MaxDepth: ptr(2)})
	require.NoError(t, err)
	assert.Equal(t, &marks.DirectoryTree{Root: "src", Skip: []string{"a", "b"}, MaxDepth: ptr(2)}, m)
}

// A root that git ignores, through a directory above it, lists no
// entries: git sees nothing in it.
func TestDirectoryTreeOfAnIgnoredDirectoryListsNothing(t *testing.T) {
	repo := t.TempDir()
	tree(t, repo, map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		".gitignore":         "/build/\n",
		"build/out/app":      "",
		"build/out/app.map":  "",
		"src/build/keep.txt": "",
	})
	got := observeTree(t, filepath.Join(repo, "build", "out"), nil)
	assert.Empty(t, paths(got.Listings))
	got = observeTree(t, filepath.Join(repo, "src", "build"), nil)
	assert.Equal(t, []string{"keep.txt"}, paths(got.Listings), "the anchored pattern speaks of the top's build only")
}

// The files a walk lists are the files git calls untracked and not
// ignored (`git ls-files --others --exclude-standard`), on a tree with
// nested .gitignore files, negations, ** and directory-only patterns.
func TestDirectoryTreeListsWhatGitDoesNotIgnore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is not installed (%v): install it (apt-get install git)", err)
	}
	repo := t.TempDir()
	files := map[string]string{
		".gitignore":             "*.log\n!keep.log\n/dist/\n**/gen/*.pb.go\ncache/\n",
		"keep.log":               "",
		"a.log":                  "",
		"dist/app":               "",
		"web/dist/app":           "",
		"api/gen/x.pb.go":        "",
		"api/gen/x.go":           "",
		"a/b/gen/y.pb.go":        "",
		"cache":                  "a file, not a directory",
		"sub/cache/z":            "",
		"sub/.gitignore":         "!*.log\n/local\nx/**/y\n",
		"sub/debug.log":          "",
		"sub/local":              "",
		"sub/deeper/local":       "",
		"sub/x/y":                "",
		"sub/x/m/n/y":            "",
		"sub/x/m/n/z":            "",
		"sub/deeper/.gitignore":  "*\n!*.md\n",
		"sub/deeper/readme.md":   "",
		"sub/deeper/other.txt":   "",
		"sub/deeper/more/inside": "",
	}
	tree(t, repo, files)
	cmd := exec.Command("git", "init", "-q", ".")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd = exec.Command("git", "ls-files", "--others", "--exclude-standard", "-z")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err = cmd.Output()
	require.NoError(t, err)
	want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	sort.Strings(want)

	var got []string
	for _, p := range paths(observeTree(t, repo, nil).Listings) {
		if !strings.HasSuffix(p, "/") {
			got = append(got, p)
		}
	}
	assert.Equal(t, want, got)
}
