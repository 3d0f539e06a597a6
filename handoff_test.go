package helm

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

var (
	handoffAnn   = logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	handoffAgent = logbook.Who{Identity: "claude-a", Role: "coder", Method: "claude"}
)

// handoffHome opens a home of its own with a snapshot every few events
// (so that reopening reads the handoffs from a snapshot), and the
// rules of pol, when given.
func handoffHome(t *testing.T, pol string) *Home {
	t.Helper()
	opts := &Options{NoSync: true, snapshotEvery: 3}
	if pol != "" {
		p, err := policy.Parse([]byte(pol), "policy.toml")
		require.NoError(t, err)
		opts.Policy = p
	}
	h, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	return h
}

// whoOf lists each entry's kind and identity, "note claude-a".
func whoOf(t *testing.T, v *Voyage) []string {
	t.Helper()
	var out []string
	for e, err := range v.Entries(context.Background(), nil) {
		require.NoError(t, err)
		out = append(out, string(e.Kind)+" "+e.Who.Identity)
	}
	return out
}

// From the handoff on, what is recorded without an identity is recorded
// as the new one, with the method its recorder gives; earlier entries
// keep theirs; the views (a fresh open from a snapshot, the listing)
// name the current identity and the handoff.
func TestHandoffChangesTheIdentityFromThatEntryOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := handoffHome(t, "")
	v, err := h.Start(ctx, "Fix the widget", OpenWaters, handoffAgent, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "found it", handoffAgent)
	require.NoError(t, err)

	e, err := h.Handoff(ctx, v.ID()[:8], handoffAnn, logbook.Handoff{To: "ann", From: "claude-a", Why: " taking over "})
	require.NoError(t, err)
	assert.Equal(t, logbook.EntryHandoff, e.Kind)
	assert.Equal(t, 2, e.N)
	assert.Equal(t, handoffAnn, e.Who)
	assert.Equal(t, &logbook.Handoff{From: "claude-a", To: "ann", Why: "taking over"}, e.Handoff)

	require.NoError(t, v.Refresh(ctx))
	_, err = v.Note(ctx, "carrying on", logbook.Who{Role: "coder", Method: "claude"}) // no identity named
	require.NoError(t, err)
	assert.Equal(t, []string{"note claude-a", "handoff ann", "note ann"}, whoOf(t, v))
	last, err := v.entryAt(ctx, v.Info().Seq)
	require.NoError(t, err)
	assert.Equal(t, "claude", last.Who.Method, "a handoff changes no method")

	for name, info := range map[string]func() VoyageInfo{
		"the handle": v.Info,
		"a fresh open (its snapshot)": func() VoyageInfo {
			w, err := h.Voyage(ctx, v.ID())
			require.NoError(t, err)
			defer w.Close()
			return w.Info()
		},
		"the listing": func() VoyageInfo {
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			require.Len(t, list, 1)
			return list[0]
		},
	} {
		i := info()
		assert.Equal(t, "claude-a", i.Identity, name)
		assert.Equal(t, "ann", i.CurrentIdentity, name)
		require.Len(t, i.Handoffs, 1, name)
		assert.Equal(t, e.Handoff, i.Handoffs[0].Handoff, name)
		assert.Equal(t, e.N, i.Handoffs[0].N, name)
	}
}

// A handoff is refused, with nothing written, when it cannot be one.
func TestHandoffRefusesWithoutWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, v *Voyage)
		who   logbook.Who
		to    logbook.Handoff
		want  error
	}{
		{name: "to the identity it has", who: handoffAnn, to: logbook.Handoff{To: "claude-a"}, want: ErrInvalid},
		{name: "an identity that is a path", who: handoffAnn, to: logbook.Handoff{To: "../ann"}, want: ErrInvalid},
		{name: "no identity", who: handoffAnn, to: logbook.Handoff{To: " "}, want: ErrInvalid},
		{name: "from an identity it no longer has", who: handoffAnn, to: logbook.Handoff{To: "bob", From: "ann"}, want: ErrInvalid},
		{name: "no method", who: logbook.Who{Identity: "ann", Role: "lead"}, to: logbook.Handoff{To: "ann"}, want: ErrMissingWho},
		{name: "a completed voyage", who: handoffAnn, to: logbook.Handoff{To: "ann"}, want: ErrVoyageCompleted, setup: func(t *testing.T, v *Voyage) {
			err := v.Complete(ctx, logbook.OutcomeCompleted, "done", handoffAgent)
			require.NoError(t, err)
		}},
		{name: "a blocked voyage", who: handoffAnn, to: logbook.Handoff{To: "ann"}, want: ErrVoyagePaused, setup: func(t *testing.T, v *Voyage) {
			err := v.Complete(ctx, logbook.OutcomeBlocked, "waiting", handoffAgent)
			require.NoError(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := handoffHome(t, "")
			v, err := h.Start(ctx, "Fix the widget", OpenWaters, handoffAgent, nil)
			require.NoError(t, err)
			defer v.Close()
			if tt.setup != nil {
				tt.setup(t, v)
			}
			before := v.Info().Seq
			_, err = h.Handoff(ctx, v.ID(), tt.who, tt.to)
			require.ErrorIs(t, err, tt.want)
			require.NoError(t, v.Refresh(ctx))
			assert.Equal(t, before, v.Info().Seq, "nothing written")
			assert.Equal(t, "claude-a", v.Info().CurrentIdentity)
		})
	}
}

