package projection

import (
	"errors"
	"unsafe"

	"github.com/helmlog/helm/logbook"
)

// A Decoder decodes the records of one replay (opening a voyage folds
// every event of its log) without an allocation per event, where Decode
// makes two or three: the bytes of the records it decodes are copied into
// large blocks that its strings share (Decode copies each record into a
// string of its own), and the event of the common types (artifact events,
// observations, bearings) is one the Decoder reuses.
//
// The *Event Decode returns, and the payload it points to, are valid only
// until the next call: a caller that keeps the event (rather than folding
// it into a State, which copies what it keeps) uses the package's Decode.
// The strings and raw values in it stay valid. A Decoder is not safe for
// concurrent use; its zero value is ready.
type Decoder struct {
	arena    []byte // records copied so far; never written below len
	artifact boxed[ArtifactRef]
	obs      boxed[logbook.ObservationRecord]
	bearing  boxed[logbook.Bearing]
}

// Arena sizes: a block holds the copies of about a hundred typical events,
// so that a value a State keeps (an artifact's hash) holds at most one
// block in memory; a record larger than arenaLarge gets a copy of its own,
// as Decode gives it.
const (
	arenaBlock = 32 << 10
	arenaLarge = arenaBlock / 8
)

// Decode decodes one record as the package's Decode does, with the same
// checks and errors.
func (dc *Decoder) Decode(data []byte) (*Event, error) {
	if len(data) == 0 {
		return nil, errors.New("decode event: empty record")
	}
	if data[0] != formatBinary {
		return Decode(data)
	}
	return decodeBinary(data, dc)
}

// keep returns the copy of data the decoded strings share: in the arena
// for a record up to arenaLarge (kept is its bytes there, capacity capped
// so that nothing appends into them), else a string of its own (kept nil).
func (dc *Decoder) keep(data []byte) (s string, kept []byte) {
	if len(data) > arenaLarge {
		return string(data), nil
	}
	if cap(dc.arena)-len(dc.arena) < len(data) {
		dc.arena = make([]byte, 0, arenaBlock)
	}
	start := len(dc.arena)
	dc.arena = append(dc.arena, data...)
	kept = dc.arena[start:len(dc.arena):len(dc.arena)]
	// The bytes below len(dc.arena) are never written again: the string
	// is as immutable as string(data) would be.
	return unsafe.String(&kept[0], len(kept)), kept
}

// box returns the event to decode a payload of type P into: r, cleared,
// when the Decoder reuses one, else a new one.
func box[P any](r *boxed[P]) *boxed[P] {
	if r == nil {
		return &boxed[P]{}
	}
	*r = boxed[P]{}
	return r
}

func (dc *Decoder) artifactBox() *boxed[ArtifactRef] {
	if dc == nil {
		return nil
	}
	return &dc.artifact
}

func (dc *Decoder) obsBox() *boxed[logbook.ObservationRecord] {
	if dc == nil {
		return nil
	}
	return &dc.obs
}

func (dc *Decoder) bearingBox() *boxed[logbook.Bearing] {
	if dc == nil {
		return nil
	}
	return &dc.bearing
}
