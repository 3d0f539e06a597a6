package chain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// The chain's definition is a format: these values are fixed forever (a
// voyage witnessed today must check tomorrow).
func TestChainIsFixed(t *testing.T) {
	g := chain.Genesis("0190d9e2-7c1a-7b3e-9f00-000000000001")
	h1 := chain.Link(g, 1, []byte(`{"type":"started"}`))
	h2 := chain.Link(h1, 2, []byte(`{"type":"note"}`))
	assert.Equal(t, goldenGenesis, g.String())
	assert.Equal(t, goldenH2, h2.String())
	assert.Equal(t, h1, chain.Next(g, 1, len(`{"type":"started"}`), chain.Digest([]byte(`{"type":"started"}`))), "Link is Next over the digest")
}

func TestChainCommitsToEverything(t *testing.T) {
	g := chain.Genesis("v1")
	base := chain.Link(g, 1, []byte("a"))
	for _, tc := range []struct {
		name string
		got  chain.Hash
	}{
		{"another voyage", chain.Link(chain.Genesis("v2"), 1, []byte("a"))},
		{"another seq", chain.Link(g, 2, []byte("a"))},
		{"another record", chain.Link(g, 1, []byte("b"))},
		{"another length, same digest", chain.Next(g, 1, 2, chain.Digest([]byte("a")))},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.NotEqual(t, base, tc.got) })
	}
}

func TestHeadPrintsAndParses(t *testing.T) {
	h := chain.Head{Seq: 42, Hash: chain.Genesis("v")}
	s := h.String()
	assert.Regexp(t, `^42:[0-9a-f]{64}$`, s)
	back, err := chain.Parse(s)
	require.NoError(t, err)
	assert.Equal(t, h, back)

	j, err := json.Marshal(h)
	require.NoError(t, err)
	assert.JSONEq(t, `{"seq":42,"hash":"`+h.Hash.String()+`"}`, string(j))
	var fromJSON chain.Head
	require.NoError(t, json.Unmarshal(j, &fromJSON))
	assert.Equal(t, h, fromJSON)

	id, th, err := chain.ParseTrailerValue(chain.TrailerValue("0190-abc", h))
	require.NoError(t, err)
	assert.Equal(t, "0190-abc", id)
	assert.Equal(t, h, th)
	assert.Equal(t, "Helm-Voyage: 0190-abc "+s, chain.Trailer("0190-abc", h))
}

func TestParseRefusesOddSpellings(t *testing.T) {
	hx := chain.Genesis("v").String()
	for _, tc := range []struct{ name, in string }{
		{"no colon", "42" + hx},
		{"upper hex", "42:" + string([]byte{hx[0] &^ 0x20}) + hx[1:]},
		{"short hash", "42:" + hx[:63]},
		{"plus sign", "+42:" + hx},
		{"leading zero", "042:" + hx},
		{"negative", "-1:" + hx},
		{"not hex", "42:" + "zz" + hx[2:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chain.Parse(tc.in)
			assert.Error(t, err)
		})
	}
	_, _, err := chain.ParseTrailerValue("42:" + hx)
	assert.Error(t, err, "a trailer names its voyage")
}
