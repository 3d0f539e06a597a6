package projection

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackAStateFoldedWithADecoderOutlivesTheDecodersReuse: the fold
// keeps values of the last event of each type the Decoder reuses (the
// last observation, bearing and artifact event, which no later event of
// the fold overwrites); decoding more events afterwards with the same
// Decoder (its reused events written over) must leave the State as a
// fold with Decode gives it.
func TestAttackAStateFoldedWithADecoderOutlivesTheDecodersReuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		events []*Event
	}{
		{"a typical voyage", typicalMix(50)},
		{"a random voyage", randomVoyage(rand.New(rand.NewPCG(35, 5)), 2000)},
		{"every type", append(sampleEvents(), oddEvents()...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			records := encodeAll(t, tc.events)
			plain, reused := &State{}, &State{}
			var dec Decoder
			for i, data := range records {
				e1, err1 := Decode(data)
				e2, err2 := dec.Decode(data)
				require.Equal(t, err1 == nil, err2 == nil)
				if err1 != nil {
					continue
				}
				seq := uint64(i + 1)
				require.Equal(t, plain.Apply(seq, e1) == nil, reused.Apply(seq, e2) == nil)
			}
			// The Decoder's reused events, written over by other events
			// of their types.
			for _, data := range encodeAll(t, typicalMix(3)) {
				_, err := dec.Decode(data)
				require.NoError(t, err)
			}
			assert.Equal(t, plain, reused)
		})
	}
}
