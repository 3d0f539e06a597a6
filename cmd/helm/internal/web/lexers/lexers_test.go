package lexers

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromalexers "github.com/alecthomas/chroma/v2/lexers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain fails the package when its init built the registry: no test
// has asked for a lexer yet.
func TestMain(m *testing.M) {
	if registry != nil {
		fmt.Fprintln(os.Stderr, "lexers: the registry was built at package init")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestMatchChoosesTheLexerByFileName(t *testing.T) {
	tests := []struct {
		name, file, lexer string
	}{
		{name: "go", file: "main.go", lexer: "Go"},
		{name: "a path: its base name counts", file: "cmd/helm/main.go", lexer: "Go"},
		{name: "a backup suffix is ignored", file: "main.go.orig", lexer: "Go"},
		{name: "rust", file: "lib.rs", lexer: "Rust"},
		{name: "python", file: "setup.py", lexer: "Python"},
		{name: "python by whole name", file: "BUILD.bazel", lexer: "Python"},
		{name: "javascript", file: "app.mjs", lexer: "JavaScript"},
		{name: "typescript", file: "view.tsx", lexer: "TypeScript"},
		{name: "json", file: "package.json", lexer: "JSON"},
		{name: "json lines", file: "events.jsonl", lexer: "JSON"},
		{name: "yaml", file: "ci.yml", lexer: "YAML"},
		{name: "toml", file: "Cargo.toml", lexer: "TOML"},
		{name: "shell", file: "install.sh", lexer: "Bash"},
		{name: "shell dotfile", file: ".bashrc", lexer: "Bash"},
		{name: "c", file: "main.c", lexer: "C"},
		{name: "c header", file: "main.h", lexer: "C"},
		{name: "c++", file: "main.cpp", lexer: "C++"},
		{name: "c#", file: "Program.cs", lexer: "C#"},
		{name: "java", file: "Main.java", lexer: "Java"},
		{name: "kotlin", file: "build.gradle.kts", lexer: "Kotlin"},
		{name: "ruby", file: "Gemfile", lexer: "Ruby"},
		{name: "html", file: "index.html", lexer: "HTML"},
		{name: "css", file: "site.css", lexer: "CSS"},
		{name: "sql", file: "schema.sql", lexer: "SQL"},
		{name: "dockerfile", file: "Dockerfile", lexer: "Docker"},
		{name: "makefile", file: "Makefile", lexer: "Makefile"},
		{name: "diff", file: "fix.patch", lexer: "Diff"},
		{name: "ini", file: ".editorconfig", lexer: "INI"},
		{name: "xml", file: "icon.svg", lexer: "XML"},
		{name: "protocol buffer", file: "api.proto", lexer: "Protocol Buffer"},
		{name: "lua", file: "init.lua", lexer: "Lua"},
		{name: "php", file: "index.php", lexer: "PHP"},
		{name: "swift", file: "App.swift", lexer: "Swift"},
		{name: "nix", file: "flake.nix", lexer: "Nix"},
		{name: "terraform", file: "main.tf", lexer: "Terraform"},
		{name: "hcl", file: "config.hcl", lexer: "HCL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Match(tt.file)
			require.NotNil(t, l, tt.file)
			assert.Equal(t, tt.lexer, l.Config().Name)
		})
	}
}

func TestMatchFindsNoLexerForOtherFilesWhichArePlainText(t *testing.T) {
	for _, file := range []string{
		"notes.unknown-extension",
		"LICENSE",
		"go.mod",
		"README.md", // chroma defines Markdown in Go: not among ours
		"main.go.tmpl",
		"",
	} {
		assert.Nil(t, Match(file), "%q", file)
	}
}

// TestEveryDefinitionParses reads every definition's rules, compiles
// them on a small text, and checks that each lexer a rule delegates to
// (<using lexer="…"/>) is in the registry: chroma panics mid-highlight
// on a name it cannot find.
func TestEveryDefinitionParses(t *testing.T) {
	Match("x") // builds the registry
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	require.NoError(t, err)
	require.Len(t, registry.Lexers, len(paths), "one lexer for each definition")
	for _, l := range registry.Lexers {
		t.Run(l.Config().Name, func(t *testing.T) {
			_, err := l.(*chroma.RegexLexer).Rules()
			require.NoError(t, err)
			_, err = l.Tokenise(nil, "x = 1\n")
			require.NoError(t, err)
		})
	}
	using := regexp.MustCompile(`<using lexer="([^"]+)"`)
	for _, path := range paths {
		b, err := fs.ReadFile(embedded, path)
		require.NoError(t, err)
		for _, m := range using.FindAllStringSubmatch(string(b), -1) {
			assert.NotNil(t, registry.Get(m[1]), "%s delegates to %s", path, m[1])
		}
	}
}

// TestDefinitionsAreChromas: every definition but go.xml is chroma's
// own, unchanged: its config and the rules it yields are those of the
// lexer of the same name in chroma's lexers package (linked into this
// test only).
func TestDefinitionsAreChromas(t *testing.T) {
	Match("x")
	for _, l := range registry.Lexers {
		name := l.Config().Name
		if name == "Go" {
			continue // defined in Go by chroma: see TestGoDefinitionLexesAsChromasGo
		}
		t.Run(name, func(t *testing.T) {
			theirs, ok := chromalexers.Get(name).(*chroma.RegexLexer)
			require.True(t, ok, "chroma's %s is an XML definition", name)
			require.Equal(t, name, theirs.Config().Name)
			assert.Equal(t, theirs.Config(), l.Config())
			want, err := theirs.Rules()
			require.NoError(t, err)
			got, err := l.(*chroma.RegexLexer).Rules()
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// TestGoDefinitionLexesAsChromasGo: go.xml is chroma's Go lexer (defined
// in Go) written as XML, with one change: a raw string is a string,
// where chroma lexes it as a text template. On Go without template
// actions in raw strings the highlighting is the same.
func TestGoDefinitionLexesAsChromasGo(t *testing.T) {
	files, err := fs.Glob(os.DirFS("."), "*.go")
	require.NoError(t, err)
	files = append(files, "testdata/sample.go")
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, tokens(t, chromalexers.Go, string(b)), tokens(t, Match("x.go"), string(b)))
		})
	}
}

// tokens lexes text as highlight does.
func tokens(t *testing.T, l chroma.Lexer, text string) []chroma.Token {
	t.Helper()
	it, err := chroma.Coalesce(l).Tokenise(nil, text)
	require.NoError(t, err)
	return it.Tokens()
}

// TestHelmLinksNeitherChromasLexersNorItsStyles: those packages parse
// all their definitions at init, at every helm command; helm has its own
// (this package, and ../style).
func TestHelmLinksNeitherChromasLexersNorItsStyles(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list helm's packages")
	}
	out, err := exec.Command(gotool, "list", "-deps", "github.com/helmlog/helm/cmd/helm").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/alecthomas/chroma/v2", "helm highlights with chroma")
	for _, p := range deps {
		for _, banned := range []string{"github.com/alecthomas/chroma/v2/lexers", "github.com/alecthomas/chroma/v2/styles"} {
			assert.False(t, p == banned || strings.HasPrefix(p, banned+"/"), "helm links %s", p)
		}
	}
}

