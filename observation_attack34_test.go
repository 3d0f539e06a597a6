package helm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// TestAttackEveryFailedLookIsAnObservationError: the looks an agent can
// make fail, each recorded and returned with an *ObservationError
// holding what failed (never err == nil): a project mark on a tree that
// is not that project (a Go repository, a Cargo.toml that is a directory
// or a link out of the tree), a program killed at its timeout, an HTTP
// error status, a connection refused.
func TestAttackEveryFailedLookIsAnObservationError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusInternalServerError) }))
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())
	outside := filepath.Join(t.TempDir(), "Cargo.toml")
	require.NoError(t, os.WriteFile(outside, []byte("[package]\n"), 0o644))
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		mark  func() (marks.Mark, error)
		want  sighting.FailureKind
	}{
		{"rust-project on a Go repository", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
		}, func() (marks.Mark, error) { return marks.NewRustProject(".") }, sighting.FailureNotProject},
		{"rust-project where Cargo.toml is a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "Cargo.toml"), 0o755))
		}, func() (marks.Mark, error) { return marks.NewRustProject(".") }, sighting.FailureNotProject},
		{"rust-project where Cargo.toml links out of the tree", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "Cargo.toml")))
		}, func() (marks.Mark, error) { return marks.NewRustProject(".") }, sighting.FailureNotProject},
		{"go-project on a Rust crate", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package]\n"), 0o644))
		}, func() (marks.Mark, error) { return marks.NewGoProject(".") }, sighting.FailureNotProject},
		{"a program killed at its timeout", func(*testing.T, string) {},
			func() (marks.Mark, error) { return marks.NewCommand("", "sleep", "300") }, sighting.FailureTimeout},
		{"an HTTP error status", func(*testing.T, string) {},
			func() (marks.Mark, error) { return marks.NewWeb(srv.URL) }, sighting.FailureHTTPStatus},
		{"a connection refused", func(*testing.T, string) {},
			func() (marks.Mark, error) { return marks.NewWeb(closed) }, sighting.FailureFetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			tt.setup(t, dir)
			_, v := newVoyage(t, nil)
			m, err := tt.mark()
			require.NoError(t, err)
			o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir, CommandTimeout: 100 * time.Millisecond}})
			var failed *helm.ObservationError
			require.True(t, errors.As(err, &failed), "an *ObservationError, got %v", err)
			kinds := make([]sighting.FailureKind, len(failed.Failures))
			for i, f := range failed.Failures {
				kinds[i] = f.Kind
			}
			assert.Contains(t, kinds, tt.want)
			assert.Equal(t, o.Failures(), failed.Failures, "the Observed is returned too")
			require.Len(t, v.Slate(), 1, "recorded all the same")
			require.NoError(t, v.Erase(ctx, failed.Key, who))
			assert.Empty(t, v.Slate(), "its key erases it")
		})
	}
}
