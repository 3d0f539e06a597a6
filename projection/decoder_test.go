package projection

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// foldBoth folds records into two States, one decoding each record with
// Decode, the other with one Decoder, and returns them with the errors
// each met (Decode's or Apply's, per record).
func foldBoth(t testing.TB, records [][]byte) (plain, reused *State, plainErrs, reusedErrs []string) {
	plain, reused = &State{}, &State{}
	var dec Decoder
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for i, data := range records {
		seq := uint64(i + 1)
		e1, err1 := Decode(data)
		e2, err2 := dec.Decode(data)
		require.Equal(t, errText(err1), errText(err2), "record %d", seq)
		if err1 != nil {
			plainErrs, reusedErrs = append(plainErrs, errText(err1)), append(reusedErrs, errText(err2))
			continue
		}
		require.Equal(t, e1, e2, "record %d decodes as Decode decodes it", seq)
		plainErrs = append(plainErrs, errText(plain.Apply(seq, e1)))
		reusedErrs = append(reusedErrs, errText(reused.Apply(seq, e2)))
	}
	return plain, reused, plainErrs, reusedErrs
}

func encodeAll(t testing.TB, events []*Event) [][]byte {
	out := make([][]byte, len(events))
	for i, e := range events {
		data, err := Encode(e)
		require.NoError(t, err)
		out[i] = data
	}
	return out
}

func TestADecoderFoldsTheSameStateAsDecode(t *testing.T) {
	t.Parallel()
	big := typicalMix(1)
	big[1].Artifact.Method = string(make([]byte, arenaLarge+1)) // a record with a copy of its own
	for _, tc := range []struct {
		name    string
		records [][]byte
	}{
		{"every type", encodeAll(t, append(sampleEvents(), oddEvents()...))},
		{"a typical voyage over many arena blocks", encodeAll(t, typicalMix(400))},
		{"a random voyage", encodeAll(t, randomVoyage(rand.New(rand.NewPCG(3, 4)), 3000))},
		{"a record larger than an arena block's share", encodeAll(t, big)},
		{"JSON records", func() [][]byte {
			var out [][]byte
			for _, e := range sampleEvents() {
				data, err := EncodeJSON(e)
				require.NoError(t, err)
				out = append(out, data)
			}
			return out
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plain, reused, pe, re := foldBoth(t, tc.records)
			assert.Equal(t, pe, re, "the same errors")
			assert.Equal(t, plain, reused, "the same views")
		})
	}
}

func TestAnAppendToARawValueFromADecoderLeavesTheStringsAfterIt(t *testing.T) {
	t.Parallel()
	var dec Decoder
	events := typicalMix(1)
	obs, next := events[2], events[3] // an observation, then an artifact event
	require.Equal(t, Observed, obs.Type)
	first, err := Encode(obs)
	require.NoError(t, err)
	second, err := Encode(next)
	require.NoError(t, err)

	e, err := dec.Decode(first)
	require.NoError(t, err)
	mark, label := e.Obs.Mark, e.Obs.Label // the label follows the mark in the record
	assert.Equal(t, len(mark), cap(mark), "the mark's capacity ends with it")
	e2, err := dec.Decode(second)
	require.NoError(t, err)
	hash := e2.Artifact.Hash
	mark = append(mark, `,"x":1}`...) // a copy: the arena is not written
	assert.Equal(t, string(obs.Obs.Mark)+`,"x":1}`, string(mark))
	assert.Equal(t, obs.Obs.Label, label, "the string after the mark is intact")
	assert.Equal(t, next.Artifact.Hash, hash)
}

// FuzzDecoder decodes two records with one Decoder, as a replay does, and
// with Decode: the events, the errors and the States folded from them
// must be the same.
func FuzzDecoder(f *testing.F) {
	samples := encodeAll(f, append(sampleEvents(), oddEvents()...))
	for i := range samples {
		f.Add(samples[i], samples[(i+1)%len(samples)])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		plain, reused, pe, re := foldBoth(t, [][]byte{a, b})
		require.Equal(t, pe, re)
		require.Equal(t, plain, reused)
	})
}
