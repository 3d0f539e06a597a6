package helm_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
)

// TestErrorsCarryHintsAsData: what to do about an error is a Hint the
// caller reads with HintOf, never part of the error's message; the error
// says what failed, on which voyage, and why.
func TestErrorsCarryHintsAsData(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, fixedOptions())
	_, emptySlate := v.TakeBearing(ctx, "nothing seen", who, nil)
	_, noBearing := v.Challenge(ctx, 3, helm.Challenge{Feedback: "f", Reading: "r"}, who)
	notOnSlate := v.Erase(ctx, "test-note:nothing", who)
	_, noVoyage := h.Voyage(ctx, "ffffffff")
	_, noArtifact := readArtifact(ctx, v, "abcdef")
	_, missingWho := v.TakeBearing(ctx, "r", logbook.Who{Identity: "x"}, nil)
	require.NoError(t, v.Complete(ctx, logbook.OutcomeCompleted, "done", who))
	_, completed := v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)

	tests := []struct {
		name string
		err  error
		want hint.Kind
	}{
		{"empty slate", emptySlate, hint.Observe},
		{"no such bearing", noBearing, hint.ReadLogbook},
		{"not on the slate", notOnSlate, hint.ReadSlate},
		{"no such voyage", noVoyage, hint.ListVoyages},
		{"no such artifact", noArtifact, hint.ListArtifacts},
		{"missing role and method", missingWho, hint.GiveWho},
		{"completed voyage", completed, hint.StartVoyage},
		{"full disk", fmt.Errorf("write: %w", syscall.ENOSPC), hint.FreeSpace},
		{"no hint", errors.New("plain"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			h := helm.HintOf(tt.err)
			assert.Equal(t, tt.want, h.Kind)
			if h.Kind != "" {
				assert.NotEmpty(t, h.Text)
				assert.NotContains(t, tt.err.Error(), h.Text, "the message leaves the h out")
			}
		})
	}

	var ve *helm.VoyageError
	require.ErrorAs(t, emptySlate, &ve)
	assert.Equal(t, "take bearing", ve.Op)
	assert.Equal(t, v.ID(), ve.Voyage)
	assert.ErrorIs(t, ve.Err, helm.ErrEmptySlate)
	assert.Equal(t, "take bearing on voyage "+v.ID()+": slate is empty: a bearing needs at least one observation", ve.Error())
}
