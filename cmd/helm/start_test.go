package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnlyTheInvokedCommandIsBuilt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // "" builds the whole tree
	}{
		{name: "a command alone", args: []string{"version"}, want: "version"},
		{name: "a command and its words", args: []string{"voyage", "list", "--status", "all"}, want: "voyage"},
		{name: "after a global flag and its value", args: []string{"--home", "/h", "note", "x"}, want: "note"},
		{name: "after a global flag given with =", args: []string{"--home=/h", "log"}, want: "log"},
		{name: "after a valueless global flag", args: []string{"--no-pager", "log"}, want: "log"},
		{name: "after --json, whose value is optional", args: []string{"--json", "voyage", "list"}, want: "voyage"},
		{name: "after a valueless shorthand", args: []string{"-h", "note"}, want: "note"},
		{name: "nothing: bare helm lists every command", args: nil},
		{name: "only flags", args: []string{"--home", "/h"}},
		{name: "a global flag's value that names a command", args: []string{"--voyage", "log"}},
		{name: "a flag the root does not know", args: []string{"--dry-run", "action", "push"}},
		{name: "after --", args: []string{"--", "note", "x"}},
		{name: "a word that names no command", args: []string{"lg"}},
		{name: "help walks the tree", args: []string{"help", "log"}},
		{name: "completion walks the tree", args: []string{"completion", "bash"}},
		{name: "cobra's completion command", args: []string{"__complete", "no", ""}},
		{name: "the man pages list every command", args: []string{"man", "install", "/d"}},
		{name: "the man generator", args: []string{"__gen-man", "/d"}},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd(&app{main: h.main()}, tt.args)
			names := subNames(root)
			if tt.want == "" {
				assert.Equal(t, len(topCommands), len(root.Commands()), "the whole tree: %s", names)
			} else {
				assert.Equal(t, tt.want, names, "only the invoked command")
			}
		})
	}
}

func TestTopCommandsAreNamedByTheirWord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range topCommands {
		assert.Equal(t, tc.name, tc.build(&app{main: h.main()}).Name())
	}
}

// TestSubtreeFindsWhatTheWholeTreeFinds checks, for every command (and
// a group given a leaf's valueless flag before the leaf's word), that
// the tree built for its words finds the same command, with the same
// flags and the same help, as the whole tree.
func TestSubtreeFindsWhatTheWholeTreeFinds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var cases [][]string
	walk(commandTree(h), func(c *cobra.Command) {
		words := strings.Fields(commandWords(c))
		if len(words) > 0 && invokedCommand(c.Root(), words) != "" {
			cases = append(cases, words)
		}
	})
	require.Greater(t, len(cases), 60, "every command")
	cases = append(cases,
		[]string{"action", "--dry-run", "push"},
		[]string{"--home", "/h", "voyage", "--status", "all", "list"},
		[]string{"-h", "log"},
	)
	for _, args := range cases {
		whole, _, err := commandTree(h).Find(args)
		require.NoError(t, err, "%v", args)
		root := newRootCmd(&app{main: h.main()}, args)
		require.Less(t, len(root.Commands()), len(topCommands), "a subtree for %v", args)
		sub, _, err := root.Find(args)
		require.NoError(t, err, "%v", args)
		assert.Equal(t, whole.CommandPath(), sub.CommandPath(), "%v", args)
		assert.Equal(t, flagSignature(whole), flagSignature(sub), "%v", args)
		var wholeHelp, subHelp strings.Builder
		require.NoError(t, writeHelp(&wholeHelp, whole))
		require.NoError(t, writeHelp(&subHelp, sub))
		assert.Equal(t, wholeHelp.String(), subHelp.String(), "%v", args)
	}
}

// flagSignature lists the flags c parses, its own and inherited, with
// what decides how they parse.
func flagSignature(c *cobra.Command) string {
	var b strings.Builder
	visit := func(f *pflag.Flag) {
		fmt.Fprintf(&b, "%s/%s/%q/%q/%v/%s\n", f.Name, f.Shorthand, f.DefValue, f.NoOptDefVal, f.Hidden, f.Usage)
	}
	c.LocalFlags().VisitAll(visit)
	b.WriteString("--\n")
	c.InheritedFlags().VisitAll(visit)
	return b.String()
}

// BenchmarkStartVersion is helm version in-process: the tree built and
// run, without the process's start (the bench's cli_version_vs_hello
// measures that).
func BenchmarkStartVersion(b *testing.B) {
	for b.Loop() {
		if err := NewMain().Run(b.Context(), []string{"version"}, strings.NewReader(""), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
