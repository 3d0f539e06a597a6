package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONFieldsAndJQShapeTheOutputAsGhDoes: --json=FIELDS keeps those
// fields of each object, --jq runs a jq program on the output (strings
// printed raw), the two together select and then run; the command's
// output is otherwise what --json prints.
func TestJSONFieldsAndJQShapeTheOutputAsGhDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start("Resolve #42: fix widget crash")
	h.ok("complete", "--summary", "Done.")
	h.at(5)
	second := h.start("Review #45")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "fields of each element", args: []string{"voyage", "list", "--status", "all", "--json=id,intent"},
			want: `[
  {
    "id": "` + first + `",
    "intent": "Resolve #42: fix widget crash"
  },
  {
    "id": "` + second + `",
    "intent": "Review #45"
  }
]
`},
		{name: "jq prints strings raw", args: []string{"voyage", "list", "--status", "all", "--jq", ".[].intent"},
			want: "Resolve #42: fix widget crash\nReview #45\n"},
		{name: "jq prints other values as JSON on a line", args: []string{"voyage", "list", "--status", "all", "--jq", "[.[] | .status]"},
			want: `["completed","active"]` + "\n"},
		{name: "fields, then jq", args: []string{"voyage", "list", "--status", "all", "--json=intent", "--jq", ".[0] | keys"},
			want: `["intent"]` + "\n"},
		{name: "json alone is every field", args: []string{"--voyage", second, "voyage", "show", "--json", "--jq", ".voyage.intent"},
			want: "Review #45\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.run(tt.args...)
			require.Equal(t, 0, r.Code, "%s", r)
			assert.Equal(t, tt.want, r.Stdout)
			assert.Empty(t, r.Stderr)
		})
	}
}

// TestJSONShapingMistakesDoNothing: a jq program that does not parse or a
// field that is not a name is bad usage, found before the command runs:
// nothing is recorded. A field no object has is null, with a warning that
// lists the fields there are.
func TestJSONShapingMistakesDoNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.Env["HELM_IDENTITY"], h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "john-agent", "coder", "human"
	tests := []struct {
		name, flag, want string
	}{
		{name: "jq that does not parse", flag: "--jq=.[", want: "--jq .[: "},
		{name: "a field that is not a name", flag: "--json=id,Intent!", want: `is not a field's name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.fails(2, "voyage", "new", tt.flag, "never started")
			assert.Contains(t, r.Stderr, tt.want)
			assert.Equal(t, "[]\n", h.ok("voyage", "list", "--status", "all", "--json"), "nothing recorded")
		})
	}

	h.start("started")
	r := h.run("voyage", "list", "--json=id,intnet")
	require.Equal(t, 0, r.Code, "%s", r)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "intnet")
	assert.Nil(t, got[0]["intnet"])
	assert.Regexp(t, `^helm: warning: --json: no object had 1 field intnet \(printed as null\); its fields: .*\bintent\b`, r.Stderr)
}
