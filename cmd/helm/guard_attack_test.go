package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// The recorded agent attacks the push guard with what it controls: the
// spelling of its remote's URL, the repository's git configuration and
// hooks, and the questions it asks `helm policy check`. Each test is a
// hole that was open: the push reached what a rule protects, ran the
// agent's code although the guard refused it, or policy check said a
// push was allowed that the guard then refused.

// bareAt makes a bare repository at DIR/rel, with main, and returns its
// path.
func bareAt(t *testing.T, g *ghtest.GitRepo, rel string) string {
	t.Helper()
	bare := filepath.Join(t.TempDir(), filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(bare), 0o700))
	g.Git(t, "init", "-q", "--bare", "-b", "main", bare)
	return bare
}

// TestRepoRulesSeeEverySpellingOfTheRepository: a URL that reaches
// octo/prod names octo/prod to the guard, however it is spelled — with
// dot segments git and the operating system (or an HTTP client) resolve,
// or in another case (GitHub's owner and repository names are
// case-insensitive: https://github.com/OCTO/PROD is octo/prod).
func TestRepoRulesSeeEverySpellingOfTheRepository(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// url returns the push URL for a bare repository made under
		// dir, and the repository's path.
		url func(t *testing.T, g *ghtest.GitRepo) (url, bare string)
	}{
		{"a trailing dot segment", func(t *testing.T, g *ghtest.GitRepo) (string, string) {
			bare := bareAt(t, g, "octo/prod.git")
			return "file://" + bare + "/.", bare
		}},
		{"a trailing dot segment and slash", func(t *testing.T, g *ghtest.GitRepo) (string, string) {
			bare := bareAt(t, g, "octo/prod.git")
			return "file://" + bare + "/./", bare
		}},
		{"a dot-dot segment", func(t *testing.T, g *ghtest.GitRepo) (string, string) {
			bare := bareAt(t, g, "octo/prod.git")
			require.NoError(t, os.Mkdir(filepath.Join(filepath.Dir(bare), "x"), 0o700))
			return "file://" + filepath.Dir(bare) + "/x/../prod.git", bare
		}},
		{"upper case", func(t *testing.T, g *ghtest.GitRepo) (string, string) {
			bare := bareAt(t, g, "OCTO/Prod.git")
			return "file://" + bare, bare
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, g := guardRepo(t, false, denyProd)
			url, bare := tc.url(t, g)
			g.Git(t, "remote", "set-url", "--push", "origin", url)
			before := remoteRefs(t, g, bare)
			r := h.fails(4, "action", "push", "--branch", "feature")
			assert.Contains(t, r.Stderr, `denied by rule "nothing goes to prod"`)
			assert.Equal(t, before, remoteRefs(t, g, bare), "prod is unchanged")
			assertRefusedLast(t, h, "nothing goes to prod")
		})
	}
}

// TestReceivePackConfigDoesNotRedirectThePush: remote.NAME.receivepack
// is the program git runs at the other end; for a local (file://)
// remote it runs here, and may open any repository. The guard is shown
// the remote's URL, so the push goes to that URL's repository and no
// other: helm names git-receive-pack itself.
func TestReceivePackConfigDoesNotRedirectThePush(t *testing.T) {
	t.Parallel()
	h, g := guardRepo(t, false, denyProd)
	_, prod := prodRemote(t, g)
	g.Git(t, "config", "remote.origin.receivepack", "git-receive-pack '"+prod+"'; true")
	before := remoteRefs(t, g, prod)
	r := h.run("action", "push", "--branch", "feature")
	assert.Equal(t, before, remoteRefs(t, g, prod), "prod is unchanged\n%s", r)
	if r.Code == 0 {
		assert.Equal(t, g.Git(t, "rev-parse", "feature"), g.BareRef(t, "feature"), "the push went where the guard was told")
	}
}

