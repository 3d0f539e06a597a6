package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's blocks are run as written, so that they cannot drift from
// what helm does. The convention:
//
//   - In a ```console or ```sh block, a line starting with "$ " is a
//     command, and the lines starting with "> " after it continue it; every
//     other line is output, shown to the reader and not checked. A command
//     must exit 0, or N when it ends with the comment "# exits N".
//   - A ```go block is a whole file: "package main" is a program, which must
//     build, vet and run; a package whose name ends in _test is a test file,
//     which must vet and pass twice (the first run records, the second
//     replays).
//   - A block right after the line <!-- not run: REASON --> is not run; the
//     test lists it with its reason.
//
// The console blocks run in order in one shell (a variable or a cd carries
// over), in a fresh HOME with no git identity and no helm home, starting
// in the repository's top directory, with this test binary first in PATH
// as helm (TestMain makes it helm when it is run by that name).

// readmeMaxLines is DESIGN's bound on the README: a tour, not the design.
const readmeMaxLines = 400

// readmeBlock is one fenced block of a markdown file.
type readmeBlock struct {
	lang   string // the fence's info string: console, sh, go, json, ...
	line   int    // the line of the opening fence, from 1
	text   string // the lines inside the fence, each ending in \n
	notRun string // the reason its not-run marker gives, or ""
}

// readmeCommand is one command of a console or sh block.
type readmeCommand struct {
	line int    // its line in the file
	text string // the command, continuation lines joined with \n
	exit int    // the exit status it must end with
}

var (
	notRunMarker = regexp.MustCompile(`^<!-- not run: (.+) -->$`)
	exitsComment = regexp.MustCompile(`#\s*exits\s+(\d+)\s*$`)
)

// parseBlocks returns the fenced blocks of a markdown text.
func parseBlocks(text string) ([]readmeBlock, error) {
	var (
		blocks   []readmeBlock
		cur      *readmeBlock
		lastText string // the last non-blank line outside a block
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				blocks = append(blocks, *cur)
				cur = nil
				lastText = "```" // a marker before a block is for that block only
				continue
			}
			cur.text += line + "\n"
			continue
		}
		if rest, ok := strings.CutPrefix(line, "```"); ok {
			cur = &readmeBlock{lang: strings.TrimSpace(rest), line: n}
			if m := notRunMarker.FindStringSubmatch(lastText); m != nil {
				cur.notRun = m[1]
			}
			continue
		}
		if strings.TrimSpace(line) != "" {
			lastText = strings.TrimSpace(line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: a ``` block is not closed", cur.line)
	}
	return blocks, nil
}

// commands returns the commands of a console or sh block.
func (b readmeBlock) commands() ([]readmeCommand, error) {
	var cmds []readmeCommand
	for i, line := range strings.Split(strings.TrimSuffix(b.text, "\n"), "\n") {
		n := b.line + 1 + i
		if rest, ok := strings.CutPrefix(line, "$ "); ok {
			cmds = append(cmds, readmeCommand{line: n, text: rest})
			continue
		}
		if rest, ok := strings.CutPrefix(line, "> "); ok && len(cmds) > 0 && cmds[len(cmds)-1].line == n-1-strings.Count(cmds[len(cmds)-1].text, "\n") {
			cmds[len(cmds)-1].text += "\n" + rest
		}
	}
	for i := range cmds {
		if m := exitsComment.FindStringSubmatch(cmds[i].text); m != nil {
			code, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", cmds[i].line, err)
			}
			cmds[i].exit = code
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("line %d: a %s block with no command (a line starting with \"$ \"): mark it <!-- not run: REASON --> or write its commands as \"$ COMMAND\"", b.line, b.lang)
	}
	return cmds, nil
}

func TestReadmeBlocksFollowTheConvention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    []readmeBlock
		cmds    [][]readmeCommand // per block, for console and sh blocks
		wantErr string
	}{
		{
			name: "commands, output, continuation and an expected exit",
			text: "Text.\n\n```console\n$ helm version\nhelm 1.0\n$ for i in 1 2; do\n>   echo $i\n> done\n$ helm log   # exits 1\n```\n",
			want: []readmeBlock{{lang: "console", line: 3, text: "$ helm version\nhelm 1.0\n$ for i in 1 2; do\n>   echo $i\n> done\n$ helm log   # exits 1\n"}},
			cmds: [][]readmeCommand{{
				{line: 4, text: "helm version"},
				{line: 6, text: "for i in 1 2; do\n  echo $i\ndone"},
				{line: 9, text: "helm log   # exits 1", exit: 1},
			}},
		},
		{
			name: "a marker excludes the next block only",
			text: "<!-- not run: needs GitHub -->\n```sh\ngh pr list\n```\n\n```sh\n$ true\n```\n",
			want: []readmeBlock{
				{lang: "sh", line: 2, text: "gh pr list\n", notRun: "needs GitHub"},
				{lang: "sh", line: 6, text: "$ true\n"},
			},
		},
		{
			name: "a marker separated from its block by text marks nothing",
			text: "<!-- not run: needs GitHub -->\nSome words.\n```console\n$ true\n```\n",
			want: []readmeBlock{{lang: "console", line: 3, text: "$ true\n"}},
		},
		{
			name:    "an unclosed block is an error",
			text:    "```console\n$ true\n",
			wantErr: "line 1: a ``` block is not closed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBlocks(tt.text)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			for i, want := range tt.cmds {
				cmds, err := got[i].commands()
				require.NoError(t, err)
				assert.Equal(t, want, cmds)
			}
		})
	}
}