// TestMatchChoosesAsChromaDoes: a file named by any of our lexers'
// patterns gets the lexer chroma's full registry gives it (*.hcl is
// HCL's, not Terraform's; *.php is PHP's, not chroma's PHTML's, defined
// in Go), but where chroma's is a dialect we leave out.
func TestMatchChoosesAsChromaDoes(t *testing.T) {
	dialects := map[string]string{ // chroma's lexer: ours
		"MySQL":   "SQL",
		"SYSTEMD": "INI", // *.service, *.socket, *.network
	}
	Match("x")
	class := regexp.MustCompile(`\[(.)[^]]*\]`) // [345] names 3
	for _, l := range registry.Lexers {
		for _, glob := range l.Config().Filenames {
			file := strings.NewReplacer("*", "x", "?", "y").Replace(class.ReplaceAllString(glob, "$1"))
			want, got := chromalexers.Match(file), Match(file)
			require.NotNil(t, want, file)
			require.NotNil(t, got, file)
			if ours, ok := dialects[want.Config().Name]; ok {
				assert.Equal(t, ours, got.Config().Name, file)
				continue
			}
			assert.Equal(t, want.Config().Name, got.Config().Name, file)
		}
	}
}

// BenchmarkFirstMatch is what the first highlight of a helm serve pays
// to build the registry (the definitions' configs; a lexer's rules are
// read when it first lexes).
func BenchmarkFirstMatch(b *testing.B) {
	for b.Loop() {
		build()
		registry.Match("main.go")
	}
}

// BenchmarkFirstGoHighlight adds lexing a Go file with a Go lexer read
// afresh: its rules parsed and compiled.
func BenchmarkFirstGoHighlight(b *testing.B) {
	text, err := os.ReadFile("testdata/sample.go")
	require.NoError(b, err)
	for b.Loop() {
		build()
		it, err := chroma.Coalesce(registry.Match("main.go")).Tokenise(nil, string(text))
		require.NoError(b, err)
		it.Tokens()
	}
}
