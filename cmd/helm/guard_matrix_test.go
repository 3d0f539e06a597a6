package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// The guard decides on what git would do, not on the text it is given.
// The test is the recorded agent: it spells a push every way git accepts
// to reach main, or points the push somewhere its remote's URL does not
// say, and each time the rule meant for that push must refuse it (exit
// 4, recorded), with the remote's refs untouched.

// remoteRefs lists every ref of a bare repository with its object.
func remoteRefs(t *testing.T, g *ghtest.GitRepo, bare string) string {
	t.Helper()
	return g.Git(t, "--git-dir", bare, "for-each-ref", "--format=%(refname) %(objectname)")
}

// guardRepo is a harness in a working repository whose origin pushes to
// a local bare repository, with main pushed and a branch feature that
// main does not contain. diverged makes the local main one the remote's
// main does not contain (a push of it must be forced); otherwise the
// local main is a fast-forward of the remote's.
func guardRepo(t *testing.T, diverged bool, rules string) (*harness, *ghtest.GitRepo) {
	h, g, _ := guardVoyage(t, diverged, rules)
	return h, g
}

// guardVoyage is guardRepo, returning the voyage's id too.
func guardVoyage(t *testing.T, diverged bool, rules string) (*harness, *ghtest.GitRepo, string) {
	t.Helper()
	h, _, g := newGitHubHarness(t)
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(rules), 0o600))
	g.Git(t, "switch", "-q", "-c", "feature")
	g.WriteFile(t, "feature.txt", "feature\n")
	g.Git(t, "add", "feature.txt")
	g.Git(t, "commit", "-q", "-m", "feature")
	g.Git(t, "switch", "-q", "main")
	if diverged {
		g.WriteFile(t, "remote.txt", "someone else's work\n")
		g.Git(t, "add", "remote.txt")
		g.Git(t, "commit", "-q", "-m", "on the remote")
		g.Git(t, "push", "-q", "origin", "main")
		g.Git(t, "reset", "-q", "--hard", "HEAD~1")
	}
	g.WriteFile(t, "local.txt", "local work\n")
	g.Git(t, "add", "local.txt")
	g.Git(t, "commit", "-q", "-m", "local")
	return h, g, h.start("guard matrix")
}

const denyMain = `[[rule]]
name = "nobody pushes to main"
action = "push"
branch = "main"
decision = "deny"
`

const denyProd = `[[rule]]
name = "nothing goes to prod"
action = "push"
repo = "octo/prod"
decision = "deny"
`

const denyTags = `[[rule]]
name = "no tags"
action = "push"
ref = "refs/tags/*"
decision = "deny"
`

const denyForce = `[[rule]]
name = "no force"
action = "push"
force = true
decision = "deny"
`

const denyDelete = `[[rule]]
name = "no deletes"
action = "push"
delete = true
decision = "deny"
`

// prodRemote makes a bare repository at DIR/octo/prod.git, whose file://
// URL names octo/prod, and returns the URL and the path.
func prodRemote(t *testing.T, g *ghtest.GitRepo) (string, string) {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "octo", "prod.git")
	require.NoError(t, os.MkdirAll(filepath.Dir(bare), 0o700))
	g.Git(t, "init", "-q", "--bare", "-b", "main", bare)
	return "file://" + bare, bare
}

