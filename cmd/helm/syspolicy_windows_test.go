package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSystemPolicyPathIgnoresProgramDataVariable: the agent sets
// ProgramData to a folder with no rules; the system policy is still
// looked for where Windows keeps ProgramData.
func TestSystemPolicyPathIgnoresProgramDataVariable(t *testing.T) {
	planted := t.TempDir()
	t.Setenv("ProgramData", planted)
	got := defaultSystemPolicy()
	assert.NotEmpty(t, got)
	assert.False(t, strings.HasPrefix(got, planted), "the system policy is looked for in %s, the folder the agent named", got)
	assert.Equal(t, "policy.toml", filepath.Base(got))
}
