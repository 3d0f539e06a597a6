package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testManHeader is the header of the pages tests compare: no version, so
// that the golden files do not move with the build.
var testManHeader = manHeader{Title: "HELM", Section: "1", Source: "helm test", Manual: "helm manual"}

// manPage renders the page of the command at path in c's tree.
func manPage(t *testing.T, root *cobra.Command, path ...string) string {
	t.Helper()
	c, _, err := root.Find(path)
	require.NoError(t, err, "%v", path)
	var b strings.Builder
	writeManPage(&b, c, testManHeader)
	return b.String()
}

func TestManPagesMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path []string
		file string
	}{
		{name: "the root: commands, exit status, example", path: nil, file: "helm.1"},
		{name: "a leaf: options, inherited options, example", path: []string{"observe", "command"}, file: "helm-observe-command.1"},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := commandTree(h)
			c, _, err := root.Find(tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.file, manFileName(c, testManHeader))
			golden(t, filepath.Join("man", tt.file+".golden"), manPage(t, root, tt.path...))
		})
	}
}

// manRequest is every request a page may use.
var manRequest = regexp.MustCompile(`^\.(TH|SH|TP|PP|RS|RE|nf|fi|nh|ad)( |$)`)

// manEscapeSeq is every escape a page may use.
var manEscapeSeq = regexp.MustCompile(`^\\(e|-|&|:|f[BIR]|\((aq|ga|dq|ha|ti)|\[u[0-9A-F]{4,6}\])`)

// lintMan checks a page without groff: ASCII only, no control
// characters, every line that starts a request is a known man macro, no
// line starts with "'" (the other request character), and every
// backslash starts a known escape. It returns what it found wrong.
func lintMan(page string) []string {
	var problems []string
	for n, line := range strings.Split(strings.TrimSuffix(page, "\n"), "\n") {
		at := func(format string, args ...any) {
			problems = append(problems, "line "+itoa(n+1)+": "+strings.TrimSpace(fmt.Sprintf(format, args...))+": "+line)
		}
		for _, r := range line {
			if r < ' ' || r > '~' {
				at("character %U", r)
			}
		}
		switch {
		case strings.HasPrefix(line, "'"):
			at("a line starts with '")
		case strings.HasPrefix(line, ".") && !manRequest.MatchString(line):
			at("unknown request")
		}
		for i := 0; i < len(line); i++ {
			if line[i] != '\\' {
				continue
			}
			m := manEscapeSeq.FindString(line[i:])
			if m == "" {
				at("unknown escape at %d", i)
				break
			}
			i += len(m) - 1
		}
	}
	return problems
}

// groffWarnings runs groff over page and returns its warnings, or skips
// the test when groff is not installed.
func groffText(t *testing.T, page string) (text, warnings string) {
	t.Helper()
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P", "-cbou")
	cmd.Stdin = strings.NewReader(page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	return stdout.String(), stderr.String()
}

func TestEveryManPageIsWellFormed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := t.TempDir()
	n, err := writeManTree(commandTree(h), testManHeader, dir)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Len(t, files, n, "one file a page, nothing else")
	require.Greater(t, n, 60, "every command has a page")
	for _, f := range files {
		page, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, lintMan(string(page)), "%s", filepath.Base(f))
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed: checked without it")
	}
	for _, f := range files {
		page, err := os.ReadFile(f)
		require.NoError(t, err)
		_, warnings := groffText(t, string(page))
		assert.Empty(t, warnings, "%s", filepath.Base(f))
	}
}

func TestManPagesHaveNoPageForHiddenCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	names := map[string]bool{}
	for _, c := range manPages(commandTree(h)) {
		names[manFileName(c, testManHeader)] = true
	}
	assert.True(t, names["helm.1"])
	assert.True(t, names["helm-man-install.1"])
	assert.False(t, names["helm-__gen-man.1"], "a hidden command")
	assert.False(t, names["helm-help.1"], "the help command")
}

// TestManPagesPrintRoffSpecialsAsWritten renders help texts full of what
// roff reads as requests and escapes, and checks that each prints as
// written: nothing is read as a request, a font change or a file to
// include.
func TestManPagesPrintRoffSpecialsAsWritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
	}{
		{name: "a leading dot", text: ".so /etc/passwd"},
		{name: "a leading dot after a space", text: " .TH EVIL"},
		{name: "a leading quote", text: "'br no break"},
		{name: "a backslash", text: `C:\Users\ann and \\server`},
		{name: "a font escape", text: `\fBbold\fR? no`},
		{name: "an escape that ends a line", text: `trailing \`},
		{name: "a comment", text: `\" not a comment`},
		{name: "quotes and accents", text: "\"quoted\" 'single' `back` ^caret~tilde"},
		{name: "hyphens a shell must see as dashes", text: "--json=id -h --no-pager"},
		{name: "characters beyond ASCII", text: "caf\u00e9 \u2014 \u2192"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := &cobra.Command{Use: "helm", Short: "short " + tt.text}
			leaf := &cobra.Command{
				Use: "leaf", Short: tt.text, Run: func(*cobra.Command, []string) {},
				Long:    tt.text + "\n\nsecond " + tt.text + "\n\n" + tt.text + "\n  " + tt.text,
				Example: tt.text,
			}
			leaf.Flags().String("flag", "", "usage "+tt.text)
			root.AddCommand(leaf)
			page := manPage(t, root, "leaf")
			require.Empty(t, lintMan(page))
			text, warnings := groffText(t, page)
			assert.Empty(t, warnings)
			want := strings.TrimSpace(tt.text)
			// Filling may break a text at its spaces: compare words.
			count := 7 // NAME, DESCRIPTION four times, OPTIONS, EXAMPLE
			if strings.Contains(tt.text, "`") {
				count-- // a flag's usage names its value between backquotes
			}
			assert.Equal(t, count, strings.Count(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")),
				"%s", text)
		})
	}
}

func TestManEscapeDropsControlCharacters(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `a\-b`, manEscape("a\x1b-\x00b\u0085"))
	assert.Empty(t, lintMan(manLine(manEscape("\x1b[31m.red"))))
}
