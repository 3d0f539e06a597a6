// Package sighting holds what came back from observing a mark: one type per
// mark kind, each in its own file. A sighting is the heavy, prunable evidence
// behind a bearing; helm stores its JSON as a content-addressed artifact.
package sighting

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/helmlog/helm/internal/tagged"
)

// Sighting is the raw data that came back from observing a mark. Every
// sighting type names the mark kind it answers, so a stored sighting can be
// decoded without its mark.
type Sighting interface {
	// Kind is the mark kind this sighting answers, such as "file-contents".
	Kind() string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]func() Sighting{}
)

// Register makes a sighting kind decodable by Unmarshal. newFn returns a
// pointer to a fresh zero value. Register panics on a duplicate kind: two
// types answering one kind is a programming error.
func Register(kind string, newFn func() Sighting) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[kind]; dup {
		panic("sighting: kind registered twice: " + kind)
	}
	registry[kind] = newFn
}

// Kinds lists the registered sighting kinds in sorted order.
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

// Marshal encodes s as a JSON object whose "kind" field names its kind,
// followed by the sighting's own fields. The encoding is deterministic: the
// same sighting always gives the same bytes, which is what makes its BLAKE3
// hash a stable content address.
func Marshal(s Sighting) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("sighting: marshal: nil sighting")
	}
	out, err := tagged.Marshal(s.Kind(), s)
	if err != nil {
		return nil, fmt.Errorf("sighting: %w", err)
	}
	return out, nil
}

// Unmarshal decodes a sighting written by Marshal. An unknown kind is an
// error that names it and lists the known ones.
func Unmarshal(data []byte) (Sighting, error) {
	kind, err := tagged.Kind(data)
	if err != nil {
		return nil, fmt.Errorf("sighting: decode: %w", err)
	}
	registryMu.RLock()
	newFn := registry[kind]
	registryMu.RUnlock()
	if newFn == nil {
		return nil, fmt.Errorf("sighting: unknown kind %q (known: %v)", kind, Kinds())
	}
	s := newFn()
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("sighting: decode %s: %w", kind, err)
	}
	return s, nil
}
