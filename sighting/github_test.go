package sighting_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/sighting"
)

func TestGitHubSightingsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    sighting.Sighting
		kind string
	}{
		{"pull request", &sighting.GitHubPullRequest{Repo: "o/r", Number: 45, Focus: []string{"summary", "files"},
			Summary: &sighting.PullRequestSummary{Number: 45, Title: "Fix", State: "open", Head: "fix", Base: "main"},
			Errors:  []sighting.FocusError{{Focus: "files", Error: "gh: boom (HTTP 500)"}}}, "github-pr"},
		{"issue", &sighting.GitHubIssue{Repo: "o/r", Number: 42, Focus: []string{"comments"},
			Comments: []sighting.Comment{{ID: 7, Author: "dyreby", Body: "hi"}}}, "github-issue"},
		{"repository", &sighting.GitHubRepository{Repo: "o/r", Focus: []string{"issues", "pull-requests"},
			Issues: []sighting.IssueSummary{{Number: 1, Title: "a"}}, PullRequests: []sighting.PullRequestSummary{}}, "github-repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := sighting.Marshal(tc.s)
			require.NoError(t, err)
			assert.Contains(t, string(data), `{"kind":"`+tc.kind+`"`)
			back, err := sighting.Unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, tc.s, back)
			again, err := sighting.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, data, again, "encoding is deterministic")
		})
	}
}
