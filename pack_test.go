package helm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/projection"
)

// TestBlobsVerifyThemselves: a blob record whose bytes do not answer its
// address is an error naming the record, whatever is wrong with it.
func TestBlobsVerifyThemselves(t *testing.T) {
	data := []byte(`{"kind":"x","text":"hello"}`)
	good := append([]byte{blobFormat}, compress(data)...)
	ref := &projection.ArtifactRef{Hash: hashArtifact(data), Size: int64(len(data)), StoredSize: int64(len(good) - 1), Blob: 7}

	got, err := checkBlob(ref, good, "events")
	require.NoError(t, err)
	assert.Equal(t, data, got)

	other := append([]byte{blobFormat}, compress([]byte(`{"kind":"x","text":"HELLO"}`))...)
	tests := []struct {
		name string
		blob []byte
		ref  projection.ArtifactRef
		want string
	}{
		{"missing record", nil, *ref, "no such record"},
		{"an event, not a blob", append([]byte{0x01}, good[1:]...), *ref, "not an artifact blob"},
		{"size differs", good[:len(good)-1], *ref, "the event says"},
		{"not zstd", append([]byte{blobFormat}, make([]byte, len(good)-1)...), *ref, "zstd"},
		{"other content", other, projection.ArtifactRef{Hash: ref.Hash, Size: ref.Size, StoredSize: int64(len(other) - 1), Blob: 7}, "BLAKE3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkBlob(&tt.ref, tt.blob, "events")
			require.ErrorIs(t, err, ErrArtifactDamaged)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "record 7")
		})
	}
}
