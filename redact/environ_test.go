package redact_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/redact"
)

func TestStripEnvLeavesSecretLookingNamesOut(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com",
		"GH_TOKEN=ghp_x", "GITHUB_TOKEN=t", "GH_ENTERPRISE_TOKEN=e", "GITHUB_ENTERPRISE_TOKEN=g",
		"AWS_SECRET_ACCESS_KEY=a", "MY_API_KEY=k", "DB_PASSWORD=p", "X-Api-Key=x", "npm_config__authToken=n",
		"NOEQUALS",
	}
	tests := []struct {
		name string
		keep []string
		want []string
	}{
		{
			name: "secret-looking names go, the rest stays",
			want: []string{"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com"},
		},
		{
			name: "kept names stay although they look secret",
			keep: []string{"MY_API_KEY", "GH_TOKEN", "NOT_SET_TOKEN"},
			want: []string{"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com", "GH_TOKEN=ghp_x", "MY_API_KEY=k"},
		},
		{
			name: "a kept name matches whole names only",
			keep: []string{"TOKEN", "gh_token"},
			want: []string{"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, redact.StripEnv(environ, tt.keep))
		})
	}
}
