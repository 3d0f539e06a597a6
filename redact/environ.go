package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// StripEnv returns the entries of environ (KEY=VALUE, as os.Environ gives
// them) that a program whose output is recorded may see: every variable
// that does not hold a credential by its name or its value
// (heldSecret), and those whose names keep lists. GH_TOKEN, GITHUB_TOKEN,
// GH_ENTERPRISE_TOKEN, AWS_SECRET_ACCESS_KEY, MY_API_KEY, MYSQL_PWD,
// DB_PASS, RAILS_MASTER_KEY, a DATABASE_URL with a password in it and
// their kind are left out, so that a program helm runs never holds a
// credential it could print; PATH, HOME, PWD, GOPATH, GOCACHE,
// AWS_ACCESS_KEY_ID and the rest a build or a test needs stay. Entries
// without "=" are dropped.
func StripEnv(environ, keep []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if !heldSecret(k, v) || slices.Contains(keep, k) {
			out = append(out, kv)
		}
	}
	return out
}

// urlPassword finds a URL with a password in it (scheme://user:pass@),
// as the url-credentials rule does.
var urlPassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:"'<>]*:[^/@\s"'<>]+@`)
})

// heldSecret reports whether an environment variable holds a credential:
// its name looks secret (LooksSecret), or names a password or key by the
// conventions LooksSecret leaves to the redactor's value rules (a last
// word PASS or PWD, as MYSQL_PWD and DB_PASS; PASSPHRASE; a last word
// KEY, as RAILS_MASTER_KEY and SSH_KEY), or its value is a URL with a
// password in it (DATABASE_URL, HTTPS_PROXY). PWD and OLDPWD are
// directories.
func heldSecret(name, value string) bool {
	if LooksSecret(name) {
		return true
	}
	u := strings.ReplaceAll(strings.ToUpper(name), "-", "_")
	switch {
	case strings.Contains(u, "PASSPHRASE"),
		strings.HasSuffix(u, "_PASS"), strings.HasSuffix(u, "_PWD"), strings.HasSuffix(u, "_KEY"):
		return true
	}
	return strings.Contains(value, "://") && urlPassword().MatchString(value)
}