func TestGuardDecidesOnWhatGitWouldDo(t *testing.T) {
	t.Parallel()
	type tc struct {
		name  string
		rules string
		// setup prepares the repository and returns the bare
		// repository the push would reach, when not origin's.
		setup func(t *testing.T, g *ghtest.GitRepo) string
		args  []string
		rule  string
		// divergedOnly: on a fast-forward the push is not what the rule
		// is about (+main is no forced update there).
		divergedOnly bool
	}
	cases := []tc{
		{name: "+main", rules: denyMain, args: []string{"--branch", "+main"}, rule: "nobody pushes to main"},
		{name: "heads/main", rules: denyMain, args: []string{"--branch", "heads/main"}, rule: "nobody pushes to main"},
		{name: "refs/heads/main", rules: denyMain, args: []string{"--branch", "refs/heads/main"}, rule: "nobody pushes to main"},
		{name: "HEAD:main", rules: denyMain, args: []string{"--branch", "HEAD:main"}, rule: "nobody pushes to main"},
		{name: "feature:main", rules: denyMain, args: []string{"--branch", "+feature:main"}, rule: "nobody pushes to main"},
		{name: ":main", rules: denyMain, args: []string{"--branch", ":main"}, rule: "nobody pushes to main"},
		{name: "--force", rules: denyMain, args: []string{"--branch", "main", "--force"}, rule: "nobody pushes to main"},
		{name: "forced anything", rules: denyForce, args: []string{"--branch", "+main"}, rule: "no force", divergedOnly: true},
		{name: "forced with --force", rules: denyForce, args: []string{"--branch", "main", "--force"}, rule: "no force", divergedOnly: true},
		{name: "deletion", rules: denyDelete, args: []string{"--branch", ":feature"}, rule: "no deletes",
			setup: func(t *testing.T, g *ghtest.GitRepo) string { g.Git(t, "push", "-q", "origin", "feature"); return "" }},
		{name: "a tag named main, to the branch", rules: denyMain, args: []string{"--branch", "+refs/tags/main:main"}, rule: "nobody pushes to main",
			setup: func(t *testing.T, g *ghtest.GitRepo) string { g.Git(t, "tag", "main", "feature"); return "" }},
		{name: "a tag named main", rules: denyTags, args: []string{"--branch", "main"}, rule: "no tags",
			setup: func(t *testing.T, g *ghtest.GitRepo) string {
				g.Git(t, "switch", "-q", "--detach")
				g.Git(t, "tag", "main", "feature")
				g.Git(t, "branch", "-D", "main")
				return ""
			}},
		{name: "a second remote", rules: denyMain, args: []string{"--remote", "upstream", "--branch", "+main"}, rule: "nobody pushes to main",
			setup: func(t *testing.T, g *ghtest.GitRepo) string { g.Git(t, "remote", "add", "upstream", g.Bare); return "" }},
		{name: "pushurl", rules: denyProd, args: []string{"--branch", "feature"}, rule: "nothing goes to prod",
			setup: func(t *testing.T, g *ghtest.GitRepo) string {
				url, bare := prodRemote(t, g)
				g.Git(t, "remote", "set-url", "--push", "origin", url)
				return bare
			}},
		{name: "insteadOf", rules: denyProd, args: []string{"--remote", "deploy", "--branch", "feature"}, rule: "nothing goes to prod",
			setup: func(t *testing.T, g *ghtest.GitRepo) string {
				url, bare := prodRemote(t, g)
				g.Git(t, "config", "url."+url+".insteadOf", "https://example.invalid/harmless.git")
				g.Git(t, "remote", "add", "deploy", "https://example.invalid/harmless.git")
				return bare
			}},
		{name: "pushInsteadOf", rules: denyProd, args: []string{"--remote", "deploy", "--branch", "feature"}, rule: "nothing goes to prod",
			setup: func(t *testing.T, g *ghtest.GitRepo) string {
				url, bare := prodRemote(t, g)
				g.Git(t, "config", "url."+url+".pushInsteadOf", "https://example.invalid/harmless.git")
				g.Git(t, "remote", "add", "deploy", "https://example.invalid/harmless.git")
				return bare
			}},
		// Not a configured remote: git takes the word as a URL, and
		// rewrites it.
		{name: "insteadOf on an unconfigured remote", rules: denyProd, args: []string{"--remote", "harmless", "--branch", "feature"}, rule: "nothing goes to prod",
			setup: func(t *testing.T, g *ghtest.GitRepo) string {
				url, bare := prodRemote(t, g)
				g.Git(t, "config", "url."+url+".insteadOf", "harmless")
				return bare
			}},
	}
	for _, diverged := range []bool{false, true} {
		state := "fast-forward"
		if diverged {
			state = "diverged"
		}
		for _, c := range cases {
			if c.divergedOnly && !diverged {
				continue
			}
			t.Run(state+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				h, g := guardRepo(t, diverged, c.rules)
				bare := g.Bare
				if c.setup != nil {
					if b := c.setup(t, g); b != "" {
						bare = b
					}
				}
				before, beforeOrigin := remoteRefs(t, g, bare), remoteRefs(t, g, g.Bare)
				r := h.fails(4, append([]string{"action", "push"}, c.args...)...)
				assert.Contains(t, r.Stderr, `refused by a guard rule: denied by rule "`+c.rule+`"`)
				assert.Equal(t, before, remoteRefs(t, g, bare), "the remote is unchanged")
				assert.Equal(t, beforeOrigin, remoteRefs(t, g, g.Bare), "origin is unchanged")
				assertRefusedLast(t, h, c.rule)
			})
		}
	}
}

