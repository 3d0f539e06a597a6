package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigSaysWhereEachValueCameFrom: a flag before the environment,
// the environment before config.toml, config.toml before the default.
func TestConfigSaysWhereEachValueCameFrom(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeHome("config.toml", "identity = \"cfg-id\"\nrole = \"cfg-role\"\nmethod = \"cfg-method\"\n")
	h.Env["HELM_ROLE"] = "env-role"
	var got []setting
	require.NoError(t, json.Unmarshal([]byte(h.ok("--method", "flag-method", "config", "--json")), &got))
	bySetting := map[string]setting{}
	for _, s := range got {
		bySetting[s.Name] = s
	}
	tests := []struct {
		name, value, source string
	}{
		{name: "home", value: h.Home, source: "env HELM_HOME"},
		{name: "identity", value: "cfg-id", source: "config.toml"},
		{name: "role", value: "env-role", source: "env HELM_ROLE"},
		{name: "method", value: "flag-method", source: "flag --method"},
		{name: "store", value: "", source: "default (on this machine's disk, in the home)"},
		{name: "pager", value: "less (LESS=FRX)", source: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, bySetting, tt.name)
			assert.Equal(t, tt.value, bySetting[tt.name].Value)
			assert.Equal(t, tt.source, bySetting[tt.name].Source)
		})
	}
	text := h.ok("config")
	assert.Regexp(t, `(?m)^method +cfg-method +config.toml$`, text)
	assert.Regexp(t, `(?m)^store +- +default `, text)
}

// TestDoctorExitsOneWhenAnyCheckFails: every check passing (notes are
// not failures) exits 0; a missing git identity, a home others can
// write or a hook that runs a program not there each fail it, exit 1,
// with what to do.
func TestDoctorExitsOneWhenAnyCheckFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, h *harness)
		failed  string // "" for none
		wantTry string
	}{
		{name: "all well", setup: func(t *testing.T, h *harness) {}},
		{name: "no git identity", setup: func(t *testing.T, h *harness) {
			require.NoError(t, os.Remove(filepath.Join(h.Env["HOME"], ".gitconfig")))
		}, failed: "git identity", wantTry: "git config --global user.name"},
		{name: "a home others can write", setup: func(t *testing.T, h *harness) {
			require.NoError(t, os.Chmod(h.Home, 0o777))
		}, failed: "home", wantTry: "chmod"},
		{name: "a hook that runs no program", setup: func(t *testing.T, h *harness) {
			h.ok("hook", "install", "claude-code", "--user", "--as", "claude-bot")
			path := filepath.Join(h.Env["HOME"], ".claude", "settings.json")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			exe, err := os.Executable()
			require.NoError(t, err)
			if real, err := filepath.EvalSymlinks(exe); err == nil {
				exe = real
			}
			require.Contains(t, string(data), exe)
			data = []byte(strings.ReplaceAll(string(data), exe, "/nowhere/helm"))
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}, failed: "hooks claude-code (user)", wantTry: "helm hook install claude-code --user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.ExtraEnv = []string{"GIT_CONFIG_NOSYSTEM=1"}
			require.NoError(t, os.MkdirAll(h.Env["HOME"], 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(h.Env["HOME"], ".gitconfig"), []byte("[user]\n\tname = Ann\n\temail = ann@example.com\n"), 0o600))
			h.start("checked")
			tt.setup(t, h)
			r := h.run("doctor", "--json")
			var checks []check
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &checks), "%s", r)
			if tt.failed == "" {
				require.Equal(t, 0, r.Code, "%s", r)
				for _, c := range checks {
					assert.Contains(t, []string{"ok", "note"}, c.Status, "%+v", c)
				}
				return
			}
			require.Equal(t, 1, r.Code, "%s", r)
			var failed []check
			for _, c := range checks {
				if c.Status == "fail" {
					failed = append(failed, c)
				}
			}
			require.Len(t, failed, 1, "%+v", checks)
			assert.Equal(t, tt.failed, failed[0].Check)
			assert.Contains(t, failed[0].Try, tt.wantTry)
			assert.Contains(t, r.Stderr, "doctor: 1 check failed: "+tt.failed)
		})
	}
}
