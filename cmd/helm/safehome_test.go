//go:build unix

package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherUID owns what the attacker plants: a user that is not the one
// running the tests.
const otherUID = 12345

// loopbackStore listens on loopback for the JetStream store a planted
// config.toml names, and closes every connection it accepts. connections
// reports how many came before it was asked: it connects itself, and
// counts the connections accepted ahead of its own (the listen queue is
// first come, first accepted, and helm's would have been made before its
// command returned).
func loopbackStore(t *testing.T) (url string, connections func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	from := make(chan string, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(from)
				return
			}
			from <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	return "nats://" + ln.Addr().String() + "/planted", func() int {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		n := 0
		for addr := range from {
			if addr == c.LocalAddr().String() {
				return n
			}
			n++
		}
		t.Fatal("the listener stopped")
		return n
	}
}

// homeFiles returns the content of every file under dir, by path: what a
// refused command must leave as it was.
func homeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	}))
	return out
}

// plantedPolicy would refuse the observation, had helm read it: a refusal
// would exit 4 and be recorded.
const plantedPolicy = "[[rule]]\nname = \"planted\"\naction = \"observe-command\"\ndecision = \"deny\"\n"

// untrustedHome is a home made by helm (a voyage started in it), with a
// config.toml naming a store on store, a policy.toml, a policy file
// outside the home the config does not name yet, and john-agent's gh
// configuration, all the user's and writable by the user alone.
func untrustedHome(t *testing.T, store string) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	h.start("look at an untrusted home")
	info, err := os.Stat(h.Home)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o700), info.Mode().Perm(), "helm makes its home the user's alone")
	named := filepath.Join(filepath.Dir(h.Home), "team-policy.toml")
	for _, f := range []struct {
		path, content string
	}{
		{filepath.Join(h.Home, "config.toml"), "store = \"" + store + "\"\n"},
		{filepath.Join(h.Home, "policy.toml"), plantedPolicy},
		{named, plantedPolicy},
		{filepath.Join(h.Home, "gh-config", "john-agent", "hosts.yml"), "github.com:\n    user: john-agent\n"},
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f.path), 0o700))
		require.NoError(t, os.WriteFile(f.path, []byte(f.content), 0o600))
	}
	return h, named
}

