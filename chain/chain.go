// Package chain is helm's tamper-evident hash chain: one BLAKE3 chain over
// a voyage's logical records, the same in every store (segment files,
// JetStream units), every export archive and every compaction generation.
//
// The chain starts at a genesis that commits to the voyage's id and links
// each record by its seq, its length and its BLAKE3 digest:
//
//	genesis = BLAKE3("helm chain 1\x00" ‖ voyage id)
//	link(n) = BLAKE3(link(n-1) ‖ le64(seq) ‖ le64(len) ‖ BLAKE3(record))
//
// Linking the digest rather than the bytes lets a store drop a record's
// bytes (a jettisoned artifact's evidence) and keep its digest, so the
// chain still checks without them.
//
// A Head is where a chain stands: the seq of its last record and the link
// after it, printed as SEQ:HEX. Anyone can recompute a chain, so a head
// proves nothing alone; a head held outside the home (a commit trailer, a
// pull request body, a pasted line) is a witness: an edit, truncation or
// rollback of any record at or below it changes the link at its seq.
package chain

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
	"lukechampine.com/blake3/guts"
)

// Size is the length of a link in bytes.
const Size = 32

// Hash is one link of a chain, or a record's digest.
type Hash [Size]byte

// String returns the 64 lowercase hex digits of h.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// genesisTag separates helm's chain from any other BLAKE3 use of an id.
const genesisTag = "helm chain 1\x00"

// Genesis returns the link before a voyage's first record.
func Genesis(voyage string) Hash {
	d := blake3.New()
	d.WriteString(genesisTag)
	d.WriteString(voyage)
	var h Hash
	d.Sum(h[:0])
	return h
}

// Digest returns the BLAKE3 digest of a record.
//
// Two implementations of one function: up to one chunk (most records, and
// every link's input), sumChunk; above it, zeebo/blake3, whose SIMD
// hashes several chunks at once. TestDigestIsTheSameBLAKE3EitherWay checks
// that they agree.
func Digest(record []byte) Hash {
	if len(record) <= guts.ChunkSize {
		return sumChunk(record)
	}
	return blake3.Sum256(record)
}

// sumChunk returns the BLAKE3 hash of b, at most one chunk long: the
// chunk's blocks compressed in turn, the last one as the root, with
// lukechampine.com/blake3's compression function. zeebo/blake3 takes
// its streaming path for such an input and compresses the root twice:
// this measured 1.2–1.4× its speed on 80 to 1,024 bytes. (It keeps b on
// the caller's stack, where lukechampine.com/blake3's Sum256 moves it to
// the heap.)
func sumChunk(b []byte) Hash {
	n := guts.CompressChunk(b, &guts.IV, 0, 0)
	n.Flags |= guts.FlagRoot
	out := guts.WordsToBytes(guts.CompressNode(n))
	return Hash(out[:Size])
}

// Next returns the link after the record at seq, of length n and digest
// digest, continued from prev.
func Next(prev Hash, seq uint64, n int, digest Hash) Hash {
	var b [Size + 16 + Size]byte
	copy(b[:], prev[:])
	binary.LittleEndian.PutUint64(b[Size:], seq)
	binary.LittleEndian.PutUint64(b[Size+8:], uint64(n))
	copy(b[Size+16:], digest[:])
	return sumChunk(b[:])
}

// Link returns the link after record at seq, continued from prev.
func Link(prev Hash, seq uint64, record []byte) Hash {
	return Next(prev, seq, len(record), Digest(record))
}

// Head is where a chain stands: the seq of its last record and the link
// after it. The head of an empty chain is seq 0 and the genesis.
type Head struct {
	Seq  uint64
	Hash Hash
}

// String returns the head as helm prints it everywhere: SEQ:HEX, the
// decimal seq and the 64 lowercase hex digits of the link.
func (h Head) String() string { return strconv.FormatUint(h.Seq, 10) + ":" + h.Hash.String() }

// Parse reads a head printed by Head.String.
func Parse(s string) (Head, error) {
	seq, hx, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Head{}, fmt.Errorf("chain head %q: want SEQ:HEX (decimal seq, colon, 64 lowercase hex)", s)
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil || seq != strconv.FormatUint(n, 10) {
		return Head{}, fmt.Errorf("chain head %q: seq %q is not a decimal number", s, seq)
	}
	h, err := parseHash(hx)
	if err != nil {
		return Head{}, fmt.Errorf("chain head %q: %w", s, err)
	}
	return Head{Seq: n, Hash: h}, nil
}

func parseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*Size || strings.ToLower(s) != s {
		return h, errors.New("the hash must be 64 lowercase hex digits")
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, errors.New("the hash must be 64 lowercase hex digits")
	}
	return h, nil
}

type headJSON struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// MarshalJSON encodes the head as {"seq":N,"hash":"HEX"}.
func (h Head) MarshalJSON() ([]byte, error) {
	return json.Marshal(headJSON{Seq: h.Seq, Hash: h.Hash.String()})
}

// UnmarshalJSON decodes {"seq":N,"hash":"HEX"}.
func (h *Head) UnmarshalJSON(b []byte) error {
	var j headJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("chain head: %w", err)
	}
	hash, err := parseHash(j.Hash)
	if err != nil {
		return fmt.Errorf("chain head %s: %w", b, err)
	}
	*h = Head{Seq: j.Seq, Hash: hash}
	return nil
}

// TrailerKey is the git trailer helm puts on every commit it makes, and
// the line it puts in every pull request, issue and comment it creates.
const TrailerKey = "Helm-Voyage"

// Trailer returns the trailer line naming voyage at head:
// "Helm-Voyage: <voyage id> <SEQ>:<HEX>".
func Trailer(voyage string, h Head) string { return TrailerKey + ": " + TrailerValue(voyage, h) }

// TrailerValue returns a trailer's value: "<voyage id> <SEQ>:<HEX>".
func TrailerValue(voyage string, h Head) string { return voyage + " " + h.String() }

// ParseTrailerValue reads a trailer's value written by TrailerValue.
func ParseTrailerValue(v string) (voyage string, h Head, err error) {
	id, head, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || id == "" {
		return "", Head{}, fmt.Errorf("%s trailer %q: want \"<voyage id> <SEQ>:<HEX>\"", TrailerKey, v)
	}
	h, err = Parse(head)
	if err != nil {
		return "", Head{}, fmt.Errorf("%s trailer: %w", TrailerKey, err)
	}
	return id, h, nil
}
