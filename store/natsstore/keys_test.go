package natsstore

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/store"
)

// An encrypted copy opens under its key, for its home, voyage and
// address only; a copy changed by a bit, moved to another name, opened
// with another key, of another form or cut short is damage naming the
// artifact, never bytes.
func TestSealedCopyOpensOnlyAsItWasSealed(t *testing.T) {
	s := &Store{home: "h", names: namesOf("h"), url: "nats://127.0.0.1:4222"}
	a := &artifacts{s: s, voyage: "v"}
	key := bytes.Repeat([]byte{7}, keyBytes)
	hash := "ab12"
	stored := []byte("the zstd frame of a customer's data")
	sealed, err := a.seal(key, hash, stored)
	require.NoError(t, err)
	assert.Equal(t, sealedForm, sealed[0])
	assert.False(t, bytes.Contains(sealed, []byte("customer")), "the copy holds no plaintext")
	again, err := a.seal(key, hash, stored)
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "a nonce each")
	got, err := a.open(key, hash, sealed)
	require.NoError(t, err)
	assert.Equal(t, stored, got)

	flipped := bytes.Clone(sealed)
	flipped[len(flipped)/2] ^= 1
	other := bytes.Repeat([]byte{8}, keyBytes)
	for _, tc := range []struct {
		name   string
		a      *artifacts
		key    []byte
		hash   string
		sealed []byte
	}{
		{"a bit flipped", a, key, hash, flipped},
		{"another key", a, other, hash, sealed},
		{"another address", a, key, "cd34", sealed},
		{"another voyage", &artifacts{s: s, voyage: "w"}, key, hash, sealed},
		{"another home", &artifacts{s: &Store{home: "g", names: namesOf("g")}, voyage: "v"}, key, hash, sealed},
		{"another form", a, key, hash, append([]byte{0x28}, sealed[1:]...)},
		{"cut short", a, key, hash, sealed[:10]},
		{"empty", a, key, hash, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.open(tc.key, tc.hash, tc.sealed)
			require.ErrorIs(t, err, store.ErrDamaged)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), tc.hash)
		})
	}
}

// FuzzOpenSealed: whatever bytes the store holds where a sealed copy
// should be, open returns the bytes sealed under the key and address, or
// damage; it never panics, and never returns bytes that were not sealed.
func FuzzOpenSealed(f *testing.F) {
	s := &Store{home: "h", names: namesOf("h"), url: "nats://127.0.0.1:4222"}
	a := &artifacts{s: s, voyage: "v"}
	key := bytes.Repeat([]byte{7}, keyBytes)
	sealed, err := a.seal(key, "ab12", []byte("stored bytes"))
	require.NoError(f, err)
	f.Add(sealed)
	f.Add([]byte{})
	f.Add([]byte{sealedForm})
	f.Add(append([]byte{sealedForm}, make([]byte, 40)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := a.open(key, "ab12", data)
		if err != nil {
			var de *store.DamageError
			require.ErrorAs(t, err, &de, "what does not open is damage")
			return
		}
		assert.Equal(t, []byte("stored bytes"), got, "only what was sealed opens")
	})
}
