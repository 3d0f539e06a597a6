// Package marks holds what helm can look at: one mark type per kind, each in
// its own file with the logic that observes it. A mark is the logbook's
// label ("RustProject @ ."); the sighting it returns is the evidence.
package marks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/helmlog/helm/internal/tagged"
	"github.com/helmlog/helm/sighting"
)

// Mark is what was looked at: a file set, a directory tree, PR #45, ...
type Mark interface {
	// Kind is the mark's kind as the CLI spells it, such as "file-contents".
	Kind() string
	// Key is the canonical slate key: two spellings of one target
	// ("./a.go" and "a.go") give the same key. It starts with the kind.
	Key() string
	// String is the one-line rendering used by the logbook story,
	// such as "RustProject @ .".
	String() string
	// Observe looks at the target and returns what came back. A failure
	// to observe the whole mark is an error; partial failures (one
	// unreadable file of several) are recorded inside the sighting.
	Observe(ctx context.Context, env *Env) (sighting.Sighting, error)
}

// Env is what observing needs from the world around it. The zero value is
// usable: relative paths resolve against the process's working directory.
type Env struct {
	// Dir is the directory relative paths are resolved against; empty
	// means the process's working directory.
	Dir string
	// HTTPClient fetches web marks; nil means a client with the default
	// timeout and redirect limit of the web mark.
	HTTPClient *http.Client
	// CommandTimeout bounds the command mark; zero means its default.
	CommandTimeout time.Duration
	// PassEnv names variables of the process's environment that a command
	// mark's program sees although their names look secret. Without it
	// the program gets the process's environment less every variable
	// redact.LooksSecret picks (GH_TOKEN, GH_ENTERPRISE_TOKEN,
	// AWS_SECRET_ACCESS_KEY, MY_API_KEY, ...): what it could print would be
	// recorded, and what it could send is not for it.
	PassEnv []string
	// Progress, when set, receives a command mark's output (standard
	// output and error, interleaved) as the program writes it, besides
	// the sighting capturing it: a terminal shows a long test run as it
	// goes. Writes come one at a time; the bytes are the program's own,
	// unescaped. A write error stops the copying, not the program.
	Progress io.Writer
	// GitHub runs gh for the GitHub marks; nil means they cannot be observed.
	GitHub GitHubRunner
	// StreamAbove, when positive, leaves the text of a file larger than
	// this many bytes unread by the file-contents mark: its content is a
	// sighting.TextSource instead, read from the file as the sighting is
	// stored (sighting.Encode), so that a file of gigabytes is never held
	// in memory. Zero reads every file whole.
	StreamAbove int64
}

// GitHubRunner runs `gh` with the identity's configuration and returns its
// standard output. A non-zero exit is an error carrying gh's own message.
type GitHubRunner interface {
	GH(ctx context.Context, args ...string) ([]byte, error)
}

// Validate checks a mark that may not have come from its kind's
// constructor — decoded from an observation file, or built as a struct
// literal — with the checks that constructor applies: no credentials in a
// web URL, no empty path, no issue #0, no unknown focus, and so on. Every
// kind in this package has a Validate method that Validate calls; a kind
// registered from outside without one is taken as it is. The error wraps
// ErrInvalid and names the field.
func Validate(m Mark) error {
	if rv := reflect.ValueOf(m); m == nil || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("%w: no mark", ErrInvalid)
	}
	if v, ok := m.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

var registry = tagged.New[Mark]("marks")

// Register makes a mark kind decodable by Unmarshal. newFn returns a pointer
// to a fresh zero value. Register panics on a duplicate kind.
func Register(kind string, newFn func() Mark) { registry.Register(kind, newFn) }

// Kinds lists the registered mark kinds in sorted order.
func Kinds() []string { return registry.Kinds() }

// Marshal encodes m as a JSON object whose "kind" field names its kind,
// followed by the mark's own fields. The encoding is deterministic.
func Marshal(m Mark) ([]byte, error) { return registry.Marshal(m) }

// Unmarshal decodes a mark written by Marshal. An unknown kind is an error
// that names it and lists the known ones.
func Unmarshal(data []byte) (Mark, error) { return registry.Unmarshal(data) }
