//go:build unix

package marks_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// hangGuard bounds a call that must never block. It is a guard, not a
// latency assertion: the bound is generous, and the time taken is logged.
const hangGuard = 10 * time.Second

// special makes the file-system oddities a mark may meet where it expects
// a file: a FIFO (reading blocks until a writer comes), a socket, and a
// symbolic link to /dev/zero (a device that never ends).
// The device is reached through a link, since making one needs root;
// link says so: a walk lists the link and does not follow it.
type special struct {
	name, want string
	link       bool
	make       func(t *testing.T, path string)
}

var specials = []special{
	{"FIFO", "not a regular file (FIFO)", false, mkfifo},
	{"socket", "not a regular file (socket)", false, mksocket},
	{"device", "not a regular file (character device)", true, func(t *testing.T, path string) {
		require.NoError(t, os.Symlink("/dev/zero", path))
	}},
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, unix.Mkfifo(path, 0o644))
	// Should a read block after all, writing to the FIFO at cleanup ends
	// it, so a failing test does not leave a goroutine stuck.
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
}

func mksocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
}

// observeWithin observes m and fails the test if it blocks.
func observeWithin(t *testing.T, m marks.Mark, env *marks.Env) sighting.Sighting {
	t.Helper()
	type result struct {
		s   sighting.Sighting
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		s, err := m.Observe(context.Background(), env)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		t.Logf("%s observed in %s", m, time.Since(start))
		require.NoError(t, r.err)
		return r.s
	case <-time.After(hangGuard):
		t.Fatalf("observing %s still blocked after %s", m, hangGuard)
		return nil
	}
}

func contentOf(t *testing.T, cs []sighting.FileContents, path string) sighting.FileContent {
	t.Helper()
	for _, c := range cs {
		if c.Path == path {
			return c.Content
		}
	}
	require.Failf(t, "no content", "%s not among %v", path, contentPaths(cs))
	return sighting.FileContent{}
}

func TestFileContentsRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	for _, sp := range specials {
		t.Run(sp.name, func(t *testing.T) {
			dir := t.TempDir()
			sp.make(t, filepath.Join(dir, "x"))
			require.NoError(t, os.Symlink("x", filepath.Join(dir, "link")))
			tree(t, dir, map[string]string{"ok.txt": "fine\n"})
			m, err := marks.NewFileContents("x", "link", "ok.txt")
			require.NoError(t, err)
			got := observeWithin(t, m, &marks.Env{Dir: dir}).(*sighting.Files)
			assert.Equal(t, sighting.ErrorContent(sp.want), got.Contents[0].Content)
			assert.Equal(t, sighting.ErrorContent(sp.want), got.Contents[1].Content, "through a symbolic link")
			assert.Equal(t, sighting.TextContent("fine\n"), got.Contents[2].Content, "the other files are read")
		})
	}
	t.Run("device by absolute path", func(t *testing.T) {
		m, err := marks.NewFileContents("/dev/zero")
		require.NoError(t, err)
		got := observeWithin(t, m, nil).(*sighting.Files)
		assert.Equal(t, sighting.ErrorContent("not a regular file (character device)"), got.Contents[0].Content)
	})
}

func TestProjectMarksRefuseSpecialFilesTheyReadOnTheirOwn(t *testing.T) {
	for _, sp := range specials {
		t.Run(sp.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, map[string]string{
				"src/lib.rs":     "pub fn f() {}\n",
				"a.go":           "package a\n",
				"sub/go.mod":     "module example.com/sub\n",
				"sub/CLAUDE.md":  "ok",
				"docs/guide.md":  "guide",
				".git/info/":     "",
				"kept/README.md": "kept",
			})
			// Every file a project mark opens by itself is special here.
			for _, name := range []string{"README.md", "Cargo.toml", "go.mod", ".gitignore", ".git/info/exclude", "docs/.gitignore", "docs/api.md", "b.go"} {
				sp.make(t, filepath.Join(dir, name))
			}

			rust, err := marks.NewRustProject(dir)
			require.NoError(t, err)
			rs := observeWithin(t, rust, nil).(*sighting.RustProject)
			assert.Equal(t, sighting.ErrorContent(sp.want), contentOf(t, rs.Contents, "README.md"))
			assert.Equal(t, sighting.ErrorContent(sp.want), contentOf(t, rs.Contents, "Cargo.toml"))
			assert.Equal(t, sighting.ErrorContent(sp.want), contentOf(t, rs.Contents, "docs/api.md"))
			assert.Equal(t, sighting.TextContent("guide"), contentOf(t, rs.Contents, "docs/guide.md"))
			assert.Equal(t, sighting.TextContent("kept"), contentOf(t, rs.Contents, "kept/README.md"))
			listed := "README.md"
			if sp.link {
				listed += "@"
			}
			assert.Contains(t, paths(rs.Listings), listed, "special files are listed")

			goMark, err := marks.NewGoProject(dir)
			require.NoError(t, err)
			gs := observeWithin(t, goMark, nil).(*sighting.GoProject)
			assert.Equal(t, sighting.ErrorContent(sp.want), contentOf(t, gs.Contents, "README.md"))
			modules := []string{}
			for _, m := range gs.Modules {
				modules = append(modules, m.File+": "+m.Module+m.Error)
			}
			if sp.link {
				// A linked go.mod is not followed, like any link in the walk.
				assert.Equal(t, []string{"sub/go.mod: example.com/sub"}, modules)
			} else {
				assert.Equal(t, []string{"go.mod: " + sp.want, "sub/go.mod: example.com/sub"}, modules)
			}
			require.Len(t, gs.Packages, 1, "b.go is skipped, a.go read")
			assert.Equal(t, "a", gs.Packages[0].Name)
		})
	}
}

func TestDirectoryTreeListsSpecialFilesWithoutOpeningThem(t *testing.T) {
	for _, sp := range specials {
		t.Run(sp.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, map[string]string{"sub/a.txt": "a", ".git/info/": ""})
			for _, name := range []string{"x", ".gitignore", "sub/.gitignore", ".git/info/exclude"} {
				sp.make(t, filepath.Join(dir, name))
			}
			m, err := marks.NewDirectoryTree(dir, nil)
			require.NoError(t, err)
			got := observeWithin(t, m, nil).(*sighting.DirectoryTree)
			want := []string{".gitignore", "sub/", "sub/.gitignore", "sub/a.txt", "x"}
			if sp.link {
				want = []string{".gitignore@", "sub/", "sub/.gitignore@", "sub/a.txt", "x@"}
			}
			assert.Equal(t, want, paths(got.Listings))
		})
	}
}

func TestMarksStopWalkingWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a/b/c.txt": "c", "README.md": "r", "go.mod": "module m\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range []marks.Mark{
		must(marks.NewDirectoryTree(dir, nil)),
		must(marks.NewRustProject(dir)),
		must(marks.NewGoProject(dir)),
	} {
		_, err := m.Observe(ctx, nil)
		assert.ErrorIs(t, err, context.Canceled, "%s", m)
	}
}
