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
	_, missingWho := v.TakeBearing(ctx, "r", helm.Who{Identity: "x"}, nil)
	require.NoError(t, v.Complete(ctx, helm.OutcomeCompleted, "done", who))
	_, completed := v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)

	tests := []struct {
		name string
		err  error
		want helm.HintKind
	}{
		{"empty slate", emptySlate, helm.HintObserve},
		{"no such bearing", noBearing, helm.HintReadLogbook},
		{"not on the slate", notOnSlate, helm.HintReadSlate},
		{"no such voyage", noVoyage, helm.HintListVoyages},
		{"no such artifact", noArtifact, helm.HintListArtifacts},
		{"missing role and method", missingWho, helm.HintGiveWho},
		{"completed voyage", completed, helm.HintStartVoyage},
		{"full disk", fmt.Errorf("write: %w", syscall.ENOSPC), helm.HintFreeSpace},
		{"no hint", errors.New("plain"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			hint := helm.HintOf(tt.err)
			assert.Equal(t, tt.want, hint.Kind)
			if hint.Kind != "" {
				assert.NotEmpty(t, hint.Text)
				assert.NotContains(t, tt.err.Error(), hint.Text, "the message leaves the hint out")
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
