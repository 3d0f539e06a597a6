// Package hooktest holds the golden-file helpers the host adapters'
// tests share.
package hooktest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

// Update rewrites golden files: go test ./agent/... -update.
var Update = flag.Bool("update", false, "rewrite the golden files")

// Golden compares got with the file at path, or writes it with -update.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *Update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file %s (run with -update to write it)", path)
	assert.Equal(t, string(want), string(got), "golden file %s", path)
}

// StepText renders a step for a golden file: what a person reads.
func StepText(s logbook.Step) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: %s\nagent: %s\nsession: %s\n", s.Kind, s.Agent, s.Session)
	if s.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", s.ID)
	}
	if s.Tool != "" {
		fmt.Fprintf(&b, "tool: %s\n", s.Tool)
	}
	fmt.Fprintf(&b, "text:\n%s\n", s.Text)
	if d := s.Decision; d != nil {
		fmt.Fprintf(&b, "decision: %s (%s)\n", d.Verdict, d.Reason)
	}
	if r := s.Result; r != nil {
		fmt.Fprintf(&b, "result (failed=%v):\n%s\n", r.Failed, r.Output)
	}
	return []byte(b.String())
}
