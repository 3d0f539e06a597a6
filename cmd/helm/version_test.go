package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionFromLinkerFlag: a release build sets the version with
// -ldflags "-X main.version=..."; helm version and --version print it.
func TestVersionFromLinkerFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "helm")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).Output()
		require.NoError(t, err)
		assert.Regexp(t, `^helm v9\.8\.7 go1\.\d+\S*\n$`, string(out), "helm %v", args)
	}
	out, err = exec.Command(bin, "version", "--json").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"version": "v9.8.7"`)
}

func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	v := readVersion()
	assert.NotEmpty(t, v.Version, "the module version, or (devel)")
	assert.Regexp(t, `^go1\.`, v.Go)
	assert.Regexp(t, `^\S+( [0-9a-f]{1,12}(\+dirty)?)? go1\.`, versionString())
}
