// Package sighting holds what came back from observing a mark: one type per
// mark kind, each in its own file. A sighting is the heavy, prunable evidence
// behind a bearing; helm stores its JSON as a content-addressed artifact.
package sighting

import (
	"bytes"
	"io"

	"github.com/helmlog/helm/internal/tagged"
)

// Sighting is the raw data that came back from observing a mark. Every
// sighting type names the mark kind it answers, so a stored sighting can be
// decoded without its mark.
type Sighting interface {
	// Kind is the mark kind this sighting answers, such as "file-contents".
	Kind() string
}

var registry = tagged.New[Sighting]("sighting")

// Register makes a sighting kind decodable by Unmarshal. newFn returns a
// pointer to a fresh zero value. Register panics on a duplicate kind: two
// types answering one kind is a programming error.
func Register(kind string, newFn func() Sighting) { registry.Register(kind, newFn) }

// Kinds lists the registered sighting kinds in sorted order.
func Kinds() []string { return registry.Kinds() }

// Marshal encodes s as a JSON object whose "kind" field names its kind,
// followed by the sighting's own fields. The encoding is deterministic: the
// same sighting always gives the same bytes, which is what makes its BLAKE3
// hash a stable content address. A sighting with sources (HasSources)
// has their texts read into the result: Encode streams them instead.
func Marshal(s Sighting) ([]byte, error) {
	if HasSources(s) {
		var b bytes.Buffer
		if err := Encode(&b, s, nil); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return registry.Marshal(s)
}

// Unmarshal decodes a sighting written by Marshal. An unknown kind is an
// error that names it and lists the known ones.
func Unmarshal(data []byte) (Sighting, error) { return registry.Unmarshal(data) }

// Read reads a sighting's JSON from r to its end and decodes it. r may be
// a voyage's artifact (helm's Voyage.OpenArtifact), whose bytes are
// checked against their address when their end is read: an error reading
// them is returned as it is.
func Read(r io.Reader) (Sighting, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}
