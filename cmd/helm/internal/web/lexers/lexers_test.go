package lexers

import (
	"fmt"
	"os"
	"strings"
	"testing"

	chromalexers "github.com/alecthomas/chroma/v2/lexers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain fails the package when its init parsed the embedded
// definitions: the lexers defined in Go must still be pending, as no
// test has asked for a lexer yet.
func TestMain(m *testing.M) {
	if len(pending) == 0 {
		fmt.Fprintln(os.Stderr, "lexers: the registry was built at package init")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestMatchFindsEmbeddedAndGoDefinedLexersByFileName(t *testing.T) {
	tests := []struct {
		name, file, lexer string
	}{
		{name: "defined in Go", file: "main.go", lexer: "Go"},
		{name: "defined in Go, delegating to HTML", file: "index.php", lexer: "PHP"},
		{name: "embedded XML", file: "lib.rs", lexer: "Rust"},
		{name: "embedded XML with an analyser set by the registry", file: "zone.zone", lexer: "dns"},
		{name: "markdown, defined in Go", file: "README.md", lexer: "markdown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Match(tt.file)
			require.NotNil(t, l, tt.file)
			assert.Equal(t, tt.lexer, l.Config().Name)
		})
	}
	assert.Nil(t, Match("notes.unknown-extension"))
	assert.Empty(t, pending, "the registry holds the pending lexers")
}

func TestAnalysersSetAtInitByChromaAreSetOnceBuilt(t *testing.T) {
	l := Get("dns")
	require.NotNil(t, l)
	a, ok := l.(interface{ AnalyseText(string) float32 })
	require.True(t, ok)
	assert.Equal(t, float32(1), a.AnalyseText("@ IN SOA ns.example.com. admin.example.com. 1 2 3 4 5\n"))
}

// TestRegistryHoldsWhatChromasDoes compares the copy with the package
// it copies: the same lexers, in the same order, and the same lexer for
// a file named by each of their patterns.
func TestRegistryHoldsWhatChromasDoes(t *testing.T) {
	ours, theirs := registry().Lexers, chromalexers.GlobalLexerRegistry.Lexers
	require.Len(t, ours, len(theirs))
	for i := range theirs {
		require.Equal(t, theirs[i].Config().Name, ours[i].Config().Name, "lexer %d", i)
		for _, glob := range theirs[i].Config().Filenames {
			file := strings.ReplaceAll(strings.ReplaceAll(glob, "*", "x"), "?", "y")
			want, got := chromalexers.Match(file), Match(file)
			require.Equal(t, want == nil, got == nil, file)
			if want != nil {
				assert.Equal(t, want.Config().Name, got.Config().Name, file)
			}
		}
	}
}