// TestARefusedPushRunsNoneOfTheAgentsHooks: the guard's refusal says
// nothing was run; git's dry run, which asks what the push would do,
// must not run the repository's pre-push hook (the agent's code: it
// could push anything, anywhere) before the guard has decided. Nor must
// `helm policy check push`, which only reads.
func TestARefusedPushRunsNoneOfTheAgentsHooks(t *testing.T) {
	t.Parallel()
	h, g := guardRepo(t, false, denyMain)
	ran := filepath.Join(t.TempDir(), "hook-ran")
	g.Git(t, "config", "--unset", "core.hooksPath") // the test repository's own; the agent's has hooks
	hooks := filepath.Join(g.Dir, ".git", "hooks")
	require.NoError(t, os.MkdirAll(hooks, 0o700))
	hook := "#!/bin/sh\necho \"$@\" >> '" + ran + "'\ngit push -q --no-verify origin HEAD:refs/heads/main\n"
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "pre-push"), []byte(hook), 0o700))
	before := remoteRefs(t, g, g.Bare)

	r := h.fails(4, "action", "push", "--branch", "main")
	assert.Contains(t, r.Stderr, "nothing was run")
	assert.NoFileExists(t, ran, "the pre-push hook ran although the push was refused")
	assert.Equal(t, before, remoteRefs(t, g, g.Bare), "the remote is unchanged")

	h.ok("policy", "check", "push", "--branch", "main")
	assert.NoFileExists(t, ran, "policy check ran the pre-push hook")
}

// TestPolicyCheckPushTellsTheTruth: what policy check says of a push
// named by --repo and --branch is what the guard decides when that push
// is made: --force is a forced push (rules with force = true see it),
// and the branch is a ref (rules with ref = "refs/heads/..." see it).
func TestPolicyCheckPushTellsTheTruth(t *testing.T) {
	t.Parallel()
	const denyMainRef = "[[rule]]\nname = \"main by ref\"\naction = \"push\"\nref = \"refs/heads/main\"\ndecision = \"deny\"\n"
	for _, tc := range []struct {
		name  string
		rules string
		args  []string
		rule  string
	}{
		{"--force", denyForce, []string{"--branch", "main", "--force"}, "no force"},
		{"a ref rule", denyMainRef, []string{"--branch", "main"}, "main by ref"},
		{"a ref rule, +main", denyMainRef, []string{"--branch", "+main"}, "main by ref"},
		{"a branch rule, +main", denyMain, []string{"--branch", "+main"}, "nobody pushes to main"},
		{"a branch rule, refs/heads/main", denyMain, []string{"--branch", "refs/heads/main"}, "nobody pushes to main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := guardRepo(t, true, tc.rules)
			// The push itself is refused...
			r := h.fails(4, append([]string{"action", "push"}, tc.args...)...)
			require.Contains(t, r.Stderr, `denied by rule "`+tc.rule+`"`)
			// ...so policy check, asked about it without git, says so.
			out := h.ok(append([]string{"policy", "check", "push", "--repo", "octo/widgets"}, tc.args...)...)
			assert.Contains(t, out, `Decision: denied by rule "`+tc.rule+`"`)
		})
	}
}

// TestRemoteHelpersCannotCarryThePushElsewhere: a remote helper — the
// ext:: transport, which the repository's configuration may allow
// (protocol.ext.allow), or git-remote-NAME for NAME::URL — is a program
// that can take the push to any repository while its URL names none the
// rules know. helm pushes over git's own transports only.
func TestRemoteHelpersCannotCarryThePushElsewhere(t *testing.T) {
	t.Parallel()
	h, g := guardRepo(t, false, denyProd)
	_, prod := prodRemote(t, g)
	redirect := filepath.Join(t.TempDir(), "redirect")
	require.NoError(t, os.WriteFile(redirect, []byte("#!/bin/sh\nexec git-receive-pack '"+prod+"'\n"), 0o700))
	g.Git(t, "config", "protocol.ext.allow", "always")
	g.Git(t, "remote", "set-url", "--push", "origin", "ext::"+redirect+" %S")
	before := remoteRefs(t, g, prod)
	r := h.run("action", "push", "--branch", "feature")
	assert.Equal(t, before, remoteRefs(t, g, prod), "prod is unchanged\n%s", r)
	assert.Equal(t, 2, r.Code, "git may not use the helper, so it cannot tell what the push would do\n%s", r)
}
