package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decoderStrings is jsonStrings done by encoding/json's decoder: the
// reference the scanner must agree with.
func decoderStrings(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type level struct {
		object bool
		n      int
	}
	var stack []level
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				if len(stack) > 0 {
					stack[len(stack)-1].n++
				}
				stack = append(stack, level{object: d == '{'})
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		key := false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			key = top.object && top.n%2 == 0
			top.n++
		}
		if s, ok := tok.(string); ok && !key {
			out = append(out, s)
		}
	}
}

func scannerStrings(raw []byte) ([]string, error) {
	var out []string
	err := jsonStrings(raw, func(s string) bool { out = append(out, s); return true })
	return out, err
}

func TestJSONStringsAgreesWithTheDecoder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
	}{
		{"a sighting", `{"contents":[{"path":"a.go","content":{"type":"text","text":"package a\n\"quoted\" \\ \u00e9"}}],"n":3}`},
		{"keys are no values", `{"stdout":"x","stderr":"","nested":{"k":["v1",{"k2":"v2"}, 1, true, null]}}`},
		{"escaped keys", `{"a\"b":"c","d":"e\u0041"}`},
		{"an array at the top", `["one", "two", {"three": "four"}]`},
		{"a bare string", `"alone"`},
		{"white space", " { \"a\" : \"b\" ,\n \"c\" :\t[ \"d\" ] } "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := decoderStrings([]byte(tt.json))
			require.NoError(t, err)
			got, err := scannerStrings([]byte(tt.json))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func FuzzJSONStrings(f *testing.F) {
	f.Add([]byte(`{"contents":[{"path":"a.go","content":{"type":"text","text":"x\ny"}}]}`))
	f.Add([]byte(`["a",{"b":"c"}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			_, _ = scannerStrings(raw) // must not panic
			return
		}
		want, err := decoderStrings(raw)
		if err != nil {
			return
		}
		got, err := scannerStrings(raw)
		require.NoError(t, err)
		if len(want) == 0 {
			want = nil
		}
		assert.Equal(t, want, got)
	})
}
