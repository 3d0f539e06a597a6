package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackNoSpellingMakesTheSubtreeRunAnotherCommand spells thousands
// of command lines from the words the recorded agent would try (global
// flags with and without values, = forms, --, -, -h, an empty word,
// abbreviations, other cases, a flag's value that names a command, a
// write's word after a read's) and checks that whenever helm builds only
// a subtree, cobra finds in it the command it finds in the whole tree,
// with the same error: a read typed never runs as a write.
func TestAttackNoSpellingMakesTheSubtreeRunAnotherCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	words := []string{
		"--home", "/h", "--home=/h", "--store", "--voyage", "--voyage=log", "--as", "--role=r",
		"--json", "--json=id", "--jq", ".x", "--no-pager", "--no-pager=false", "--absolute",
		"-h", "-hh", "-h=true", "--help", "--", "-", "", "---home", "--dry-run", "--version",
		"voyage", "list", "show", "log", "note", "complete", "action", "push", "undo",
		"bearing", "observe", "slate", "wipe", "version", "help", "vo", "VOYAGE", "Log", "logs",
		"completion", "man",
	}
	rng := rand.New(rand.NewPCG(35, 35))
	subtrees := 0
	for range 3000 {
		args := make([]string, 1+rng.IntN(5))
		for i := range args {
			args[i] = words[rng.IntN(len(words))]
		}
		root := newRootCmd(&app{main: h.main()}, args)
		if len(root.Commands()) == len(topCommands) {
			continue // the whole tree
		}
		subtrees++
		require.Len(t, root.Commands(), 1, "%q: a subtree", args)
		want, _, wantErr := commandTree(h).Find(args) // a fresh tree: parsing sets its flags
		got, _, gotErr := root.Find(args)
		if wantErr != nil || gotErr != nil {
			require.Error(t, gotErr, "%q: the whole tree says %v", args, wantErr)
			require.Error(t, wantErr, "%q: the subtree says %v", args, gotErr)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "%q", args)
			continue
		}
		assert.Equal(t, want.CommandPath(), got.CommandPath(), "%q", args)
		assert.Equal(t, flagSignature(want), flagSignature(got), "%q", args)
		// The command's flags parse the same: the same value of each.
		if want.ParseFlags(args) == nil {
			assert.NoError(t, got.ParseFlags(args), "%q", args)
			assert.Equal(t, strings.Join(want.Flags().Args(), "\x00"), strings.Join(got.Flags().Args(), "\x00"), "%q: the words left", args)
		}
	}
	assert.Greater(t, subtrees, 300, "enough spellings build a subtree")
}
