package integration

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildHelm builds this tree's cmd/helm into a temporary directory of t
// and returns the program's path.
func buildHelm(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "helm")
	build := exec.Command("go", "build", "-o", bin, "./cmd/helm")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}
