package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/runner"
)

func TestGHConfigDirIsPerIdentity(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	home := t.TempDir()
	for _, id := range []string{"john-agent", "dyreby"} {
		r := &runner.Runner{Home: home, Identity: id, Env: srv.Env()}
		out, err := r.GH(context.Background(), "api", "repos/octo/widgets")
		require.NoError(t, err)
		assert.Contains(t, string(out), `"full_name":"octo/widgets"`)

		dir, err := r.GHConfigDir()
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(home, "gh-config", id), dir)
		info, err := os.Stat(dir)
		require.NoError(t, err)
		assert.True(t, info.IsDir())
		assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

		c, err := r.GHCommand(nil, "api", "user")
		require.NoError(t, err)
		assert.Contains(t, c.Env, "GH_CONFIG_DIR="+dir)
	}
	entries, err := os.ReadDir(filepath.Join(home, "gh-config"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"dyreby", "john-agent"}, names)
}

func TestGHRefusesIdentityThatIsNotAName(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	for _, tc := range []struct{ name, identity string }{
		{"parent directory", "../x"},
		{"path", "a/b"},
		{"backslash", `a\b`},
		{"empty", ""},
		{"dot", "."},
		{"hidden", ".x"},
		{"control character", "a\x01b"},
		{"newline", "a\nb"},
		{"space", "a b"},
		{"over-long", strings.Repeat("a", 65)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			r := &runner.Runner{Home: home, Identity: tc.identity, Env: srv.Env()}
			_, err := r.GH(context.Background(), "api", "repos/octo/widgets")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "identity")
			_, err = r.GHCommand(nil, "api", "x")
			assert.Error(t, err)
			_, statErr := os.Stat(home)
			assert.True(t, os.IsNotExist(statErr), "nothing may be created for a bad identity")
		})
	}
	assert.Empty(t, srv.Requests(), "gh must not run for a bad identity")
}

func TestGHNeedsHome(t *testing.T) {
	t.Parallel()
	r := &runner.Runner{Identity: "john"}
	_, err := r.GH(context.Background(), "api", "user")
	assert.ErrorIs(t, err, runner.ErrNoHome)
}

func TestGHFailureCarriesGHMessage(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	srv.Fail("GET", "repos/octo/widgets/issues/1", 500, "database on fire")
	r := srv.Runner(t, "")
	for _, tc := range []struct{ name, path, want string }{
		{"not found", "repos/octo/widgets/issues/9", "gh: Not Found (HTTP 404)"},
		{"injected", "repos/octo/widgets/issues/1", "gh: database on fire (HTTP 500)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.GH(context.Background(), "api", tc.path)
			var ee *runner.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 1, ee.ExitCode)
			assert.Equal(t, "gh api "+tc.path, ee.Cmd)
			assert.Contains(t, ee.Stderr, tc.want)
			assert.Contains(t, err.Error(), "gh api "+tc.path+": exit status 1: "+tc.want)
		})
	}
}

func TestTokensNeverReachErrors(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	r := srv.Runner(t, t.TempDir())
	r.Env = append(r.Env, "GH_TOKEN=ghp_s3cr3tvalue")

	// The enterprise token appears in the path of a failing call.
	_, err := r.GH(context.Background(), "api", "repos/octo/"+ghtest.Token)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), ghtest.Token)
	assert.Contains(t, err.Error(), "repos/octo/***")

	// A git URL carrying credentials, refused by a closed port.
	_, err = r.Git(context.Background(), "ls-remote", "https://x-access-token:ghp_s3cr3tvalue@127.0.0.1:1/o/r.git")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "ghp_s3cr3tvalue")
	assert.NotContains(t, err.Error(), "x-access-token")

	// The rendered dry-run command masks token values.
	c, err := r.GHCommand(nil, "api", "user")
	require.NoError(t, err)
	s := c.String()
	assert.NotContains(t, s, ghtest.Token)
	assert.NotContains(t, s, "ghp_s3cr3tvalue")
	assert.Contains(t, s, "GH_ENTERPRISE_TOKEN='***'")
}

