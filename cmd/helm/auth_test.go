package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// Two identities against the loopback stand-in, with a token in helm's
// own environment: each request carries its own identity's token, logged
// in with helm auth login through the real gh, and never the ambient one.
// Not parallel: it sets the process's GH_TOKEN and GITHUB_TOKEN.
func TestIdentitiesUseTheirOwnCredentialsNeverTheAmbientToken(t *testing.T) {
	t.Setenv("GH_TOKEN", "ambient-gh-token")
	t.Setenv("GITHUB_TOKEN", "ambient-github-token")
	t.Setenv("GH_ENTERPRISE_TOKEN", ghtest.Token) // valid at the stand-in: it must not be used either
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	srv.AddIssue("octo/widgets", ghtest.Issue{Title: "crash"})
	srv.AddToken("alice-token-1", "alice")
	srv.AddToken("bob-token-2", "bob")
	h := newHarness(t)
	h.ExtraEnv = srv.HostEnv() // GH_HOST and the CA: test plumbing, no token
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "human"

	// Not logged in: gh's own advice is left out, helm names the login.
	h.ok("voyage", "new", "--as", "carol", "shared issue")
	r := h.fails(1, "--as", "carol", "observe", "github-issue", "1", "--repo", "octo/widgets")
	assert.Contains(t, r.Stderr, "identity carol is not logged in to GitHub")
	assert.NotContains(t, r.Stderr, "please run:  gh auth login")
	assert.Contains(t, r.Stderr, "\nTry: helm auth login --as carol\n")

	for _, who := range []struct{ id, token string }{{"alice", "alice-token-1"}, {"bob", "bob-token-2"}} {
		h.Stdin = who.token + "\n"
		out := h.ok("auth", "login", "--as", who.id, "--with-token") // GH_HOST names the host
		assert.Contains(t, out, "Identity "+who.id+" logged in")
	}
	var status []authStatus
	r = h.fails(1, "auth", "status", "--json")
	assert.Equal(t, `{"error":"auth status: identity carol is not logged in (no host accepted a token of it)","try":"helm auth login --as carol","exit_status":1}`+"\n",
		r.Stderr, "under --json the error is one JSON object")
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &status))
	require.Len(t, status, 3)
	assert.Equal(t, "alice", status[0].Identity)
	require.Len(t, status[0].Hosts, 1)
	assert.Equal(t, helmLogins{Host: srv.Host, User: "alice", HasToken: true, Checked: "ok"}, status[0].Hosts[0])
	assert.Equal(t, "bob", status[1].Hosts[0].User)
	assert.Empty(t, status[2].Hosts, "carol never logged in")
	r = h.fails(1, "auth", "status")
	assert.Equal(t, "helm: auth status: identity carol is not logged in (no host accepted a token of it)\nTry: helm auth login --as carol\n", r.Stderr)
	text := r.Stdout
	assert.Contains(t, text, "alice: logged in to "+srv.Host+" as alice\n")
	assert.Contains(t, text, "carol: not logged in (")
	assert.NotContains(t, text, "alice-token-1", "tokens are never printed")
	assert.Contains(t, h.ok("auth", "status", "--as", "alice"), "alice: logged in to ", "one identity logged in: exit 0")

	srv.ClearRequests()
	h.ok("--as", "alice", "observe", "github-issue", "1", "--repo", "octo/widgets")
	h.ok("--as", "bob", "observe", "github-issue", "1", "--repo", "octo/widgets", "--focus", "summary")
	seen := map[string]int{}
	for _, req := range srv.Requests() {
		seen[req.Token]++
	}
	assert.Positive(t, seen["alice-token-1"], "alice's requests carry her token")
	assert.Positive(t, seen["bob-token-2"], "bob's carry his")
	assert.Len(t, seen, 2, "no other token reached the stand-in: %v", seen)
}

// An identity's own configuration can pass a variable of the environment
// on: here the token (and host) of the one identity meant to use it.
func TestPassEnvAdmitsAnAmbientVariableForOneIdentity(t *testing.T) {
	t.Setenv("GH_ENTERPRISE_TOKEN", ghtest.Token)
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	srv.AddIssue("octo/widgets", ghtest.Issue{Title: "crash"})
	h := newHarness(t)
	h.ExtraEnv = srv.HostEnv()
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "human"
	h.writeHome("config.toml", "[identities.ci-bot]\npass_env = [\"GH_ENTERPRISE_TOKEN\"]\n")
	h.ok("voyage", "new", "--as", "ci-bot", "ci")
	h.ok("--as", "ci-bot", "observe", "github-issue", "1", "--repo", "octo/widgets")
	h.fails(1, "--as", "dave", "observe", "github-issue", "1", "--repo", "octo/widgets")
	h.writeHome("config.toml", "[identities.ci-bot]\npass_env = [\"GH TOKEN\"]\n")
	r := h.fails(2, "--as", "ci-bot", "observe", "github-issue", "1", "--repo", "octo/widgets")
	assert.Contains(t, r.Stderr, `pass_env: "GH TOKEN" is not an environment variable name`)
}
