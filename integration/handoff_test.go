package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// A handoff on a JetStream home: recorded through one client, seen by
// another (its views name the new identity, what it records without
// one is the new identity's), refused for an agent with the refusal on
// record, and the same after the voyage is listed and reopened.
func TestSharedHomeHandoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "handoff", nil)
	name := newHome()
	a, b := jsHome(t, srv.ClientURL(), name), jsHome(t, srv.ClientURL(), name)
	agent := logbook.Who{Identity: "claude-a", Role: "coder", Method: "claude"}
	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	va, err := a.Start(ctx, "Handed off on JetStream", helm.OpenWaters, agent, nil)
	require.NoError(t, err)
	defer va.Close()

	_, err = b.Handoff(ctx, va.ID(), agent, logbook.Handoff{To: "claude-b"})
	require.ErrorIs(t, err, helm.ErrRefused, "an agent does not hand a voyage off")
	e, err := b.Handoff(ctx, va.ID()[:8], ann, logbook.Handoff{To: "ann", From: "claude-a", Why: "taking over"})
	require.NoError(t, err)
	assert.Equal(t, 2, e.N, "the refusal is entry 1")

	_, err = va.Note(ctx, "recorded through the other client", logbook.Who{Role: "coder", Method: "claude"})
	require.NoError(t, err, "a's handle decides on the store's tail")
	var who []string
	for en, err := range va.Entries(ctx, nil) {
		require.NoError(t, err)
		who = append(who, string(en.Kind)+" "+en.Who.Identity+" "+en.Who.Method)
	}
	assert.Equal(t, []string{"action claude-a claude", "handoff ann human", "note ann claude"}, who)

	list, err := b.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "claude-a", list[0].Identity)
	assert.Equal(t, "ann", list[0].CurrentIdentity)
	vb, err := b.Voyage(ctx, va.ID())
	require.NoError(t, err)
	defer vb.Close()
	info := vb.Info()
	assert.Equal(t, "ann", info.CurrentIdentity)
	require.Len(t, info.Handoffs, 1)
	assert.Equal(t, &logbook.Handoff{From: "claude-a", To: "ann", Why: "taking over"}, info.Handoffs[0].Handoff)
	assert.Equal(t, 1, info.Counts.Refused)
}
