package natsstore

// The message format.
//
// A voyage's log is the subject helm.<home>.v.<voyage> of the home's
// stream HELM_<home>. Each commit unit (the records of one AppendIf) is one
// message, so JetStream's own atomicity of a message makes a unit whole or
// absent. The message's payload holds the records and, from version 2,
// the voyage's hash chain after them:
//
//	+---------+-----------------+----------------------------------------------+------------+
//	| version | count (uvarint) | count × ( length (uvarint) | record bytes )  | link       |
//	+---------+-----------------+----------------------------------------------+------------+
//	 1 byte: 2                                                                   32 bytes
//
// link is the BLAKE3 chain's link after the unit's last record (package
// chain: the one chain of a voyage, the same in every store and export),
// so the voyage's head is its last unit's Helm-Seq + Helm-Count - 1 and
// link, read with one request. Version 1, written by helm before the
// BLAKE3 chain, is the same without the link; helm still reads it and
// computes the chain over its records (the chain runs over the records,
// not the units, so a voyage's head is the same whichever version holds
// them). A voyage may hold version 1 units and then version 2 units (an
// older voyage that a newer helm appends to), never a version 1 unit after
// a version 2 one: a newer helm writes version 2 only, and an older one
// refuses to append after a payload it cannot read.
//
// The message's headers say where the unit belongs in the voyage:
//
//	Helm-Seq:    the sequence number of the unit's first record (decimal)
//	Helm-Count:  the number of records (decimal), the payload's count
//	Helm-Chain:  the CRC32C chain's sum after the unit's last record (8 hex digits)
//	Helm-Unit:   the unit's number on the subject, from 1 (decimal)
//
// The CRC32C chain is the segment log's (segment.ChainGenesis of the
// voyage id, then segment.ChainNext over each record), on every unit of
// either version. A reader checks, message by message, that each unit
// begins where the previous one ended (Helm-Seq), that the payload holds
// Helm-Count records exactly, that the CRC32C chain continued over them is
// Helm-Chain and, for a version 2 unit, that the BLAKE3 chain continued
// over them is its link: a message edited, dropped, reordered or
// published onto the subject by something other than helm breaks one of
// them. Anyone with the stream's credentials can recompute both chains: a
// head held elsewhere (a witness) is what shows such an edit.
//
// Helm-Unit numbers a voyage's messages, so that the number of messages
// the stream holds on the subject, which one request gives for every
// voyage, says whether units are missing before the last one: a voyage
// listed whose subject holds fewer messages than its last unit's number
// lost units, wherever they were. Voyages written before the header
// existed have it on none of their units, and helm goes on writing them
// without it (a number counted then could count a loss in); a voyage has
// it on every unit or on none, and a reader checks that the numbers run
// from 1 without a gap.
//
// The framing is checked by decoding it exactly (every uvarint in its
// shortest form, every length within the payload, nothing left over), so
// a payload has one encoding.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/helmlog/helm/chain"
)

// payloadVersion is the version byte of the payload format drawn above,
// the one helm writes. A payload of a later version is refused: its error
// (a *store.DamageError, as this helm cannot read it) gives the reason
// "written by a newer helm", so that the fix is an upgrade, not a
// restore. A payload of version payloadCRC (no link) is read.
const (
	payloadVersion = 2
	payloadCRC     = 1
)

// The headers of a unit's message.
const (
	hdrSeq   = "Helm-Seq"
	hdrCount = "Helm-Count"
	hdrChain = "Helm-Chain"
	hdrUnit  = "Helm-Unit"
)

// headerRoom bounds what the headers of a unit's message take on the wire
// (NATS/1.0 line, helm's four headers, and the Nats-Msg-Id,
// Nats-Expected-Stream and Nats-Expected-Last-Subject-Sequence the
// publish adds: 467 bytes at most, with a home's name of 200): a unit
// whose payload does not fit in the server's max_payload less this is
// refused whole.
const headerRoom = 512

var (
	errNewerFormat = errors.New("written by a newer helm (payload version unknown)")
)

