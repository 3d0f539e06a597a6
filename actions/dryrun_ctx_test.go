package actions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/actions"
)

// TestDryRunReadsTheRepositoryUnderTheCallersContext: a dry run that
// names the repository from the origin URL reads it under the caller's
// ctx; once that has ended it reads nothing and shows the placeholder.
func TestDryRunReadsTheRepositoryUnderTheCallersContext(t *testing.T) {
	f := newFixture(t)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	a := must[*actions.CloseIssue](t)(actions.NewCloseIssue(f.r, actions.CloseIssue{Number: f.iss}))
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"a live context", t.Context(), "repos/octo/widgets/issues/2"},
		{"an ended context", ended, "repos/OWNER/NAME/issues/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Contains(t, a.DryRun(tt.ctx), tt.want)
		})
	}
}
