package actions_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/runner"
)

var (
	kebab = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	snake = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
)

// TestKindsAreWellFormed: every kind has a name its callers can spell (a
// command, a tool), a summary, a builder, and parameters whose names are
// unique and whose constraints fit their types.
func TestKindsAreWellFormed(t *testing.T) {
	kinds := actions.Kinds()
	require.NotEmpty(t, kinds)
	seen := map[string]bool{}
	for _, k := range kinds {
		assert.Regexp(t, kebab, k.Name)
		assert.False(t, seen[k.Name], "kind %s twice", k.Name)
		seen[k.Name] = true
		assert.NotEmpty(t, k.Summary, k.Name)
		assert.Equal(t, strings.ToLower(k.Summary[:1]), k.Summary[:1], "%s: the summary is a phrase, lower case", k.Name)
		assert.False(t, strings.HasSuffix(k.Summary, "."), "%s: the summary has no final period", k.Name)
		assert.NotNil(t, k.Build, k.Name)
		got, ok := actions.KindNamed(k.Name)
		assert.True(t, ok, k.Name)
		assert.Equal(t, k.Name, got.Name)
		params := map[string]bool{}
		for _, p := range k.Params {
			assert.Regexp(t, snake, p.Name, k.Name)
			assert.False(t, params[p.Name], "%s: parameter %s twice", k.Name, p.Name)
			params[p.Name] = true
			assert.NotEmpty(t, p.Doc, "%s %s", k.Name, p.Name)
			assert.False(t, p.Positive && p.Type != actions.Int, "%s %s: only an Int is positive", k.Name, p.Name)
			assert.False(t, p.Enum != nil && p.Type != actions.String, "%s %s: only a String has values to choose from", k.Name, p.Name)
			assert.False(t, p.Required && p.Type == actions.Bool, "%s %s: a flag cannot be needed", k.Name, p.Name)
		}
	}
	_, ok := actions.KindNamed("launch-rocket")
	assert.False(t, ok)
}

// sample is a valid value of p, and another one.
func sample(p actions.Param) (any, any) {
	switch p.Type {
	case actions.Int:
		return int64(7), int64(8)
	case actions.Bool:
		return true, false
	case actions.List:
		return []string{"alice,bob", "octo/core"}, []string{"carol"}
	}
	if p.Enum != nil {
		return p.Enum[len(p.Enum)-1], p.Enum[0]
	}
	return "fix-widget", "main"
}

// TestEveryKindBuildsItsActionFromItsParameters: Build makes the kind's
// action (its Kind is the kind's name) from the values its callers give,
// reads every parameter (another value of one makes another action), and
// a parameter the kind needs, left out, is bad input (ErrInvalid), as
// the callers that check it first would say.
func TestEveryKindBuildsItsActionFromItsParameters(t *testing.T) {
	r := &runner.Runner{Dir: t.TempDir()}
	for _, k := range actions.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			all := actions.Values{}
			for _, p := range k.Params {
				all[p.Name], _ = sample(p)
			}
			a, err := k.Build(r, all)
			require.NoError(t, err)
			assert.Equal(t, k.Name, a.Kind())
			params, err := json.Marshal(a)
			require.NoError(t, err)
			for _, p := range k.Params {
				other := actions.Values{}
				for name, v := range all {
					other[name] = v
				}
				_, other[p.Name] = sample(p)
				b, err := k.Build(r, other)
				require.NoError(t, err, p.Name)
				changed, err := json.Marshal(b)
				require.NoError(t, err)
				assert.NotEqual(t, string(params), string(changed), "%s: the action reads its parameter %s", k.Name, p.Name)
				if p.Required {
					delete(other, p.Name)
					_, err := k.Build(r, other)
					assert.ErrorIs(t, err, actions.ErrInvalid, "%s without %s", k.Name, p.Name)
				}
			}
		})
	}
}

// TestValuesReadAsTheirCallersGaveThem: a list given as repeated values
// or comma-separated reads the same, blanks dropped; a parameter not
// given reads as its zero value; one read as another type than it holds
// is a bug, and says so.
func TestValuesReadAsTheirCallersGaveThem(t *testing.T) {
	v := actions.Values{"reviewers": []string{"alice, bob", "", " octo/core ,"}, "number": int64(3), "force": true, "title": "Fix"}
	assert.Equal(t, []string{"alice", "bob", "octo/core"}, v.List("reviewers"))
	assert.Equal(t, int64(3), v.Int("number"))
	assert.True(t, v.Bool("force"))
	assert.Equal(t, "Fix", v.String("title"))
	assert.Empty(t, v.String("body"))
	assert.Zero(t, v.Int("comment_id"))
	assert.False(t, v.Bool("draft"))
	assert.Nil(t, v.List("labels"))
	assert.PanicsWithValue(t, "actions: parameter number holds a int64, read as a string", func() { v.String("number") })
}
