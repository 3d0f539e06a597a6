package redact_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/redact"
)

func TestStripEnvLeavesSecretLookingNamesOut(t *testing.T) {
	t.Parallel()
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com",
		"GH_TOKEN=ghp_x", "GITHUB_TOKEN=t", "GH_ENTERPRISE_TOKEN=e", "GITHUB_ENTERPRISE_TOKEN=g",
		"AWS_SECRET_ACCESS_KEY=a", "MY_API_KEY=k", "DB_PASSWORD=p", "X-Api-Key=x", "npm_config__authToken=n",
		"MYSQL_PWD=m", "DB_PASS=d", "GPG_PASSPHRASE=g", "RAILS_MASTER_KEY=r", "SSH_KEY=s",
		"DATABASE_URL=postgres://app:hunter22@db:5432/app", "HTTPS_PROXY=http://ann:pw@proxy:3128",
		"PWD=/home/ann/src", "OLDPWD=/home/ann", "AWS_ACCESS_KEY_ID=AKIA", "SSH_AUTH_SOCK=/run/ssh.sock",
		"PLAIN_URL=https://example.com/a:b@c", "USER_URL=https://ann@example.com/",
		"NOEQUALS",
	}
	innocent := []string{"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com",
		"PWD=/home/ann/src", "OLDPWD=/home/ann", "AWS_ACCESS_KEY_ID=AKIA", "SSH_AUTH_SOCK=/run/ssh.sock",
		"PLAIN_URL=https://example.com/a:b@c", "USER_URL=https://ann@example.com/"}
	tests := []struct {
		name string
		keep []string
		want []string
	}{
		{
			name: "secret-looking names, and URLs with a password, go; the rest stays",
			want: innocent,
		},
		{
			name: "kept names stay although they look secret",
			keep: []string{"MY_API_KEY", "GH_TOKEN", "NOT_SET_TOKEN", "DATABASE_URL"},
			want: []string{"PATH=/usr/bin", "HOME=/home/ann", "GOPATH=/home/ann/go", "GOCACHE=/tmp/go-cache", "GH_HOST=github.example.com", "GH_TOKEN=ghp_x", "MY_API_KEY=k",
				"DATABASE_URL=postgres://app:hunter22@db:5432/app", "PWD=/home/ann/src", "OLDPWD=/home/ann", "AWS_ACCESS_KEY_ID=AKIA", "SSH_AUTH_SOCK=/run/ssh.sock",
				"PLAIN_URL=https://example.com/a:b@c", "USER_URL=https://ann@example.com/"},
		},
		{
			name: "a kept name matches whole names only",
			keep: []string{"TOKEN", "gh_token"},
			want: innocent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, redact.StripEnv(environ, tt.keep))
		})
	}
}
