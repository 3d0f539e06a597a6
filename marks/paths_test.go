package marks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnchoredKeysNameTheSameFilesWhereverTheCallerRuns: relative paths
// anchored at a working directory are keyed by what they name.
func TestAnchoredKeysNameTheSameFilesWhereverTheCallerRuns(t *testing.T) {
	anchored := func(m Mark, base string) Mark {
		SetBase(m, base)
		return m
	}
	fc := func(p string) Mark { m, err := NewFileContents(p); require.NoError(t, err); return m }
	rp := func(p string) Mark { m, err := NewRustProject(p); require.NoError(t, err); return m }
	tests := []struct {
		name  string
		a, b  Mark
		equal bool
	}{
		{"same file from two spellings", anchored(fc("a.go"), "/w"), anchored(fc("/w/a.go"), "/elsewhere"), true},
		{"same name in two worktrees", anchored(fc("a.go"), "/w1"), anchored(fc("a.go"), "/w2"), false},
		{"parent spelling", anchored(fc("../w/a.go"), "/x"), anchored(fc("a.go"), "/w"), true},
		{"projects by root", anchored(rp("."), "/w"), anchored(rp("/w"), "/"), true},
		{"projects in two worktrees", anchored(rp("."), "/w1"), anchored(rp("."), "/w2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.equal {
				assert.Equal(t, tt.a.Key(), tt.b.Key())
			} else {
				assert.NotEqual(t, tt.a.Key(), tt.b.Key())
			}
		})
	}
	m := anchored(rp("."), "/w")
	assert.Equal(t, "RustProject @ .", m.String(), "the label keeps the path as given")
	data, err := Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"rust-project","root":".","base":"/w"}`, string(data))
	back, err := Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, m, back)
	other, err := NewContext("no paths")
	require.NoError(t, err)
	SetBase(other, "/w") // marks without paths are left alone
	assert.Equal(t, "context", other.Kind())
}
