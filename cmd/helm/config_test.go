package main

import (
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigUnknownKeysNameTheirLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		want       []string // the error's lines
	}{
		{"typo", "identity = \"ann\"\n\nrol = \"coder\"\n",
			[]string{`config.toml:3: unknown key "rol" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`}},
		{"quoted", "'rol' = \"coder\"\n",
			[]string{`config.toml:1: unknown key "rol" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`}},
		{"a table once", "role = \"coder\"\n[storage]\nurl = \"x\"\n\n[[hooks]]\nrun = \"y\"\n",
			[]string{
				`config.toml:2: unknown key "storage" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`,
				`config.toml:5: unknown key "hooks" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`,
			}},
		{"dotted", "identity = \"ann\"\nstorage.url = \"x\"\n",
			[]string{`config.toml:2: unknown key "storage.url" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`}},
		{"the same name in a table", "[x]\nrole = \"a\"\n",
			[]string{`config.toml:1: unknown key "x" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`}},
		{"several", "methd = \"human\"\nidentity = \"ann\"\nrol = \"coder\"\n", []string{
			`config.toml:1: unknown key "methd" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`,
			`config.toml:3: unknown key "rol" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)`,
		}},
		{"none", "identity = \"ann\"\nrole = \"coder\"\nmethod = \"human\"\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c config
			md, err := toml.Decode(tt.file, &c)
			require.NoError(t, err)
			err = unknownKeys("config.toml", []byte(tt.file), md.Undecoded())
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, 2, ExitCode(err), "bad input")
			assert.Equal(t, tt.want, splitLines(err.Error()))
		})
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func TestUnknownConfigKeyIsUsageErrorWithItsLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeConfig(t, h, "identity = \"ann\"\n# the role:\nrol = \"coder\"\n")
	r := h.fails(2, "voyage", "new", "typo")
	assert.Equal(t, "helm: "+h.Home+"/config.toml:3: unknown key \"rol\" (known: identity, role, method, identities.NAME.pass_env, redact.env, redact.patterns, policy, store, nats.replicas, nats.creds, nats.ca, nats.cert, nats.key)\n"+
		"Try: fix or remove the key in "+h.Home+"/config.toml; it holds identity, role, method and [identities.NAME] tables, e.g. role = \"coder\"\n", r.Stderr)
}
