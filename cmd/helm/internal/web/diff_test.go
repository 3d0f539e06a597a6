package web

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/sighting"
)

func TestDiffWordsGivesBackBothTexts(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           []diffOp
	}{
		{"a word replaced", "Init dereferences a nil widget.", "Init dereferences the nil config.",
			[]diffOp{{"same", "Init dereferences "}, {"del", "a"}, {"ins", "the"}, {"same", " nil "}, {"del", "widget"}, {"ins", "config"}, {"same", "."}}},
		{"the same", "no change", "no change", []diffOp{{"same", "no change"}}},
		{"from nothing", "", "all new", []diffOp{{"ins", "all new"}}},
		{"to nothing", "all gone", "", []diffOp{{"del", "all gone"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffWords(tt.old, tt.new)
			assert.Equal(t, tt.want, got)
			var old, new strings.Builder
			for _, o := range got {
				if o.Op != "ins" {
					old.WriteString(o.Text)
				}
				if o.Op != "del" {
					new.WriteString(o.Text)
				}
			}
			assert.Equal(t, tt.old, old.String())
			assert.Equal(t, tt.new, new.String())
		})
	}
}

func TestTreesNestTheListingsByPath(t *testing.T) {
	size := uint64(7)
	roots := trees([]sighting.DirectoryListing{
		{Path: ".", Entries: []sighting.DirectoryEntry{{Name: "a", IsDir: true}, {Name: "f.go", SizeBytes: &size}, {Name: "l", Symlink: "f.go"}}},
		{Path: "a", Entries: []sighting.DirectoryEntry{{Name: "b", IsDir: true}}},
		{Path: "a/b", Error: "permission denied"},
	})
	if assert.Len(t, roots, 1) {
		r := roots[0]
		assert.Equal(t, ".", r.Name)
		assert.Len(t, r.Children, 3)
		a := r.Children[0]
		assert.Equal(t, "a", a.Name)
		if assert.Len(t, a.Children, 1) {
			assert.Equal(t, "permission denied", a.Children[0].Error)
		}
		assert.Equal(t, uint64(7), r.Children[1].Size)
		assert.Equal(t, "f.go", r.Children[2].Symlink)
	}
}

func TestHighlightEscapesTheText(t *testing.T) {
	code, ok := highlight("x.go", "package x // </pre><script>alert(1)</script>\n")
	assert.True(t, ok)
	assert.NotContains(t, string(code), "<script>")
	assert.Contains(t, string(code), "&lt;script&gt;")
	assert.NotContains(t, string(code), "style=")
	_, ok = highlight("notes.unknown-extension", "text")
	assert.False(t, ok, "no lexer: shown plain")
}