// payloadSize returns the size of the payload encodeUnit makes of records.
func payloadSize(records [][]byte) int {
	n := 1 + uvarintLen(uint64(len(records)))
	for _, r := range records {
		n += uvarintLen(uint64(len(r))) + len(r)
	}
	return n + chain.Size
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// encodeUnit returns the payload of a unit of records, after which the
// chain's link is link.
func encodeUnit(records [][]byte, link chain.Hash) []byte {
	b := make([]byte, 0, payloadSize(records))
	b = append(b, payloadVersion)
	b = binary.AppendUvarint(b, uint64(len(records)))
	for _, r := range records {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return append(b, link[:]...)
}

// unit is a decoded payload: its records, as sub-slices of it, and the
// chain's link after the last, if its version stores it (linked).
type unit struct {
	records [][]byte
	link    chain.Hash
	linked  bool
}

// decodeUnit decodes a unit's payload, of either version.
func decodeUnit(b []byte) (unit, error) {
	var u unit
	if len(b) == 0 {
		return u, errors.New("empty payload")
	}
	switch {
	case b[0] == payloadVersion:
		if len(b) < 1+chain.Size {
			return u, errors.New("the payload is shorter than its chain link")
		}
		u.linked = true
		copy(u.link[:], b[len(b)-chain.Size:])
		b = b[:len(b)-chain.Size]
	case b[0] > payloadVersion:
		return u, fmt.Errorf("%w: version %d", errNewerFormat, b[0])
	case b[0] != payloadCRC:
		return u, fmt.Errorf("payload version %d is not a helm unit", b[0])
	}
	b = b[1:]
	count, n := binary.Uvarint(b)
	if n <= 0 || n != uvarintLen(count) {
		return u, errors.New("bad record count")
	}
	b = b[n:]
	// Every record takes a byte of length at least: a count beyond that
	// is damage, and must not size an allocation.
	if count > uint64(len(b)) {
		return u, fmt.Errorf("record count %d exceeds the payload", count)
	}
	u.records = make([][]byte, 0, count)
	for i := range count {
		l, n := binary.Uvarint(b)
		if n <= 0 || n != uvarintLen(l) {
			return u, fmt.Errorf("bad length of record %d of the unit", i+1)
		}
		b = b[n:]
		if l > uint64(len(b)) {
			return u, fmt.Errorf("record %d of the unit: length %d exceeds the payload", i+1, l)
		}
		u.records = append(u.records, b[:l:l])
		b = b[l:]
	}
	if len(b) != 0 {
		return u, fmt.Errorf("%d bytes after the unit's last record", len(b))
	}
	return u, nil
}

// unitHeader is what a unit's headers say.
type unitHeader struct {
	first, count uint64
	chain        uint32
	unit         uint64 // 0: a unit written before Helm-Unit existed
}

func (h unitHeader) set(hdr nats.Header) {
	hdr.Set(hdrSeq, strconv.FormatUint(h.first, 10))
	hdr.Set(hdrCount, strconv.FormatUint(h.count, 10))
	hdr.Set(hdrChain, fmt.Sprintf("%08x", h.chain))
	if h.unit != 0 {
		hdr.Set(hdrUnit, strconv.FormatUint(h.unit, 10))
	}
}

// last returns the sequence number of the unit's last record.
func (h unitHeader) last() uint64 { return h.first + h.count - 1 }

// parseHeader reads a unit's headers.
func parseHeader(hdr nats.Header) (unitHeader, error) {
	var h unitHeader
	var err error
	if h.first, err = strconv.ParseUint(hdr.Get(hdrSeq), 10, 64); err != nil || h.first == 0 {
		return h, fmt.Errorf("header %s is %q, not a record's sequence number", hdrSeq, hdr.Get(hdrSeq))
	}
	if h.count, err = strconv.ParseUint(hdr.Get(hdrCount), 10, 64); err != nil || h.count == 0 || h.first+h.count < h.first {
		return h, fmt.Errorf("header %s is %q, not a count of records", hdrCount, hdr.Get(hdrCount))
	}
	c := hdr.Get(hdrChain)
	sum, err := strconv.ParseUint(c, 16, 32)
	if err != nil || len(c) != 8 {
		return h, fmt.Errorf("header %s is %q, not a chain sum", hdrChain, c)
	}
	h.chain = uint32(sum)
	if u, ok := hdr[hdrUnit]; ok {
		if h.unit, err = strconv.ParseUint(hdr.Get(hdrUnit), 10, 64); err != nil || h.unit == 0 || len(u) != 1 {
			return h, fmt.Errorf("header %s is %q, not a unit's number", hdrUnit, hdr.Get(hdrUnit))
		}
	}
	return h, nil
}
