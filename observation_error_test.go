package helm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// TestObserveReturnsAnObservationErrorForAFailedLook: a look whose
// sighting reports a failure is recorded, and Observe returns it with an
// *ObservationError naming the voyage, the mark, its slate key and what
// failed; Erase with that key takes it off the slate. A look that did
// not fail returns no error.
func TestObserveReturnsAnObservationErrorForAFailedLook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "there.txt"), []byte("here"), 0o644))
	tests := []struct {
		name string
		mark func() (marks.Mark, error)
		want sighting.FailureKind // "": no failure
	}{
		{"a file not there", func() (marks.Mark, error) { return marks.NewFileContents("not-there.txt") }, sighting.FailureMissing},
		{"a program exiting non-zero", func() (marks.Mark, error) { return marks.NewCommand("", "sh", "-c", "exit 3") }, sighting.FailureExitStatus},
		{"a file that is there", func() (marks.Mark, error) { return marks.NewFileContents("there.txt") }, ""},
		{"a program exiting zero", func() (marks.Mark, error) { return marks.NewCommand("", "true") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, v := newVoyage(t, nil)
			m, err := tt.mark()
			require.NoError(t, err)
			o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: &marks.Env{Dir: dir}})
			if tt.want == "" {
				require.NoError(t, err)
				assert.Empty(t, o.Failures())
				return
			}
			var failed *helm.ObservationError
			require.True(t, errors.As(err, &failed), "an *ObservationError, got %v", err)
			require.NotEmpty(t, failed.Failures)
			assert.Equal(t, tt.want, failed.Failures[0].Kind)
			assert.Equal(t, o.Failures(), failed.Failures, "the Observed is returned too")
			assert.Equal(t, v.ID(), failed.Voyage)
			assert.Equal(t, m.Key(), failed.Mark.Key())
			assert.Equal(t, o.Record.Key, failed.Key)
			assert.Contains(t, err.Error(), "on voyage "+v.ID()+": recorded, but ")
			assert.Contains(t, err.Error(), failed.Failures[0].Message)
			require.Len(t, v.Slate(), 1, "recorded all the same")
			require.NoError(t, v.Erase(ctx, failed.Key, who))
			assert.Empty(t, v.Slate(), "its key erases it")
		})
	}
}