func TestCommandStringIsTheExactInvocation(t *testing.T) {
	t.Parallel()
	r := &runner.Runner{Home: "/h", Identity: "john", Dir: "/work/repo"}
	c, err := r.GHCommand([]byte(`{"body":"it's"}`), "api", "-X", "POST", "repos/o/r/issues/1/comments", "--input", "-")
	require.NoError(t, err)
	assert.Equal(t,
		`cd /work/repo && printf '%s' '{"body":"it'\''s"}' | GH_CONFIG_DIR=/h/gh-config/john GH_PROMPT_DISABLED=1 GH_NO_UPDATE_NOTIFIER=1 NO_COLOR=1 gh api -X POST repos/o/r/issues/1/comments --input -`,
		c.String())
	_, statErr := os.Stat("/h")
	assert.True(t, os.IsNotExist(statErr), "building a command creates nothing")

	g := r.GitCommand("commit", "-m", "Fix the widget")
	assert.Equal(t, `cd /work/repo && GIT_TERMINAL_PROMPT=0 git commit -m 'Fix the widget'`, g.String())
}

func TestMissingProgramNamesTheInstall(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/nonexistent/gh", "gh-not-installed-here"} {
		r := &runner.Runner{Home: t.TempDir(), Identity: "john", GHPath: path}
		_, err := r.GH(context.Background(), "api", "user")
		require.ErrorIs(t, err, runner.ErrProgramNotFound)
		assert.Contains(t, err.Error(), "apt-get install gh")
	}
}

func TestGitFailureCarriesGitMessage(t *testing.T) {
	t.Parallel()
	r := &runner.Runner{Dir: t.TempDir()}
	_, err := r.Git(context.Background(), "rev-parse", "--verify", "nope")
	var ee *runner.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 128, ee.ExitCode)
	assert.Contains(t, ee.Message(), "not a git repository")
}

func TestParseRemoteURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, url, want, err string }{
		{"https", "https://github.com/helmlog/helm", "helmlog/helm", ""},
		{"https .git", "https://github.com/helmlog/helm.git", "helmlog/helm", ""},
		{"https trailing slash", "https://github.com/helmlog/helm/", "helmlog/helm", ""},
		{"https port", "https://127.0.0.1:8443/o/r.git", "o/r", ""},
		{"https credentials", "https://x:tok@github.com/o/r.git", "o/r", ""},
		{"scp", "git@github.com:helmlog/helm.git", "helmlog/helm", ""},
		{"scp no .git", "git@github.com:helmlog/helm", "helmlog/helm", ""},
		{"ssh", "ssh://git@github.com/helmlog/helm.git", "helmlog/helm", ""},
		{"ssh port", "ssh://git@github.com:22/helmlog/helm", "helmlog/helm", ""},
		{"dot segments resolved", "https://github.com/helmlog/x/../helm.git/.", "helmlog/helm", ""},
		{"file dot segment", "file:///srv/octo/prod.git/./", "octo/prod", ""},
		{"local path", "/srv/git/helm.git", "", "names no GitHub repository"},
		{"one segment", "https://github.com/helm", "", "OWNER/NAME"},
		{"bad chars", "https://github.com/o/r%20x", "", "OWNER/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runner.ParseRemoteURL(tc.url)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), "tok@")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRepoFromOriginOrOverride(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	g := srv.GitRepo(t, "octo/widgets")
	ctx := context.Background()

	r := srv.Runner(t, g.Dir)
	got, err := r.Repo(ctx)
	require.NoError(t, err)
	assert.Equal(t, "octo/widgets", got)

	r.Repository = "other/place"
	got, err = r.Repo(ctx)
	require.NoError(t, err)
	assert.Equal(t, "other/place", got)

	r.Repository = "not-a-repo"
	_, err = r.Repo(ctx)
	assert.ErrorContains(t, err, "not-a-repo")

	none := &runner.Runner{Dir: t.TempDir()}
	_, err = none.Repo(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "find the GitHub repository from the origin remote of "+none.Dir)
	var ee *runner.ExitError
	assert.True(t, errors.As(err, &ee), "git's own failure is kept")
}
