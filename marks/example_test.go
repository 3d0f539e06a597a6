package marks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// exampleDir builds a small project for the examples.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "helm-example-")
	if err != nil {
		panic(err)
	}
	for name, content := range map[string]string{
		"README.md":  "# Widget\n",
		"Cargo.toml": "[package]\nname = \"widget\"\n",
		"src/lib.rs": "pub fn widget() {}\n",
		".gitignore": "*.log\n",
		"debug.log":  "noise",
		"logo.png":   "\x89PNG\x00\x01",
	} {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
	}
	return dir
}

func ExampleFileContents() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	m, err := marks.NewFileContents("./README.md", "logo.png", "missing.txt")
	if err != nil {
		panic(err)
	}
	fmt.Println(m)
	fmt.Println(m.Key())

	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
	if err != nil {
		panic(err)
	}
	for _, f := range s.(*sighting.Files).Contents {
		fmt.Printf("%s: %s\n", f.Path, f.Content)
	}
	// Output:
	// FileContents: README.md, logo.png, missing.txt
	// file-contents:"README.md" "logo.png" "missing.txt"
	// README.md: text, 9 bytes
	// logo.png: binary, 6 bytes
	// missing.txt: error: no such file or directory
}

func ExampleDirectoryTree() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	m, err := marks.NewDirectoryTree(".", &marks.DirectoryTreeOptions{Skip: []string{"logo.png"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(m)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
	if err != nil {
		panic(err)
	}
	for _, l := range s.(*sighting.DirectoryTree).Listings {
		for _, e := range l.Entries {
			fmt.Printf("%s: %s dir=%v\n", l.Path, e.Name, e.IsDir)
		}
	}
	// Output:
	// DirectoryTree @ . (skip: logo.png)
	// .: .gitignore dir=false
	// .: Cargo.toml dir=false
	// .: README.md dir=false
	// .: src dir=true
	// src: lib.rs dir=false
}

func ExampleRustProject() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	m, err := marks.NewRustProject(".")
	if err != nil {
		panic(err)
	}
	fmt.Println(m)
	s, err := m.Observe(context.Background(), &marks.Env{Dir: dir})
	if err != nil {
		panic(err)
	}
	p := s.(*sighting.RustProject)
	fmt.Println("directories:", len(p.Listings))
	for _, c := range p.Contents {
		fmt.Printf("read %s (%s)\n", c.Path, c.Content)
	}
	// Output:
	// RustProject @ .
	// directories: 2
	// read Cargo.toml (text, 26 bytes)
	// read README.md (text, 9 bytes)
}

func ExampleContext() {
	m, err := marks.NewContext("Call with Ana: ship the v2 API before the migration.")
	if err != nil {
		panic(err)
	}
	s, _ := m.Observe(context.Background(), nil)
	fmt.Println(m)
	fmt.Println(s.(*sighting.Context).Description)
	// Output:
	// Context: Call with Ana: ship the v2 API before the migration.
	// Call with Ana: ship the v2 API before the migration.
}

func ExampleCommand() {
	m, err := marks.NewCommand("", "sh", "-c", "echo built; exit 2")
	if err != nil {
		panic(err)
	}
	s, err := m.Observe(context.Background(), &marks.Env{})
	if err != nil {
		panic(err)
	}
	c := s.(*sighting.Command)
	fmt.Println(m)
	fmt.Printf("exit %d, stdout %q\n", *c.ExitCode, c.Stdout)
	for _, f := range sighting.Failures(c) {
		fmt.Println(f.Kind, "-", f)
	}
	// Output:
	// Command: sh -c "echo built; exit 2"
	// exit 2, stdout "built\n"
	// exit-status - the command exited with status 2
}

// A program's output can be watched as it runs (Env.Progress), besides
// being captured; a program that outlives Env.CommandTimeout is killed.
func ExampleEnv_progress() {
	m, err := marks.NewCommand("", "sh", "-c", "echo compiling; sleep 5; echo never")
	if err != nil {
		panic(err)
	}
	s, err := m.Observe(context.Background(), &marks.Env{Progress: os.Stdout, CommandTimeout: 300 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	c := s.(*sighting.Command)
	fmt.Printf("captured %q, timed out after %d ms\n", c.Stdout, c.TimeoutMS)
	// Output:
	// compiling
	// captured "compiling\n", timed out after 300 ms
}

func ExampleWeb() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "all systems go")
	}))
	defer srv.Close()

	m, err := marks.NewWeb(srv.URL + "/status")
	if err != nil {
		panic(err)
	}
	s, err := m.Observe(context.Background(), nil)
	if err != nil {
		panic(err)
	}
	w := s.(*sighting.Web)
	fmt.Println(w.Status, w.Body.Text)
	// Output:
	// 200 all systems go
}

func ExampleUnmarshal() {
	m, _ := marks.NewRustProject("./")
	data, _ := marks.Marshal(m)
	fmt.Println(string(data))
	back, _ := marks.Unmarshal(data)
	fmt.Println(back, "|", back.Key())
	// Output:
	// {"kind":"rust-project","root":"."}
	// RustProject @ . | rust-project:"."
}
