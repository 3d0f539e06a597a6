package artifact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeAddressesTheUncompressedBytes(t *testing.T) {
	t.Parallel()
	data := []byte(`{"kind":"x","text":"hello hello hello hello"}`)
	e := Encode(data)
	assert.Equal(t, Hash(data), e.Hash)
	assert.Len(t, e.Hash, 2*hashLen)
	assert.Equal(t, int64(len(data)), e.Size)
	assert.True(t, e.Inline(), "a small artifact is a blob record")
	got, err := ReadBlob(Ref{Hash: e.Hash, Size: e.Size, StoredSize: int64(len(e.Compressed)), Blob: 3}, BlobRecord(e), "events")
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.False(t, (&Encoded{Compressed: make([]byte, InlineMax+1)}).Inline(), "a large one goes to the pack")
}

// TestBlobsVerifyThemselves: a blob record whose bytes do not answer its
// address is a *DamageError naming the record, whatever is wrong with it.
func TestBlobsVerifyThemselves(t *testing.T) {
	t.Parallel()
	data := []byte(`{"kind":"x","text":"hello"}`)
	e := Encode(data)
	good := BlobRecord(e)
	assert.True(t, IsBlob(good))
	ref := Ref{Hash: e.Hash, Size: e.Size, StoredSize: int64(len(good) - 1), Blob: 7}

	other := BlobRecord(Encode([]byte(`{"kind":"x","text":"HELLO"}`)))
	tests := []struct {
		name   string
		record []byte
		ref    Ref
		want   string
	}{
		{"missing record", nil, ref, "no such record"},
		{"an event, not a blob", append([]byte{0x01}, good[1:]...), ref, "not an artifact blob"},
		{"size differs", good[:len(good)-1], ref, "the event says"},
		{"not zstd", append([]byte{blobFormat}, make([]byte, len(good)-1)...), ref, "zstd"},
		{"other content", other, Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: int64(len(other) - 1), Blob: 7}, "BLAKE3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadBlob(tt.ref, tt.record, "events")
			require.ErrorIs(t, err, ErrDamaged)
			var de *DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, uint64(7), de.Record)
			assert.Equal(t, "events", de.File)
			assert.Equal(t, e.Hash, de.Hash)
			assert.Contains(t, de.Reason, tt.want)
			assert.Contains(t, err.Error(), "record 7")
		})
	}
}

// The format byte tells blobs from both kinds of event record.
func TestBlobsAreToldFromEventsByTheirFirstByte(t *testing.T) {
	t.Parallel()
	for _, rec := range [][]byte{{0x01, 0x03}, []byte(`{"type":"observed"}`), []byte(" {}"), nil} {
		assert.False(t, IsBlob(rec), "%q", rec)
	}
}

// Expand gives back an artifact's bytes from its stored form, and refuses
// stored bytes that do not answer the address.
func TestExpandChecksTheAddress(t *testing.T) {
	t.Parallel()
	e := Encode([]byte("widget init"))
	ref := Ref{Hash: e.Hash, Size: e.Size, StoredSize: int64(len(e.Compressed))}
	got, err := Expand(ref, e.Compressed, "objects/x")
	require.NoError(t, err)
	assert.Equal(t, "widget init", string(got))
	other := Encode([]byte("something else"))
	_, err = Expand(ref, other.Compressed, "objects/x")
	var de *DamageError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "objects/x", de.File)
	assert.ErrorIs(t, err, ErrDamaged)
	_, err = Expand(ref, []byte("not zstd"), "objects/x")
	assert.ErrorIs(t, err, ErrDamaged)
}
