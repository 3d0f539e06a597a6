package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// The release CONTRIBUTING.md describes, played offline: the library,
// the NATS store and the CLI published as v0.1.0 on a module proxy that
// is a directory (each module zipped from this tree's tracked files as the
// proxy would serve it; the store's and the CLI's go.mod requiring the
// others at v0.1.0, with the go.sum lines go mod tidy would add), every
// other module served from the local module cache. Then, outside any
// workspace, `go install github.com/helmlog/helm/cmd/helm@v0.1.0` builds
// a helm that says it is v0.1.0. It fails if the CLI's go.mod holds a
// replace directive (go install refuses one), or if a module needs a file
// that the tree does not track.
func TestInstallOfTaggedCLIWorksOffline(t *testing.T) {
	const version = "v0.1.0"
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	tracked := trackedFiles(t, root)
	proxy := t.TempDir()

	lib := module.Version{Path: "github.com/helmlog/helm", Version: version}
	libSums := publish(t, proxy, lib, root, "", tracked, nil)

	store := module.Version{Path: "github.com/helmlog/helm/store/natsstore", Version: version}
	storeSums := publish(t, proxy, store, root, "store/natsstore", tracked, released(t, root, "store/natsstore", libSums))

	cli := module.Version{Path: "github.com/helmlog/helm/cmd/helm", Version: version}
	publish(t, proxy, cli, root, "cmd/helm", tracked, released(t, root, "cmd/helm", libSums, storeSums))

	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	modcache := goEnv("GOMODCACHE")
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	install := exec.Command("go", "install", cli.Path+"@"+version)
	install.Dir = work // outside the tree: no go.work
	// GOSUMDB=off: the checksum database has never heard of this v0.1.0.
	// GOMODCACHE: keeps it out of the real module cache, where a real
	// v0.1.0 would clash with it. -trimpath: the build cache serves the
	// next run, wherever its module cache is.
	install.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOWORK=off",
		"GOSUMDB=off",
		"GOMODCACHE="+filepath.Join(work, "mod"),
		"GOFLAGS=-modcacherw -trimpath",
		"GOTOOLCHAIN=local",
		"GOBIN="+bin,
	)
	out, err := install.CombinedOutput()
	require.NoError(t, err, "go install %s@%s: %s", cli.Path, version, out)

	helm := filepath.Join(bin, "helm")
	out, err = exec.Command(helm, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "helm "+version+" "), "helm version says %q", out)
}

// trackedFiles lists the files git tracks in the tree at root, slash
// separated: what a tag would hold (built programs and caches stay out).
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "git ls-files in %s", root)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// sums are go.sum lines for a published module: its zip's hash and its
// go.mod's.
type sums struct {
	m            module.Version
	zipHash, mod string
}

// released returns the go.mod and go.sum of the module in dir as the
// release steps leave them: each of deps required at its version, and
// its hashes in go.sum.
func released(t *testing.T, root, dir string, deps ...sums) map[string][]byte {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
	require.NoError(t, err)
	f, err := modfile.Parse(path.Join(dir, "go.mod"), gomod, nil)
	require.NoError(t, err)
	require.Empty(t, f.Replace, "%s/go.mod holds a replace directive: go install of a tagged version refuses it", dir)
	gosum, err := os.ReadFile(filepath.Join(root, dir, "go.sum"))
	require.NoError(t, err)
	for _, d := range deps {
		require.NoError(t, f.AddRequire(d.m.Path, d.m.Version))
		gosum = fmt.Appendf(gosum, "%s %s %s\n%s %s/go.mod %s\n", d.m.Path, d.m.Version, d.zipHash, d.m.Path, d.m.Version, d.mod)
	}
	f.Cleanup()
	gomod, err = f.Format()
	require.NoError(t, err)
	return map[string][]byte{"go.mod": gomod, "go.sum": gosum}
}

// publish zips module m from the tracked files under dir (replacing the
// files named in override) into the proxy directory, as a module proxy
// serves it, and returns its go.sum hashes.
func publish(t *testing.T, proxy string, m module.Version, root, dir string, tracked []string, override map[string][]byte) sums {
	t.Helper()
	var files []modzip.File
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	for _, name := range tracked {
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if data, ok := override[rel]; ok {
			files = append(files, memFile{name: rel, data: data})
			continue
		}
		files = append(files, diskFile{name: rel, path: filepath.Join(root, filepath.FromSlash(name))})
	}
	escaped, err := module.EscapePath(m.Path)
	require.NoError(t, err)
	at := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))

	zipPath := filepath.Join(at, m.Version+".zip")
	var z bytes.Buffer
	require.NoError(t, modzip.Create(&z, m, files), "zip %s", m.Path)
	require.NoError(t, os.WriteFile(zipPath, z.Bytes(), 0o644))

	gomod := override["go.mod"]
	if gomod == nil {
		gomod, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(at, m.Version+".mod"), gomod, 0o644))
	info, err := json.Marshal(map[string]any{"Version": m.Version, "Time": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(at, m.Version+".info"), info, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(at, "list"), []byte(m.Version+"\n"), 0o644))

	zipHash, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	require.NoError(t, err)
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	require.NoError(t, err)
	return sums{m: m, zipHash: zipHash, mod: modHash}
}

// diskFile is a tracked file of the tree, for modzip.Create.
type diskFile struct{ name, path string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// memFile is a file as the release steps rewrite it (go.mod, go.sum).
type memFile struct {
	name string
	data []byte
}

func (f memFile) Path() string                 { return f.name }
func (f memFile) Lstat() (fs.FileInfo, error)  { return memInfo(f), nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo memFile

func (i memInfo) Name() string       { return path.Base(i.name) }
func (i memInfo) Size() int64        { return int64(len(i.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
