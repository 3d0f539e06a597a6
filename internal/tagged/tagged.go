// Package tagged encodes values of an open set of kinds as JSON objects
// whose first field, "kind", names the kind, and decodes them back through a
// registry of kinds. marks and sighting both store their variants this way.
package tagged

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Kinded is a value that names its kind.
type Kinded interface {
	Kind() string
}

// Registry maps kinds to constructors of fresh values. The zero value is
// not usable; make one with New. It is safe for concurrent use.
type Registry[T Kinded] struct {
	name string // the owning package, for messages: "marks", "sighting"
	mu   sync.RWMutex
	m    map[string]func() T
}

// New returns an empty registry; name prefixes its error messages.
func New[T Kinded](name string) *Registry[T] {
	return &Registry[T]{name: name, m: map[string]func() T{}}
}

// Register makes kind decodable. newFn returns a pointer to a fresh zero
// value. Register panics on a duplicate kind: two types answering one kind
// is a programming error.
func (r *Registry[T]) Register(kind string, newFn func() T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[kind]; dup {
		panic(r.name + ": kind registered twice: " + kind)
	}
	r.m[kind] = newFn
}

// Kinds lists the registered kinds in sorted order.
func (r *Registry[T]) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	kinds := make([]string, 0, len(r.m))
	for k := range r.m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// Marshal encodes v as a JSON object whose "kind" field names its kind,
// followed by v's own fields. The encoding is deterministic.
func (r *Registry[T]) Marshal(v T) ([]byte, error) {
	var zero T
	if any(v) == any(zero) {
		return nil, fmt.Errorf("%s: marshal: nil value", r.name)
	}
	kind := v.Kind()
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: encode %s: %w", r.name, kind, err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("%s: encode %s: value is not a JSON object", r.name, kind)
	}
	k, _ := json.Marshal(kind)
	out := make([]byte, 0, len(body)+len(k)+10)
	out = append(out, `{"kind":`...)
	out = append(out, k...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// Unmarshal decodes a value written by Marshal. An unknown kind is an
// error that names it and lists the known ones.
func (r *Registry[T]) Unmarshal(data []byte) (T, error) {
	var zero T
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return zero, fmt.Errorf("%s: decode: %w", r.name, err)
	}
	if head.Kind == "" {
		return zero, fmt.Errorf(`%s: decode: no "kind" field`, r.name)
	}
	r.mu.RLock()
	newFn := r.m[head.Kind]
	r.mu.RUnlock()
	if newFn == nil {
		return zero, fmt.Errorf("%s: unknown kind %q (known: %v)", r.name, head.Kind, r.Kinds())
	}
	v := newFn()
	if err := json.Unmarshal(data, v); err != nil {
		return zero, fmt.Errorf("%s: decode %s: %w", r.name, head.Kind, err)
	}
	return v, nil
}