// assertRefusedLast requires the story's last entry to be a push refused
// by rule.
func assertRefusedLast(t *testing.T, h *harness, rule string) {
	t.Helper()
	var story struct {
		Entries []struct {
			Kind   string `json:"kind"`
			Action struct {
				Kind   string `json:"kind"`
				Status string `json:"status"`
				Rule   string `json:"rule"`
			} `json:"action"`
		} `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &story))
	require.NotEmpty(t, story.Entries)
	last := story.Entries[len(story.Entries)-1]
	assert.Equal(t, "push", last.Action.Kind)
	assert.Equal(t, "refused", last.Action.Status)
	assert.Contains(t, last.Action.Rule, rule)
}

// TestAllowedPushesAreRecordedAsWhatTheyDid: a push the rules allow lands,
// exits 0, and is recorded as performed with what git did — a forced
// update included, which helm once performed and then recorded as failed.
func TestAllowedPushesAreRecordedAsWhatTheyDid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		diverged bool
		args     []string
		ref      string
		force    bool
		create   bool
	}{
		{"a new branch", false, []string{"--branch", "feature"}, "refs/heads/feature", false, true},
		{"heads/feature", false, []string{"--branch", "heads/feature"}, "refs/heads/feature", false, true},
		{"fast-forward of main", false, []string{"--branch", "+main"}, "refs/heads/main", false, false},
		{"forced main", true, []string{"--branch", "+main"}, "refs/heads/main", true, false},
		{"forced main with --force", true, []string{"--branch", "main", "--force"}, "refs/heads/main", true, false},
		{"HEAD to another name", false, []string{"--branch", "HEAD:refs/heads/elsewhere"}, "refs/heads/elsewhere", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, g := guardRepo(t, tc.diverged, denyTags)
			out := h.ok(append([]string{"action", "push"}, tc.args...)...)
			assert.Contains(t, out, "performed")
			branch := strings.TrimPrefix(tc.ref, "refs/heads/")
			src, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(tc.args[1], "+"), "heads/"), ":")
			local := g.Git(t, "rev-parse", src)
			assert.Equal(t, local, g.BareRef(t, branch), "the push landed")

			var story struct {
				Entries []struct {
					Action struct {
						Status string `json:"status"`
						Params struct {
							Updates []struct {
								Ref    string `json:"ref"`
								New    string `json:"new"`
								Force  bool   `json:"force"`
								Create bool   `json:"create"`
							} `json:"updates"`
						} `json:"params"`
						Result struct {
							Branch string `json:"branch"`
							SHA    string `json:"sha"`
						} `json:"result"`
					} `json:"action"`
				} `json:"entries"`
			}
			require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &story))
			last := story.Entries[len(story.Entries)-1].Action
			assert.Equal(t, "performed", last.Status)
			require.Len(t, last.Params.Updates, 1)
			u := last.Params.Updates[0]
			assert.Equal(t, tc.ref, u.Ref)
			assert.Equal(t, local, u.New)
			assert.Equal(t, tc.force, u.Force)
			assert.Equal(t, tc.create, u.Create)
			assert.Equal(t, branch, last.Result.Branch)
			assert.Equal(t, local, last.Result.SHA)
		})
	}
}

// TestPushesGitCannotResolveAreRefusedBeforeTheWorldIsTouched: exit 2,
// nothing recorded, nothing pushed.
func TestPushesGitCannotResolveAreRefusedBeforeTheWorldIsTouched(t *testing.T) {
	t.Parallel()
	h, g := guardRepo(t, true, denyTags)
	before := remoteRefs(t, g, g.Bare)
	for _, args := range [][]string{
		{"--branch", "no-such-branch"},
		{"--branch", "--force"},
		{"--remote", "no-such-remote", "--branch", "main"},
		{"--branch", "main main"},
	} {
		h.fails(2, append([]string{"action", "push"}, args...)...)
	}
	assert.Equal(t, before, remoteRefs(t, g, g.Bare))
	var story struct {
		Entries []json.RawMessage `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &story))
	assert.Empty(t, story.Entries, "nothing was recorded")

	// One the remote refuses (not a fast-forward, no --force) is put to
	// the rules, performed, and recorded as what git said: failed.
	r := h.fails(3, "action", "push", "--branch", "main")
	assert.Contains(t, r.Stderr, "recorded as a failed action")
	assert.Equal(t, before, remoteRefs(t, g, g.Bare))
}

