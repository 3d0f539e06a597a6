package natsstore

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// snapshotObjectOf builds a snapshot object as PutSnapshot writes it.
func snapshotObjectOf(t testing.TB, sp snapshotPoint, views []byte) []byte {
	pj, err := json.Marshal(sp)
	require.NoError(t, err)
	obj := append([]byte(snapshotMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(pj)))...)
	obj = append(obj, pj...)
	return append(obj, snapshotEncoder().EncodeAll(views, nil)...)
}

func TestParseSnapshotSaysWhyAnObjectIsNotOne(t *testing.T) {
	good := snapshotPoint{Head: chain.Head{Seq: 7}, Stream: 3, Chain: 9, Unit: 2}
	obj := snapshotObjectOf(t, good, []byte("the views"))
	tests := []struct {
		name   string
		obj    []byte
		reason string
	}{
		{"a snapshot", obj, ""},
		{"empty", nil, "not a snapshot of this version"},
		{"another version's magic", append([]byte("HELMJSN2"), obj[8:]...), "not a snapshot of this version"},
		{"a length past the end", append(append([]byte(snapshotMagic), 0xff, 0xff, 0xff, 0x7f), obj[12:]...), "its point runs past its end"},
		{"the largest length", append(append([]byte(snapshotMagic), 0xff, 0xff, 0xff, 0xff), obj[12:]...), "its point runs past its end"},
		{"a point that is not JSON", append(append([]byte(snapshotMagic), 2, 0, 0, 0), "{x"...), "its point: "},
		{"a point naming no record", snapshotObjectOf(t, snapshotPoint{Stream: 3}, nil), "its point names no record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, views, reason := parseSnapshot(tt.obj)
			if tt.reason == "" {
				require.Empty(t, reason)
				assert.Equal(t, good, sp)
				data, err := snapshotDecoder().DecodeAll(views, nil)
				require.NoError(t, err)
				assert.Equal(t, "the views", string(data))
				return
			}
			assert.Contains(t, reason, tt.reason)
			assert.Nil(t, views)
		})
	}
}

// FuzzParseSnapshot: any object, as a forger could put it, is parsed
// without a panic, and what parses names a record and its views lie
// inside the object.
func FuzzParseSnapshot(f *testing.F) {
	f.Add(snapshotObjectOf(f, snapshotPoint{Head: chain.Head{Seq: 7}, Stream: 3, Chain: 9, Unit: 2}, []byte("views")))
	f.Add([]byte(snapshotMagic))
	f.Add(append([]byte(snapshotMagic), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, obj []byte) {
		sp, views, reason := parseSnapshot(obj)
		if reason != "" {
			return
		}
		if sp.Head.Seq == 0 || sp.Stream == 0 || len(views) > len(obj) {
			t.Fatalf("parsed %+v with %d bytes of views from %d bytes", sp, len(views), len(obj))
		}
		snapshotDecoder().DecodeAll(views, nil) // bounded by maxSnapshot; an error is a refusal
	})
}