func TestReadmeBlockWithoutCommandsIsRefused(t *testing.T) {
	t.Parallel()
	_, err := readmeBlock{lang: "sh", line: 7, text: "go test ./...\n"}.commands()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 7: a sh block with no command")
	assert.Contains(t, err.Error(), "<!-- not run: REASON -->")
}

// repoRoot is the repository's top directory (this package is cmd/helm).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

// readmeBlocks returns the README's blocks, listing (t.Log) those not run.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	blocks, err := parseBlocks(string(data))
	require.NoError(t, err)
	return blocks
}

func TestReadmeIsATourOfAtMost400Lines(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	assert.LessOrEqual(t, lines, readmeMaxLines, "README.md has %d lines: move detail into docs/ and link it", lines)
}

// mdLink is a markdown link's target: a path and an optional #anchor.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	inBlock := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
		}
		if !inBlock && strings.HasPrefix(line, "#") {
			out[slug(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

func TestReadmeAndDocsLinksLeadSomewhere(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := []string{"README.md", "docs/cli.md", "docs/library.md", "docs/architecture.md", "docs/performance.md", "docs/guard.md", "docs/design.md", "docs/mcp.md"}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(proseOf(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(root, filepath.Dir(file), path)
			if path == "" {
				full = filepath.Join(root, file)
			}
			rel, err := filepath.Rel(root, full)
			require.NoError(t, err)
			if dirExists(full) {
				continue
			}
			if !assert.FileExists(t, full, "%s links to %s", file, target) {
				continue
			}
			if anchor != "" && strings.HasSuffix(full, ".md") {
				assert.True(t, anchors(t, full)[anchor], "%s links to %s: %s has no heading with the anchor #%s", file, target, rel, anchor)
			}
		}
	}
}

// proseOf returns a markdown text without its fenced blocks, whose
// brackets and parentheses are code, not links.
func proseOf(text string) string {
	var b strings.Builder
	inBlock := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// goEnv returns what go env says of names, in the test's own environment.
func goEnv(t *testing.T, names ...string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(names))
	env := map[string]string{}
	for i, name := range names {
		env[name] = lines[i]
	}
	return env
}

// readmeContext bounds a run of the README's commands: a guard against a
// command waiting forever, not a timed assertion.
func readmeContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestReadmeCommandBlocksRunAsWritten(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	helmPath, err := exec.LookPath("helm")
	require.NoError(t, err, "TestMain puts this test binary in PATH as helm")

	var script strings.Builder
	script.WriteString("cd " + strconv.Quote(root) + " || exit 99\n")
	ran := 0
	for _, b := range readmeBlocks(t) {
		if b.lang != "console" && b.lang != "sh" {
			continue
		}
		if b.notRun != "" {
			t.Logf("not run: README.md:%d (%s): %s", b.line, b.lang, b.notRun)
			continue
		}
		cmds, err := b.commands()
		require.NoError(t, err, "README.md")
		for _, c := range cmds {
			fmt.Fprintf(&script, "printf '\\n$ README.md:%d\\n' >&2\n%s\n__rc=$?\n", c.line, c.text)
			fmt.Fprintf(&script, "if [ \"$__rc\" != %d ]; then printf 'README.md:%d: exit %%s, want %d\\n' \"$__rc\" >&2; exit 97; fi\n", c.exit, c.line, c.exit)
			ran++
		}
	}
	require.Positive(t, ran)

	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	gobin := filepath.Join(tmp, "gobin")
	require.NoError(t, os.Mkdir(home, 0o700))
	goenv := goEnv(t, "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN")
	env := []string{
		"HOME=" + home,
		"PATH=" + filepath.Dir(helmPath) + string(filepath.ListSeparator) + gobin + string(filepath.ListSeparator) + os.Getenv("PATH"),
		"GOBIN=" + gobin, // go install ./cmd/helm: not the user's own bin
		"TMPDIR=" + tmp,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GORACE=" + os.Getenv("GORACE"),
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
	}
	for name, value := range goenv {
		env = append(env, name+"="+value) // the caches, so that nothing is downloaded or rebuilt again
	}
	cmd := exec.CommandContext(readmeContext(t), "bash", "--noprofile", "--norc")
	cmd.Stdin = strings.NewReader(script.String())
	cmd.Env = env
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's commands, in order; the one that failed is last:\n%s", out)
	t.Logf("ran %d commands of README.md", ran)
}

// snippetModule makes a module in a temporary directory holding file as
// name, requiring helm from this tree, and returns its directory and the
// environment to run go in it.
func snippetModule(t *testing.T, name, file string) (string, []string) {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	gomod := "module readme.example/snippet\n\ngo 1.26\n\nrequire github.com/helmlog/helm v0.0.0-00010101000000-000000000000\n\nreplace github.com/helmlog/helm => " + strconv.Quote(root) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(file), 0o644))
	// Offline: what the snippet needs is in the module cache, as the
	// tree's own tests need it.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	return dir, env
}

// goIn runs go args in dir and returns its combined output.
func goIn(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(readmeContext(t), "go", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestReadmeGoBlocksBuildAndRun(t *testing.T) {
	t.Parallel()
	blocks := 0
	for _, b := range readmeBlocks(t) {
		if b.lang != "go" {
			continue
		}
		if b.notRun != "" {
			t.Logf("not run: README.md:%d (go): %s", b.line, b.notRun)
			continue
		}
		blocks++
		pkg := regexp.MustCompile(`(?m)^package (\w+)`).FindStringSubmatch(b.text)
		require.NotNil(t, pkg, "README.md:%d: a go block is a whole file, from its package clause", b.line)
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			t.Parallel()
			switch {
			case pkg[1] == "main":
				dir, env := snippetModule(t, "main.go", b.text)
				out, err := goIn(t, dir, env, "vet", ".")
				require.NoError(t, err, out)
				// It observes widget.go, which is not there: the run shows
				// the failure the snippet checks for.
				out, err = goIn(t, dir, env, "run", ".")
				require.NoError(t, err, out)
				assert.Contains(t, out, "recorded, but")
				assert.Contains(t, out, "widget.go")
			case strings.HasSuffix(pkg[1], "_test"):
				dir, env := snippetModule(t, "snippet_test.go", b.text)
				out, err := goIn(t, dir, env, "vet", ".")
				require.NoError(t, err, out)
				out, err = goIn(t, dir, env, "test", "-count=1", ".")
				require.NoError(t, err, "the first run records:\n%s", out)
				recorded, err := filepath.Glob(filepath.Join(dir, "testdata", "*.jsonl"))
				require.NoError(t, err)
				require.NotEmpty(t, recorded, "the first run writes its recording under testdata/")
				out, err = goIn(t, dir, env, "test", "-count=1", ".")
				require.NoError(t, err, "the second run replays the recording:\n%s", out)
			default:
				t.Fatalf("README.md:%d: package %s: a go block is package main or a _test package", b.line, pkg[1])
			}
		})
	}
	require.Positive(t, blocks)
}
