package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/runner"
)

func TestAmbientEnvKeepsWhatProgramsNeedAndDropsCredentials(t *testing.T) {
	t.Parallel()
	env := []string{
		"PATH=/usr/bin", "HOME=/home/a", "LANG=C.UTF-8", "LC_ALL=C", "TMPDIR=/tmp", "SSL_CERT_FILE=/ca.pem",
		"HTTPS_PROXY=http://proxy:3128", "SSH_AUTH_SOCK=/run/agent", "GIT_CONFIG_KEY_0=user.name", "XDG_CONFIG_HOME=/x",
		"GH_TOKEN=ghp_ambient", "GITHUB_TOKEN=ghp_ambient2", "GH_ENTERPRISE_TOKEN=e", "GITHUB_ENTERPRISE_TOKEN=e2",
		"GH_HOST=ghe.example", "AWS_SECRET_ACCESS_KEY=s", "OPENAI_API_KEY=k", "HELM_HOME=/h", "NOEQUALS",
	}
	got := runner.AmbientEnv(env, nil)
	assert.Equal(t, []string{
		"PATH=/usr/bin", "HOME=/home/a", "LANG=C.UTF-8", "LC_ALL=C", "TMPDIR=/tmp", "SSL_CERT_FILE=/ca.pem",
		"HTTPS_PROXY=http://proxy:3128", "SSH_AUTH_SOCK=/run/agent", "GIT_CONFIG_KEY_0=user.name", "XDG_CONFIG_HOME=/x",
	}, got)

	got = runner.AmbientEnv(env, []string{"GH_HOST", "GH_TOKEN"})
	assert.Contains(t, got, "GH_HOST=ghe.example", "an identity's config passes a variable on")
	assert.Contains(t, got, "GH_TOKEN=ghp_ambient")
	assert.NotContains(t, got, "GITHUB_TOKEN=ghp_ambient2", "only what it names")
}

func TestLoginsReadHostsWithoutTheirTokens(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := &runner.Runner{Home: home, Identity: "alice"}
	logins, err := r.Logins()
	require.NoError(t, err)
	assert.Empty(t, logins, "no configuration, no logins")

	dir := filepath.Join(home, "gh-config", "alice")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte(`github.com:
    user: alice
    oauth_token: gho_secret
    git_protocol: https
ghe.example:8443:
    git_protocol: ssh
`), 0o600))
	logins, err = r.Logins()
	require.NoError(t, err)
	assert.Equal(t, []runner.HostLogin{{Host: "github.com", User: "alice", HasToken: true}, {Host: "ghe.example:8443"}}, logins)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte("github.com: [unclosed\n"), 0o600))
	_, err = r.Logins()
	assert.ErrorContains(t, err, filepath.Join(dir, "hosts.yml"))
}
