package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

func writeConfig(t *testing.T, h *harness, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(h.Home, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, "config.toml"), []byte(content), 0o600))
}

// lastWho returns who recorded the last logbook entry.
func lastWho(t *testing.T, h *harness, args ...string) logbook.Who {
	t.Helper()
	var out view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok(append([]string{"log", "--json"}, args...)...)), &out))
	require.NotEmpty(t, out.Entries)
	return out.Entries[len(out.Entries)-1].Who
}

func TestIdentitySources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		flag   string // --as
		env    string // HELM_IDENTITY
		config string // identity in config.toml
		want   string
	}{
		{"flag wins", "flag-id", "env-id", "config-id", "flag-id"},
		{"env before voyage", "", "env-id", "config-id", "env-id"},
		{"voyage before config", "", "", "config-id", "voyage-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			writeConfig(t, h, `identity = "`+tt.config+`"`+"\nrole = \"coder\"\nmethod = \"human\"\n")
			h.ok("voyage", "new", "--as", "voyage-id", "resolve identity")
			h.ok("observe", "context", "look")
			args := []string{"bearing", "--reading", "seen"}
			if tt.flag != "" {
				args = append(args, "--as", tt.flag)
			}
			if tt.env != "" {
				h.Env["HELM_IDENTITY"] = tt.env
			}
			h.ok(args...)
			assert.Equal(t, tt.want, lastWho(t, h).Identity)
		})
	}
}

func TestIdentityFromConfigStartsVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeConfig(t, h, `identity = "config-id"`)
	h.ok("voyage", "new", "from config")
	assert.Contains(t, h.ok("voyage", "list"), "config-id")
}

func TestIdentityEnvStartsVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeConfig(t, h, `identity = "config-id"`)
	h.Env["HELM_IDENTITY"] = "env-id"
	h.ok("voyage", "new", "from env")
	assert.Contains(t, h.ok("voyage", "list"), "env-id")
}

func TestMissingIdentityNamesEverySource(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.fails(2, "voyage", "new", "nobody")
	for _, src := range []string{"--as", "HELM_IDENTITY", filepath.Join(h.Home, "config.toml")} {
		assert.Contains(t, r.Stderr, src)
	}
	assert.Contains(t, r.Stderr, "\nTry: ")
}

func TestInvalidIdentityIsUsageError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.fails(2, "voyage", "new", "--as", "a/b", "escape")
	assert.Contains(t, r.Stderr, "path separator")
}

func TestBadConfigIsUsageError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeConfig(t, h, "identity = \n")
	r := h.fails(2, "voyage", "new", "x")
	assert.Contains(t, r.Stderr, "config.toml")
}

func TestRoleAndMethodSources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		flags                []string
		env                  map[string]string
		config               string
		wantRole, wantMethod string
	}{
		{"flags win", []string{"--role", "reviewer", "--method", "claude"}, map[string]string{"HELM_ROLE": "env-role", "HELM_METHOD": "env-method"}, "role = \"c\"\nmethod = \"c\"\n", "reviewer", "claude"},
		{"env before config", nil, map[string]string{"HELM_ROLE": "env-role", "HELM_METHOD": "env-method"}, "role = \"c-role\"\nmethod = \"c-method\"\n", "env-role", "env-method"},
		{"config", nil, nil, "role = \"c-role\"\nmethod = \"c-method\"\n", "c-role", "c-method"},
		{"mixed", []string{"--method", "human"}, map[string]string{"HELM_ROLE": "env-role"}, "method = \"c-method\"\n", "env-role", "human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			writeConfig(t, h, tt.config)
			h.ok("voyage", "new", "--as", "ann", "roles")
			h.ok("observe", "context", "look")
			for k, v := range tt.env {
				h.Env[k] = v
			}
			h.ok(append([]string{"bearing", "--reading", "seen"}, tt.flags...)...)
			who := lastWho(t, h)
			assert.Equal(t, logbook.Who{Identity: "ann", Role: tt.wantRole, Method: tt.wantMethod}, who)
		})
	}
}