// TestUntrustedHomeIsRefused plants, for each place helm reads from a
// home, what another user would: the place owned by them, or writable by
// the group or by everyone. helm refuses with exit 2, naming the path,
// what is wrong and the fix, and reads nothing: the config.toml's store
// on loopback gets no connection, the planted deny rule refuses nothing,
// the command does not run, and no byte of the home changes.
func TestUntrustedHomeIsRefused(t *testing.T) {
	targets := []struct {
		name string
		// path returns what to spoil in h's home; named is the policy
		// file outside it, which config.toml is made to name.
		path func(h *harness, named string) string
	}{
		{"the home", func(h *harness, _ string) string { return h.Home }},
		{"config.toml", func(h *harness, _ string) string { return filepath.Join(h.Home, "config.toml") }},
		{"policy.toml", func(h *harness, _ string) string { return filepath.Join(h.Home, "policy.toml") }},
		{"the policy file config.toml names", func(h *harness, named string) string {
			cfg := filepath.Join(h.Home, "config.toml")
			data, err := os.ReadFile(cfg)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cfg, append([]byte("policy = \""+named+"\"\n"), data...), 0o600))
			return named
		}},
		{"gh-config", func(h *harness, _ string) string { return filepath.Join(h.Home, "gh-config") }},
		{"gh-config/IDENTITY", func(h *harness, _ string) string { return filepath.Join(h.Home, "gh-config", "john-agent") }},
		{"gh-config/IDENTITY/hosts.yml", func(h *harness, _ string) string {
			return filepath.Join(h.Home, "gh-config", "john-agent", "hosts.yml")
		}},
	}
	spoils := []struct {
		name  string
		root  bool // chown needs root
		spoil func(t *testing.T, path string)
		want  func(path string) []string
	}{
		{
			name: "owned by another user", root: true,
			spoil: func(t *testing.T, path string) { require.NoError(t, os.Chown(path, otherUID, otherUID)) },
			want: func(path string) []string {
				chown := fmt.Sprintf("chown %d", os.Geteuid())
				if info, err := os.Stat(path); err == nil && info.IsDir() {
					chown = fmt.Sprintf("chown -R %d", os.Geteuid())
				}
				return []string{fmt.Sprintf("is owned by uid %d, not by you (uid %d)", otherUID, os.Geteuid()),
					fmt.Sprintf("Try: %s %s if it is yours", chown, path)}
			},
		},
		{
			// A group another user may be in (a gid no user has as its
			// own): chgrp needs root.
			name: "writable by the group", root: true,
			spoil: func(t *testing.T, path string) {
				require.NoError(t, os.Chown(path, -1, otherUID))
				addMode(t, path, 0o020)
			},
			want: func(path string) []string {
				return []string{"is writable by its group (mode ", "Try: chmod go-w " + path}
			},
		},
		{
			name:  "writable by others",
			spoil: func(t *testing.T, path string) { addMode(t, path, 0o002) },
			want: func(path string) []string {
				return []string{"is writable by others (mode ", "Try: chmod go-w " + path}
			},
		},
	}
	for _, target := range targets {
		for _, sp := range spoils {
			t.Run(target.name+" "+sp.name, func(t *testing.T) {
				if sp.root && os.Geteuid() != 0 {
					t.Skip("making a file another user's (os.Chown) needs root; CI runs these as root")
				}
				store, connections := loopbackStore(t)
				h, named := untrustedHome(t, store)
				path := target.path(h, named)
				sp.spoil(t, path)
				before := homeFiles(t, h.Home)

				r := h.fails(2, "observe", "command", "--", "sh", "-c", "echo ran > ran.txt")
				assert.Contains(t, r.Stderr, "helm: refusing ")
				assert.Contains(t, r.Stderr, " "+path+": it ")
				for _, w := range sp.want(path) {
					assert.Contains(t, r.Stderr, w)
				}
				assert.Contains(t, r.Stderr, "HELM_SAFE_HOMES="+h.Home)
				assert.NotContains(t, r.Stderr, "planted", "the planted rule was not read")
				assert.NoFileExists(t, filepath.Join(h.Dir, "ran.txt"), "the command ran")
				assert.Equal(t, 0, connections(), "helm connected to the store the planted config.toml names")
				assert.Equal(t, before, homeFiles(t, h.Home), "a refused command changed the home")

				// Reading is refused as well.
				h.fails(2, "log")
				h.fails(2, "voyage", "list")
				assert.Equal(t, 0, connections())
			})
		}
	}
}

func addMode(t *testing.T, path string, m fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, info.Mode().Perm()|m))
}

// TestLinkedConfigIsJudgedByItsTarget links config.toml to a file another
// user owns (or anyone may write): what helm would open is judged, and
// refused, whoever owns the link.
func TestLinkedConfigIsJudgedByItsTarget(t *testing.T) {
	tests := []struct {
		name  string
		root  bool
		spoil func(t *testing.T, path string)
		want  string
	}{
		{"owned by another user", true, func(t *testing.T, path string) { require.NoError(t, os.Chown(path, otherUID, otherUID)) },
			fmt.Sprintf("is owned by uid %d", otherUID)},
		{"writable by others", false, func(t *testing.T, path string) { addMode(t, path, 0o002) }, "is writable by others"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("making a file another user's (os.Chown) needs root; CI runs these as root")
			}
			store, connections := loopbackStore(t)
			h, _ := untrustedHome(t, store)
			require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
			cfg := filepath.Join(h.Home, "config.toml")
			foreign := filepath.Join(t.TempDir(), "foreign.toml")
			require.NoError(t, os.Rename(cfg, foreign))
			require.NoError(t, os.Symlink(foreign, cfg))
			tt.spoil(t, foreign)

			r := h.fails(2, "observe", "command", "--", "sh", "-c", "echo ran > ran.txt")
			real, err := filepath.EvalSymlinks(foreign)
			require.NoError(t, err)
			assert.Contains(t, r.Stderr, "helm: refusing config.toml "+cfg+" (a link to "+real+"): it "+tt.want)
			assert.NoFileExists(t, filepath.Join(h.Dir, "ran.txt"))
			assert.Equal(t, 0, connections())
		})
	}
}

