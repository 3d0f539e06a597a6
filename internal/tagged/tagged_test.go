package tagged

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type shape interface{ Kind() string }

type circle struct {
	R int `json:"r"`
}

func (*circle) Kind() string { return "circle" }

type dot struct{}

func (*dot) Kind() string { return "dot" }

func registry() *Registry[shape] {
	r := New[shape]("shapes")
	r.Register("circle", func() shape { return &circle{} })
	r.Register("dot", func() shape { return &dot{} })
	return r
}

func TestRoundTripPutsKindFirst(t *testing.T) {
	t.Parallel()
	r := registry()
	tests := []struct {
		name string
		v    shape
		want string
	}{
		{"fields", &circle{R: 2}, `{"kind":"circle","r":2}`},
		{"no fields", &dot{}, `{"kind":"dot"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := r.Marshal(tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(data))
			back, err := r.Unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, tt.v, back)
		})
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	r := registry()
	tests := []struct{ name, data, want string }{
		{"not json", `{`, "shapes: decode"},
		{"no kind", `{"r":1}`, `no "kind" field`},
		{"unknown kind", `{"kind":"square"}`, `unknown kind "square" (known: [circle dot])`},
		{"bad field", `{"kind":"circle","r":"x"}`, "decode circle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Unmarshal([]byte(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := r.Marshal(nil)
	assert.ErrorContains(t, err, "nil value")
	assert.Panics(t, func() { r.Register("dot", func() shape { return &dot{} }) })
}