func TestMissingRoleAndMethodNameEverySource(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("voyage", "new", "--as", "ann", "roles")
	h.ok("observe", "context", "look") // observing needs no role or method
	r := h.fails(2, "bearing", "--reading", "seen")
	for _, src := range []string{"--role", "HELM_ROLE", "--method", "HELM_METHOD", filepath.Join(h.Home, "config.toml")} {
		assert.Contains(t, r.Stderr, src)
	}
	// Only the role missing: the message names the role alone.
	r = h.fails(2, "bearing", "--reading", "seen", "--method", "human")
	assert.Contains(t, r.Stderr, "--role")
	assert.NotContains(t, r.Stderr, "HELM_METHOD")
	assert.Contains(t, h.ok("slate", "list"), "Context: look", "nothing was sealed")
}

func TestHomeSources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	flagHome := filepath.Join(t.TempDir(), "flag-home")
	h.ok("--home", flagHome, "voyage", "new", "--as", "a", "in flag home")
	h.ok("voyage", "new", "--as", "a", "in env home")
	delete(h.Env, "HELM_HOME")
	h.ok("voyage", "new", "--as", "a", "in ~/.helm")

	assert.DirExists(t, filepath.Join(flagHome, "voyages"))
	assert.Contains(t, h.ok("--home", flagHome, "voyage", "list"), "in flag home")
	h.Env["HELM_HOME"] = h.Home
	assert.Contains(t, h.ok("voyage", "list"), "in env home")
	assert.NotContains(t, h.ok("voyage", "list"), "in flag home")
	assert.Contains(t, h.ok("--home", filepath.Join(h.Env["HOME"], ".helm"), "voyage", "list"), "in ~/.helm")

	// A relative --home resolves against the working directory.
	h.ok("--home", "rel-home", "voyage", "new", "--as", "a", "relative")
	assert.DirExists(t, filepath.Join(h.Dir, "rel-home", "voyages"))
}

func TestVoyageSources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	one := h.start("first")
	h.at(1)
	two := h.start("second")
	require.Equal(t, "a3b00001", one[:8])
	require.Equal(t, "a3b00002", two[:8])

	intent := func(args ...string) string {
		var out view.Log
		require.NoError(t, json.Unmarshal([]byte(h.ok(append([]string{"log", "--json"}, args...)...)), &out))
		return out.Voyage.Intent
	}
	assert.Equal(t, "first", intent("--voyage", one), "full id")
	assert.Equal(t, "second", intent("--voyage", "a3b00002"), "unambiguous prefix")
	assert.Equal(t, "second", intent("--voyage", strings.ToUpper(two)), "case-insensitive")

	h.Env["HELM_VOYAGE"] = one
	assert.Equal(t, "first", intent(), "HELM_VOYAGE")
	assert.Equal(t, "second", intent("--voyage", two), "--voyage before HELM_VOYAGE")

	h.Env["HELM_VOYAGE"] = "ffff"
	r := h.fails(2, "log")
	assert.Contains(t, r.Stderr, "HELM_VOYAGE ffff")
	delete(h.Env, "HELM_VOYAGE")

	// Ambiguous prefix: the error lists the candidates.
	r = h.fails(2, "log", "--voyage", "a3b")
	assert.Contains(t, r.Stderr, one)
	assert.Contains(t, r.Stderr, two)
	assert.Contains(t, r.Stderr, "matches 2 voyages")

	// Two active voyages: a change asks which, listing them; a read
	// tells of the one most recently written, and says so.
	r = h.fails(2, "note", "which?")
	assert.Contains(t, r.Stderr, "2 active voyages; choose one with --voyage ID (or HELM_VOYAGE=ID)")
	assert.Contains(t, r.Stderr, one+"  first")
	assert.Contains(t, r.Stderr, two+"  second")
	assert.Contains(t, r.Stderr, "Try: helm --voyage a3b00001 note 'which?'")
	r = h.run("log", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"intent": "second"`)
	assert.Contains(t, r.Stderr, "helm: voyage a3b00002 (second): the one most recently written, as 2 voyages are active")

	// The only active voyage is the default.
	h.ok("--voyage", one, "complete", "--summary", "done")
	assert.Equal(t, "second", intent())

	// No active voyage: a change has none to record in; a read tells
	// of the one just completed.
	h.ok("complete", "--summary", "done")
	r = h.fails(2, "note", "more")
	assert.Contains(t, r.Stderr, "no active voyage")
	assert.Contains(t, r.Stderr, "Try: helm voyage new")
	assert.Equal(t, "second", intent(), "the voyage just completed")
	assert.Equal(t, "first", intent("--voyage", one), "a completed voyage is still readable by id")
}
