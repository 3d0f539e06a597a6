package helm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// fillText sets every text v's type can hold to token, as the recorded
// agent would fill an event: every exported string at any depth (behind
// pointers, in slices, arrays and maps, keys included), raw JSON as a
// JSON string. seen stops a type that holds itself after one level.
func fillText(v reflect.Value, token string, seen map[reflect.Type]int) {
	t := v.Type()
	switch t.Kind() {
	case reflect.String:
		v.SetString(token)
	case reflect.Pointer:
		if seen[t.Elem()] > 1 {
			return
		}
		seen[t.Elem()]++
		defer func() { seen[t.Elem()]-- }()
		p := reflect.New(t.Elem())
		fillText(p.Elem(), token, seen)
		v.Set(p)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fillText(v.Field(i), token, seen)
			}
		}
	case reflect.Slice:
		if t == rawMessage {
			v.SetBytes([]byte(`{"text":"` + token + `"}`))
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return // bytes are not text
		}
		s := reflect.MakeSlice(t, 2, 2)
		for i := range 2 {
			fillText(s.Index(i), token, seen)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fillText(v.Index(i), token, seen)
		}
	case reflect.Map:
		m := reflect.MakeMap(t)
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fillText(k, token, seen)
		fillText(e, token, seen)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if t.NumMethod() == 0 {
			v.Set(reflect.ValueOf(token))
		}
	}
}

// TestAttackEveryTextOfEveryEventTypeIsRedacted fills every text of an
// event (every payload of every type at once, every string at every
// depth) with a token and redacts it: no token is left anywhere in its
// encoding. A field added later of a kind the plan per type does not
// reach (a map of slices, an array, an interface) fails here.
func TestAttackEveryTextOfEveryEventTypeIsRedacted(t *testing.T) {
	r, err := redact.New(nil)
	require.NoError(t, err)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	e := &projection.Event{}
	fillText(reflect.ValueOf(e).Elem(), token, map[reflect.Type]int{})
	filled, err := json.Marshal(e)
	require.NoError(t, err)
	require.Greater(t, strings.Count(string(filled), token), 30, "the event holds the token everywhere")
	assert.Positive(t, redactEvent(r, e))
	out, err := json.Marshal(e)
	require.NoError(t, err)
	assert.NotContains(t, string(out), token)
	assert.NotContains(t, string(out), token[:20])
}

// A secret in the places no event type has yet, but the walk claims to
// reach ("every string reached through ... interfaces, ... string maps"):
// a map's key, a string or a struct value behind an interface, an array.
func TestAttackTheWalkRedactsMapKeysInterfaceValuesAndArrays(t *testing.T) {
	r, err := redact.New(nil)
	require.NoError(t, err)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	type inner struct{ Text string }
	type holder struct {
		Labels map[string]string
		Str    any
		Struct any
		Arr    [2]string
	}
	h := &holder{
		Labels: map[string]string{"key " + token: "value"},
		Str:    "text " + token,
		Struct: inner{Text: token},
		Arr:    [2]string{"a " + token, "b"},
	}
	var n int
	require.NotPanics(t, func() { n = redactValue(r, reflect.ValueOf(h)) })
	assert.Equal(t, 4, n)
	out, err := json.Marshal(h)
	require.NoError(t, err)
	assert.NotContains(t, string(out), token)
	assert.Equal(t, "b", h.Arr[1])
	assert.Contains(t, h.Labels, "key [REDACTED:github-token]", "the key is redacted, its value kept: %v", h.Labels)
}
