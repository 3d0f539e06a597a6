package style

import (
	"testing"

	"github.com/alecthomas/chroma/v2/styles"
	"github.com/stretchr/testify/assert"
)

func TestGitHubIsChromasGitHubStyle(t *testing.T) {
	want := styles.Get("github")
	got := GitHub()
	assert.Equal(t, want.Name, got.Name)
	for _, tt := range want.Types() {
		assert.Equal(t, want.Get(tt).String(), got.Get(tt).String(), tt.String())
	}
	assert.Equal(t, len(want.Types()), len(got.Types()))
}