// TestAttackAgentHandoffIsRefusedAndRecorded: by default only a person
// hands a voyage off. The agent, calling the library as the same user,
// claims a method that reads as human and is not exactly "human", or
// names the person as the identity it acts as while saying it is an
// agent: the guard refuses each (ErrRefused), records the refusal, and
// the voyage keeps its identity. A rule of the home's policy that
// allows it decides instead; one that asks for confirmation needs it.
func TestAttackAgentHandoffIsRefusedAndRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := handoffHome(t, "")
	v, err := h.Start(ctx, "Ann's voyage", OpenWaters, handoffAnn, nil)
	require.NoError(t, err)
	defer v.Close()
	for _, method := range []string{"claude", "Human", "HUMAN", "human\u200b", "ｈｕｍａｎ", "humаn", "human-ish"} {
		for _, as := range []string{"claude-a", "ann", ""} {
			who := logbook.Who{Identity: as, Role: "coder", Method: method}
			_, err := h.Handoff(ctx, v.ID(), who, logbook.Handoff{To: "claude-a", Why: "mine now"})
			require.ErrorIs(t, err, ErrRefused, "method %q as %q", method, as)
			assert.Contains(t, err.Error(), `"a person hands a voyage off" (helm's built-in rules:`)
			assert.Equal(t, hint.Policy, HintOf(err).Kind)
		}
	}
	require.NoError(t, v.Refresh(ctx))
	assert.Equal(t, "ann", v.Info().CurrentIdentity)
	assert.Empty(t, v.Info().Handoffs)
	assert.Equal(t, 21, v.Info().Counts.Refused, "every refusal is recorded")

	// A rule of the home's policy cannot loosen the built-in rule: a
	// confirm rule holds a person's handoff until confirmed, and leaves
	// an agent's refused. A rule of the system policy can let an agent
	// hand off; it is recorded by the agent, with its method.
	h2 := handoffHome(t, "[[rule]]\nname = \"handoffs are confirmed\"\naction = \"handoff\"\ndecision = \"confirm\"\n")
	w, err := h2.Start(ctx, "Ann's voyage", OpenWaters, handoffAnn, nil)
	require.NoError(t, err)
	defer w.Close()
	_, err = h2.Handoff(ctx, w.ID(), handoffAgent, logbook.Handoff{To: "claude-a", Confirmed: true})
	require.ErrorIs(t, err, ErrRefused, "a home rule does not loosen the built-in one")
	_, err = h2.Handoff(ctx, w.ID(), handoffAnn, logbook.Handoff{To: "bob"})
	require.ErrorIs(t, err, ErrNeedsConfirmation)

	sys, err := policy.Parse([]byte("[[rule]]\nname = \"agents hand off\"\naction = \"handoff\"\ndecision = \"allow\"\n"), "/etc/helm/policy.toml")
	require.NoError(t, err)
	h3, err := Open(t.TempDir(), &Options{NoSync: true, Policy: policy.System(sys)})
	require.NoError(t, err)
	x, err := h3.Start(ctx, "Ann's voyage", OpenWaters, handoffAnn, nil)
	require.NoError(t, err)
	defer x.Close()
	e, err := h3.Handoff(ctx, x.ID(), handoffAgent, logbook.Handoff{To: "claude-a"})
	require.NoError(t, err)
	assert.Equal(t, handoffAgent, e.Who, "a handoff never makes its recorder human")
	require.NoError(t, x.Refresh(ctx)) // another handle recorded it
	assert.Equal(t, "claude-a", x.Info().CurrentIdentity)
}

// TestAttackRacingHandoffsNameWhomTheyExpect: two handoffs decided on
// the same view race; the one that names the identity it expects
// (From) is refused once the other has landed, instead of handing off
// a voyage that is no longer that identity's.
func TestAttackRacingHandoffsNameWhomTheyExpect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := handoffHome(t, "")
	v, err := h.Start(ctx, "Ann's voyage", OpenWaters, handoffAnn, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = h.Handoff(ctx, v.ID(), handoffAnn, logbook.Handoff{To: "bob", From: "ann"})
	require.NoError(t, err)
	_, err = h.Handoff(ctx, v.ID(), handoffAnn, logbook.Handoff{To: "carol", From: "ann"})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "the voyage's identity is bob, not ann")
	require.NoError(t, v.Refresh(ctx))
	assert.Equal(t, "bob", v.Info().CurrentIdentity)
	assert.False(t, errors.Is(err, ErrRefused))
}
