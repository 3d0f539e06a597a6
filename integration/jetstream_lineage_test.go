package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// Fork and salvage on a JetStream home (issue 33): a fork of a shared
// voyage carries its entries and verifies against it; the recorded agent
// flips a byte of a unit in the stream, and salvage carries what lies
// before it into a new voyage, nothing after it, and leaves the stream's
// messages of the damaged voyage as they were.
func TestJetStreamForkAndSalvage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "lineage", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "Ship it", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	for _, n := range []string{"alpha", "bravo", "charlie", "delta"} {
		_, err = v.Note(ctx, n, who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())

	f, err := h.Start(ctx, "What if", helm.OpenWaters, who, &helm.StartOptions{ForkOf: id, ForkAt: 2})
	require.NoError(t, err)
	assert.Len(t, entriesOf(t, f), 2)
	_, err = f.Note(ctx, "echo", who)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	rep, err := h.Verify(ctx, f.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Contains(t, rep.Origin, "checked against voyage "+id)

	js := rawJS(t, srv)
	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	subject := "helm." + home + ".v." + id
	msgs := subjectMsgs(t, st, subject)
	flipped := false
	for _, m := range msgs {
		if i := bytes.Index(m.Data, []byte("charlie")); i >= 0 {
			m.Data[i] ^= 0x20
			flipped = true
		}
	}
	require.True(t, flipped, "a unit holds the note")
	// The stream is remade with the home's two voyages, the damaged one's
	// with the flipped byte.
	forked := subjectMsgs(t, st, "helm."+home+".v."+f.ID())
	remakeStream(t, js, st)
	republish(t, js, msgs)
	republish(t, js, forked)
	st, err = js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	before := subjectMsgs(t, st, subject)

	h = jsHome(t, srv.ClientURL(), home)
	s, err := h.Salvage(ctx, id, who, nil)
	require.NoError(t, err)
	defer s.Close()
	var notes []string
	for _, e := range entriesOf(t, s) {
		notes = append(notes, e.Note.Text)
	}
	assert.Equal(t, []string{"alpha", "bravo"}, notes, "nothing from the damage on")
	lost := s.Info().Salvage.Lost
	require.NotNil(t, lost)
	assert.NotEmpty(t, lost.Reason)
	verified(t, h, s.ID())

	after := subjectMsgs(t, st, subject)
	require.Len(t, after, len(before))
	for i := range before {
		assert.Equal(t, before[i].Data, after[i].Data, "the damaged voyage's messages are untouched")
	}
}
