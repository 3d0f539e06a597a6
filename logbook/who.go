package logbook

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/helmlog/helm/internal/safetext"
)

// MaxIdentityLen bounds an identity name. Identities name directories
// ($HELM_HOME/gh-config/IDENTITY/), so they stay short.
const MaxIdentityLen = 64

// ValidateIdentity reports whether name can be an identity: 1 to
// MaxIdentityLen bytes of valid UTF-8, printable characters, no path
// separator, no leading dot (so neither "." nor ".." nor hidden names), no
// spaces. An identity is a name, never a path: it must not reach outside
// gh-config/.
func ValidateIdentity(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("identity is empty")
	case safetext.InvalidUTF8(name) >= 0:
		return safetext.Check("identity", name)
	case len(name) > MaxIdentityLen:
		return fmt.Errorf("identity %q is longer than %d bytes", name, MaxIdentityLen)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("identity %q starts with a dot; use a plain name such as john-agent", name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("identity %q contains a path separator; an identity is a name, not a path", name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("identity %q contains %q; use printable characters without spaces", name, r)
		}
	}
	return nil
}
