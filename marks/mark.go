// Package marks holds what helm can look at: one mark type per kind, each in
// its own file with the logic that observes it. A mark is the logbook's
// label ("RustProject @ ."); the sighting it returns is the evidence.
package marks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
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
	// GitHub runs gh for the GitHub marks; nil means they cannot be observed.
	GitHub GitHubRunner
}

// GitHubRunner runs `gh` with the identity's configuration and returns its
// standard output. A non-zero exit is an error carrying gh's own message.
type GitHubRunner interface {
	GH(ctx context.Context, args ...string) ([]byte, error)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]func() Mark{}
)

// Register makes a mark kind decodable by Unmarshal. newFn returns a pointer
// to a fresh zero value. Register panics on a duplicate kind.
func Register(kind string, newFn func() Mark) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[kind]; dup {
		panic("marks: kind registered twice: " + kind)
	}
	registry[kind] = newFn
}

// Kinds lists the registered mark kinds in sorted order.
func Kinds() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	kinds := make([]string, 0, len(registry))
	for k := range registry {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// Marshal encodes m as a JSON object whose "kind" field names its kind,
// followed by the mark's own fields. The encoding is deterministic.
func Marshal(m Mark) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("marks: marshal: nil mark")
	}
	out, err := tagged.Marshal(m.Kind(), m)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	return out, nil
}

// Unmarshal decodes a mark written by Marshal. An unknown kind is an error
// that names it and lists the known ones.
func Unmarshal(data []byte) (Mark, error) {
	kind, err := tagged.Kind(data)
	if err != nil {
		return nil, fmt.Errorf("marks: decode: %w", err)
	}
	registryMu.RLock()
	newFn := registry[kind]
	registryMu.RUnlock()
	if newFn == nil {
		return nil, fmt.Errorf("marks: unknown kind %q (known: %v)", kind, Kinds())
	}
	m := newFn()
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("marks: decode %s: %w", kind, err)
	}
	return m, nil
}