// TestGuardOverMCPDecidesOnWhatGitWouldDo: the same pushes through the MCP
// server's push tool.
func TestGuardOverMCPDecidesOnWhatGitWouldDo(t *testing.T) {
	t.Parallel()
	h, g, id := guardVoyage(t, true, denyMain)
	agentEnv(h)
	c := h.mcp("--voyage", id)
	before := remoteRefs(t, g, g.Bare)
	for _, args := range []map[string]any{
		{"branch": "+main"},
		{"branch": "heads/main", "force": true},
		{"branch": "HEAD:main", "force": true},
		{"branch": ":main"},
	} {
		_, te := c.fails("push", args)
		assert.Equal(t, 4, te.ExitStatus, "%v: %s", args, te.Error)
		assert.Contains(t, te.Error, `denied by rule "nobody pushes to main"`)
	}
	assert.Equal(t, before, remoteRefs(t, g, g.Bare), "the remote is unchanged")
}

// TestSystemPolicyHoldsOverTheHome: the agent owns its home, so it can
// write an allow-all policy.toml or point HELM_HOME at a home with none;
// the system policy (root's) still decides, and a home's rules can only
// add refusals to it. A system policy anyone else could change is
// refused outright.
func TestSystemPolicyHoldsOverTheHome(t *testing.T) {
	t.Parallel()
	const allowAll = "[[rule]]\nname = \"anything goes\"\ndecision = \"allow\"\n"
	h, g := guardRepo(t, false, allowAll)
	sys := filepath.Join(t.TempDir(), "policy.toml")
	require.NoError(t, os.WriteFile(sys, []byte(denyMain), 0o644))
	h.SystemPolicy = sys
	before := remoteRefs(t, g, g.Bare)

	r := h.fails(4, "action", "push", "--branch", "main")
	assert.Contains(t, r.Stderr, `denied by rule "nobody pushes to main" (`+sys+`:1)`)
	assert.Equal(t, before, remoteRefs(t, g, g.Bare))
	assertRefusedLast(t, h, "nobody pushes to main")

	// A home with no policy at all: the system's still holds.
	require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
	h.fails(4, "action", "push", "--branch", "heads/main")

	// policy check explains both, the system's first.
	out := h.ok("policy", "check", "push", "--repo", "octo/widgets", "--branch", "main")
	assert.Contains(t, out, "Policy: "+sys)
	assert.Contains(t, out, "Decision: denied by rule \"nobody pushes to main\"")

	// The home may tighten what the system allows.
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(denyTags), 0o600))
	g.Git(t, "tag", "v1")
	r = h.fails(4, "action", "push", "--branch", "v1")
	assert.Contains(t, r.Stderr, `denied by rule "no tags"`)
	h.ok("action", "push", "--branch", "feature")

	// A system policy others can write, or that root does not own, is no
	// system policy: nothing runs while it is so.
	require.NoError(t, os.Chmod(sys, 0o666))
	r = h.fails(1, "action", "push", "--branch", "feature")
	assert.Contains(t, r.Stderr, "system policy "+sys+" is writable by its group or others (mode 0666)")
	assert.Contains(t, r.Stderr, "Try: chmod go-w "+sys)
	require.NoError(t, os.Chmod(sys, 0o644))
	if os.Getuid() == 0 {
		require.NoError(t, os.Chown(sys, 4242, 0))
		r = h.fails(1, "action", "push", "--branch", "feature")
		assert.Contains(t, r.Stderr, "is owned by uid 4242, not root")
	}
}

