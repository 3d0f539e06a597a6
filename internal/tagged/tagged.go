// Package tagged encodes values of a closed-but-extensible set of kinds as
// JSON objects whose first field, "kind", names the kind. marks and sighting
// both store their variants this way.
package tagged

import (
	"encoding/json"
	"fmt"
)

// Marshal encodes v's JSON object with a leading "kind" field. v must encode
// as a JSON object; its own fields follow the kind.
func Marshal(kind string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", kind, err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encode %s: value is not a JSON object", kind)
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

// Kind reads the "kind" field of an encoded object.
func Kind(data []byte) (string, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", err
	}
	if head.Kind == "" {
		return "", fmt.Errorf(`no "kind" field`)
	}
	return head.Kind, nil
}
