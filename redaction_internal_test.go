package helm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// TestContentAddressesAreNotRedacted: an artifact's BLAKE3 address is no
// text, and a rule that reads a prefix of it as a token (4b1d, ClickHouse's)
// must not change it: the event would name an artifact that is not there.
// A field meant for an address that holds anything else is text, and
// redacted as text.
func TestContentAddressesAreNotRedacted(t *testing.T) {
	r, err := redact.New(nil)
	require.NoError(t, err)
	addr := "4b1d846e75fe8c3bb710e159f031db3818cc2c3ae2bf25fe160dae50f2752f17"
	e := &projection.Event{Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: addr, DerivedFrom: addr}}
	assert.Zero(t, redactEvent(r, e))
	assert.Equal(t, addr, e.Artifact.Hash)
	assert.Equal(t, addr, e.Artifact.DerivedFrom)
	o := &projection.Event{Type: projection.Observed, Obs: &logbook.ObservationRecord{Key: "k", Artifact: addr}}
	assert.Zero(t, redactEvent(r, o))
	assert.Equal(t, addr, o.Obs.Artifact)

	token := "ghp_" + strings.Repeat("a1B2", 9)
	smuggled := &projection.Event{Type: projection.Observed, Obs: &logbook.ObservationRecord{Key: "k", Artifact: token}}
	assert.Equal(t, 1, redactEvent(r, smuggled), "not an address: redacted as any text")
	assert.NotContains(t, smuggled.Obs.Artifact, token)
}

// redactTree is a type that holds itself, text at every depth, and
// fields the walk must leave: unexported ones and bytes.
type redactTree struct {
	Name     string
	Children []*redactTree
	Next     *redactTree
	Any      any
	Labels   map[string]string
	Raw      json.RawMessage
	Bytes    []byte
	Count    int
	At       time.Time
	hidden   string
	Addr     string `redact:"address"`
	Embedded struct{ Text string }
}

// TestRedactValueReachesEveryText: the walk (by a plan per type) hides a
// secret wherever a string of an event can hold one — nested, in a type
// that holds itself, behind an interface, in a slice, a map, raw JSON, an
// anonymous struct — and leaves unexported fields and bytes as they are.
func TestRedactValueReachesEveryText(t *testing.T) {
	r, err := redact.New(nil)
	require.NoError(t, err)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	tree := &redactTree{
		Name:     "root " + token,
		Children: []*redactTree{{Name: "child " + token}, nil, {Next: &redactTree{Name: token}}},
		Any:      &redactTree{Name: token},
		Labels:   map[string]string{"note": "a " + token, "api_token": "abcdefghijklmnopqrstuvwx"},
		Raw:      json.RawMessage(`{"text":"` + token + `"}`),
		Bytes:    []byte(token),
		Count:    7,
		hidden:   token,
		Addr:     token,
	}
	tree.Embedded.Text = token
	n := redactValue(r, reflect.ValueOf(tree))
	assert.Equal(t, 9, n)
	for _, s := range []string{tree.Name, tree.Children[0].Name, tree.Children[2].Next.Name, tree.Any.(*redactTree).Name,
		tree.Labels["note"], tree.Labels["api_token"], string(tree.Raw), tree.Addr, tree.Embedded.Text} {
		assert.NotContains(t, s, token)
		assert.Contains(t, s, "[REDACTED:")
	}
	assert.Equal(t, token, string(tree.Bytes), "bytes are not text the walk redacts")
	assert.Equal(t, token, tree.hidden, "an unexported field is left")
	assert.Equal(t, 7, tree.Count)

	clean := &redactTree{Name: "nothing secret", Children: []*redactTree{{Name: "here"}}}
	assert.Zero(t, redactValue(r, reflect.ValueOf(clean)))
	assert.Equal(t, "nothing secret", clean.Name)
}