// TestPolicyChangesAreRecorded: the agent can rewrite its home's
// policy.toml, or take it away, between two commands; the voyage records
// the rules each change ran under, and a change of rules is an entry of
// the story that log and verify show.
func TestPolicyChangesAreRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	pol := filepath.Join(h.Home, "policy.toml")
	require.NoError(t, os.WriteFile(pol, []byte(denyMain), 0o600))
	digest := func(text string) string {
		sum := sha256.Sum256([]byte(text))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	h.start("rules change")
	h.ok("note", "first")
	require.NoError(t, os.WriteFile(pol, []byte(denyTags), 0o600))
	h.ok("note", "second")
	h.ok("note", "third") // the same rules: nothing new recorded
	require.NoError(t, os.Remove(pol))
	h.ok("note", "fourth")

	// The rules it started under are recorded with its start, not as an
	// entry: a home's rules do not renumber its stories.
	story := h.ok("log")
	assert.Contains(t, story, "── Note 1 ── ")
	assert.Contains(t, story, "── Policy 2 ── ")
	assert.Contains(t, story, "  guard rules "+digest(denyTags)+" from "+pol+"\n")
	assert.Contains(t, story, "── Note 4 ── ")
	assert.Contains(t, story, "── Policy 5 ── ")
	assert.Contains(t, story, "  no guard rules\n")
	assert.Contains(t, story, "── Note 6 ── ")
	assert.NotContains(t, story, "Policy 7")

	out := h.ok("voyage", "verify")
	assert.Contains(t, out, "  policy:    started under "+digest(denyMain)+" ("+pol+")\n")
	assert.Contains(t, out, "  policy:    entry 2 changed to "+digest(denyTags)+" ("+pol+")\n")
	assert.Contains(t, out, "  policy:    entry 5 changed to no guard rules\n")
	var rep struct {
		Policies []struct {
			N       int      `json:"n"`
			Digest  string   `json:"digest"`
			Sources []string `json:"sources"`
		} `json:"policies"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "verify", "--json")), &rep))
	require.Len(t, rep.Policies, 3)
	assert.Equal(t, 0, rep.Policies[0].N)
	assert.Equal(t, digest(denyMain), rep.Policies[0].Digest)
	assert.Equal(t, 2, rep.Policies[1].N)
	assert.Equal(t, digest(denyTags), rep.Policies[1].Digest)
	assert.Equal(t, []string{pol}, rep.Policies[1].Sources)
	assert.Empty(t, rep.Policies[2].Digest)

	// With a system policy, both files are named, the system's first.
	sys := filepath.Join(t.TempDir(), "policy.toml")
	require.NoError(t, os.WriteFile(sys, []byte(denyForce), 0o644))
	h.SystemPolicy = sys
	h.ok("note", "fifth")
	assert.Contains(t, h.ok("log"), "── Policy 7 ── ")
	assert.Contains(t, h.ok("log"), "  guard rules sha256:")
	assert.Contains(t, h.ok("log"), " from "+sys+"\n")
}

// TestPolicyCheckSeesWherePushesGo: policy check resolves a push as the
// action would, so a pushurl that goes to octo/prod is named (it said
// repo "" when it read the fetch URL alone).
func TestPolicyCheckSeesWherePushesGo(t *testing.T) {
	t.Parallel()
	h, g := guardRepo(t, false, denyProd)
	url, _ := prodRemote(t, g)
	g.Git(t, "remote", "set-url", "--push", "origin", url)
	out := h.ok("policy", "check", "push", "--branch", "feature")
	assert.Contains(t, out, " on octo/prod feature, ref refs/heads/feature")
	assert.Contains(t, out, `Decision: denied by rule "nothing goes to prod"`)
	var check policyCheck
	require.NoError(t, json.Unmarshal([]byte(h.ok("policy", "check", "push", "--branch", "feature", "--json")), &check))
	assert.Equal(t, "deny", string(check.Decision))
	var repos []string
	for _, r := range check.Requests {
		repos = append(repos, r.Repo)
	}
	assert.Contains(t, repos, "octo/prod")
}
