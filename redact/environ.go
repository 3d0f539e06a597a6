package redact

import (
	"slices"
	"strings"
)

// StripEnv returns the entries of environ (KEY=VALUE, as os.Environ gives
// them) that a program whose output is recorded may see: every variable
// whose name does not look secret (LooksSecret), and those whose names
// keep lists. GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN,
// AWS_SECRET_ACCESS_KEY, MY_API_KEY and their kind are left out, so that a
// program helm runs never holds a credential it could print; PATH, HOME,
// GOPATH, GOCACHE and the rest a build or a test needs stay. Entries
// without "=" are dropped.
func StripEnv(environ, keep []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if !LooksSecret(k) || slices.Contains(keep, k) {
			out = append(out, kv)
		}
	}
	return out
}