// TestSafeHomesOptsASharedHomeIn: HELM_SAFE_HOMES, listing the home or
// *, trusts a home whose config.toml and guard rules others may write,
// as git's safe.directory does; a list that names another home does not.
func TestSafeHomesOptsASharedHomeIn(t *testing.T) {
	tests := []struct {
		name    string
		safe    func(h *harness) string
		trusted bool
	}{
		{"the home listed", func(h *harness) string { return "/elsewhere" + string(os.PathListSeparator) + h.Home }, true},
		{"the home listed through a link", func(h *harness) string {
			link := filepath.Join(t.TempDir(), "link")
			require.NoError(t, os.Symlink(h.Home, link))
			return link
		}, true},
		{"every home", func(*harness) string { return "*" }, true},
		{"another home listed", func(h *harness) string { return h.Home + "-other" }, false},
		{"empty", func(*harness) string { return "" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.start("a shared home")
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "config.toml"), []byte("role = \"coder\"\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(h.Home, "policy.toml"), []byte(plantedPolicy), 0o600))
			for _, p := range []string{h.Home, filepath.Join(h.Home, "config.toml"), filepath.Join(h.Home, "policy.toml")} {
				addMode(t, p, 0o022)
			}
			h.Env["HELM_SAFE_HOMES"] = tt.safe(h)

			r := h.run("observe", "command", "--", "sh", "-c", "echo ran > ran.txt")
			if !tt.trusted {
				assert.Equal(t, 2, r.Code, r.String())
				assert.Contains(t, r.Stderr, "helm: refusing the helm home "+h.Home+": it is writable by its group and others (mode drwx-w--w-)")
				assert.NoFileExists(t, filepath.Join(h.Dir, "ran.txt"))
				return
			}
			// Trusted, the home's guard rules apply: its deny rule refuses
			// the command, which a refused home never gets to.
			assert.NotEqual(t, 0, r.Code, r.String())
			assert.Contains(t, r.Stderr, `refused by a guard rule: denied by rule "planted"`)
			assert.NoFileExists(t, filepath.Join(h.Dir, "ran.txt"))
			require.NoError(t, os.Remove(filepath.Join(h.Home, "policy.toml")))
			h.ok("observe", "command", "--", "sh", "-c", "echo ran > ran.txt")
			assert.FileExists(t, filepath.Join(h.Dir, "ran.txt"))
		})
	}
}

// TestHomeNotThereYetIsMadeTheUsers: a home helm creates is trusted, and
// a directory above it that everyone may write (as /tmp) is not judged.
func TestHomeNotThereYetIsMadeTheUsers(t *testing.T) {
	h := newHarness(t)
	parent := filepath.Join(filepath.Dir(h.Home), "shared-tmp")
	require.NoError(t, os.Mkdir(parent, 0o700))
	require.NoError(t, os.Chmod(parent, 0o777|fs.ModeSticky))
	h.Home = filepath.Join(parent, "helm-home")
	h.Env["HELM_HOME"] = h.Home
	h.start("a new home")
	info, err := os.Stat(h.Home)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm())
	assert.Contains(t, h.ok("voyage", "list"), "a new home", "the home is used")
}

// TestGroupWritableByTheOwnersOwnGroupIsTrusted: with umask 002 (Debian
// and Ubuntu give each user a group of their own and that umask), a
// config.toml a person writes is 0664; its group is theirs alone, so no
// one else can change it, and helm uses it, as OpenSSH's StrictModes does.
func TestGroupWritableByTheOwnersOwnGroupIsTrusted(t *testing.T) {
	t.Parallel()
	if !groupIsPrivate(t, os.Getegid(), os.Geteuid()) {
		t.Skip("this user's primary group is not theirs alone here")
	}
	h := newHarness(t)
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	cfg := filepath.Join(h.Home, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("identity = \"ann\"\n"), 0o600))
	require.NoError(t, os.Chown(cfg, -1, os.Getegid()))
	require.NoError(t, os.Chmod(cfg, 0o664))
	require.NoError(t, os.Chmod(h.Home, 0o770))
	h.ok("voyage", "list")
}

// groupIsPrivate says, reading /etc/passwd and /etc/group as the test's
// own account of it, whether gid is uid's alone.
func groupIsPrivate(t *testing.T, gid, uid int) bool {
	t.Helper()
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return false
	}
	name := ""
	for _, line := range strings.Split(string(passwd), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		if f[2] == fmt.Sprint(uid) {
			name = f[0]
		} else if f[3] == fmt.Sprint(gid) {
			return false
		}
	}
	group, err := os.ReadFile("/etc/group")
	if err != nil || name == "" {
		return false
	}
	for _, line := range strings.Split(string(group), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 4 && f[2] == fmt.Sprint(gid) {
			for _, m := range strings.Split(f[3], ",") {
				if m != "" && m != name {
					return false
				}
			}
			return true
		}
	}
	return false
}
