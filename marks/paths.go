package marks

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/safetext"
)

// ErrInvalid is wrapped by every constructor's error for bad input, so the
// CLI can tell bad usage (exit 2) from a failed observation.
var ErrInvalid = errors.New("invalid mark")

func invalidf(kind, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", kind, ErrInvalid, fmt.Sprintf(format, args...))
}

// cleanPath validates a path given by a caller and returns it cleaned:
// "./a.go" and "a.go" become one spelling, a trailing slash is dropped.
// Paths must be valid UTF-8 because marks are stored as JSON text.
func cleanPath(kind, what, p string) (string, error) {
	if p == "" {
		return "", invalidf(kind, "empty %s", what)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidf(kind, "%s %q contains a NUL byte", what, p)
	}
	if err := safetext.Check(fmt.Sprintf("%s %q", what, p), p); err != nil {
		return "", invalidf(kind, "%v", err)
	}
	return filepath.Clean(p), nil
}

// validate checks an anchor that came from outside (a decoded mark): it is
// empty, or an absolute directory as SetBase makes it.
func (a Anchor) validate(kind string) error {
	if a.Base == "" {
		return nil
	}
	if _, err := cleanPath(kind, "base", a.Base); err != nil {
		return err
	}
	if !filepath.IsAbs(a.Base) {
		return invalidf(kind, "base %q is not an absolute directory (marks are anchored where they were made)", a.Base)
	}
	return nil
}

// Anchor is the absolute directory a mark's relative paths were given
// against. It is part of what the mark names, so it is part of its key:
// "a.go" observed from two worktrees is two files, and "a.go" and
// "/w/a.go" observed from /w are one. The label (String) keeps the paths
// as given. Empty means the paths are taken as they are, relative ones
// against Env.Dir when observed.
type Anchor struct {
	Base string `json:"base,omitempty"`
}

// SetBase anchors the mark's relative paths at dir (made absolute).
func (a *Anchor) SetBase(dir string) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	a.Base = dir
}

// abs returns p anchored: joined to Base when p is relative.
func (a Anchor) abs(p string) string {
	if p == "" {
		p = "."
	}
	if a.Base == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.Base, p)
}

// SetBase anchors m's relative paths at dir, if m names paths (file
// contents, trees, projects, a command's directory); other marks are
// unchanged. Callers such as the CLI anchor marks at their working
// directory so that slate keys name the same files wherever they run.
func SetBase(m Mark, dir string) {
	if a, ok := m.(interface{ SetBase(string) }); ok {
		a.SetBase(dir)
	}
}

// keyPath is the canonical spelling of a stored path for a slate key. It
// tolerates values that never went through a constructor (decoded marks).
func keyPath(p string) string {
	if p == "" {
		return "."
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// quote renders one key component unambiguously.
func quote(s string) string { return strconv.Quote(s) }

func itoa(n int) string { return strconv.Itoa(n) }

// resolve turns a mark's path into one the file system can open: absolute
// paths stay, relative ones are joined to env.Dir.
func (e *Env) resolve(p string) string {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) || e == nil || e.Dir == "" {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// errorMessage is the short, path-free reason recorded in a sighting when a
// file or directory cannot be read.
func errorMessage(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// shorten truncates s to at most n runes, ending with "…" when cut (at a
// word boundary when one is near), and
// folds line breaks into spaces so the result fits on one logbook line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := string([]rune(s)[:n-1])
	// Prefer ending on a word boundary when one is near.
	if i := strings.LastIndexByte(cut, ' '); i > 0 && utf8.RuneCountInString(cut[i:]) <= 16 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ") + "…"
}
