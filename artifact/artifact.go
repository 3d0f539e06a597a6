package artifact

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

var (
	// ErrDamaged is matched by every *DamageError: an artifact's stored
	// bytes do not answer its address.
	ErrDamaged = errors.New("artifact damaged")
)

// DamageError says where an artifact's stored bytes are and why they do
// not answer its address. Exactly one of Offset (a pack frame) and Record
// (a blob record) places it in File.
type DamageError struct {
	Hash   string // the artifact's address
	File   string // the pack file, or the event log's directory
	Offset int64  // the pack frame's offset in File, when Record is 0
	Record uint64 // the blob record's sequence number in the log, or 0
	Reason string
}

func (e *DamageError) Error() string {
	if e.Record != 0 {
		return fmt.Sprintf("damaged artifact %s in %s, record %d: %s", e.Hash, e.File, e.Record, e.Reason)
	}
	return fmt.Sprintf("damaged artifact %s in %s at offset %d: %s", e.Hash, e.File, e.Offset, e.Reason)
}

// Unwrap returns ErrDamaged.
func (e *DamageError) Unwrap() error { return ErrDamaged }

// Ref is what a voyage records of a stored artifact: its address, its
// sizes, and where its compressed bytes are.
type Ref struct {
	Hash       string // BLAKE3-256 of the uncompressed bytes, hex
	Size       int64  // uncompressed bytes
	StoredSize int64  // compressed bytes
	Offset     int64  // the frame's offset in the pack, when Blob is 0
	Blob       uint64 // the blob record's sequence number in the log; 0: in the pack
}

// Encoded is an artifact made ready to store: its address and, once
// Compress has run, its compressed bytes. Encoding (hashing and
// compressing) needs no lock, so callers do it before they take the log's,
// and goroutines do it in parallel rather than one after another. The
// address comes first: a voyage that holds the artifact already need not
// compress it at all.
type Encoded struct {
	Hash       string                // the address
	Size       int64                 // uncompressed bytes
	Compressed []byte                // the zstd form; nil until Compress
	data       []byte                // the bytes, until Compress
	encode     func(io.Writer) error // a streamed artifact's bytes (Stream)
}

// Prepare hashes data, a sighting's JSON, and keeps it for Compress.
func Prepare(data []byte) *Encoded {
	return &Encoded{Hash: Hash(data), Size: int64(len(data)), data: data}
}

// Encode hashes and compresses data.
func Encode(data []byte) *Encoded {
	e := Prepare(data)
	e.Compress()
	return e
}

// Compress compresses the bytes, once: a small artifact at zstd's fastest
// level (its encoder's setup dominates: the default level costs a third
// more time for 4% fewer bytes on 2 KiB of source), a large one at the
// default level. Not safe for concurrent use on one Encoded.
func (e *Encoded) Compress() {
	if e.Compressed != nil || e.encode != nil {
		return
	}
	enc := zencLarge
	if len(e.data) <= smallArtifact {
		enc = zencSmall
	}
	e.Compressed = enc().EncodeAll(e.data, make([]byte, 0, len(e.data)/2+64))
	e.data = nil
}

// Inline reports whether e is small enough to be a blob record in the
// event log (InlineMax); a larger one, or a streamed one, goes to the
// pack. It compresses e first if need be.
func (e *Encoded) Inline() bool {
	if e.encode != nil {
		return false
	}
	e.Compress()
	return len(e.Compressed) <= InlineMax
}

// Hash returns the address of data: its BLAKE3-256 hash in lower-case hex.
func Hash(data []byte) string {
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// smallArtifact is the largest artifact compressed at the fastest level.
const smallArtifact = 64 << 10

// The encoders and the decoder are shared; each holds one state per CPU
// (GOMAXPROCS when first used), so goroutines compress and decompress in
// parallel instead of queueing on one. Each is made when first used: a
// process that stores and reads no artifact makes none.
var (
	zencSmall = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		return e
	})
	zencLarge = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		return e
	})
	zdec = sync.OnceValue(func() *zstd.Decoder {
		d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(maxWhole), zstd.WithDecodeAllCapLimit(true))
		return d
	})
)

// Decompressing bytes that may be hostile (an imported archive's, a home
// another process writes to) costs what the bytes say, unless bounded: a
// frame of a few hundred bytes can declare a window of 512 MiB, or
// expand to gigabytes. So every decompression is bounded twice: by the
// window (maxWindow), and by the size the artifact's event declares (an
// artifact that decompresses to more is damaged, found as soon as it
// does).

// maxWindow is the largest zstd window an artifact is decompressed with,
// streamed: the largest helm's encoders write (8 MiB at zstd's default
// level, 4 MiB at the fastest; a single-segment frame, of at most that
// many bytes, declares its size as its window). A stream holds its window
// in memory, so a frame asking for more, which helm did not write, is
// refused rather than decompressed.
const maxWindow = 8 << 20

// maxWhole is the most the shared decoder (Load, ReadBlob, Expand)
// expands into memory at once; an artifact declared larger is expanded
// through a stream instead (expandLarge), bounded by its declared size.
const maxWhole = 64 << 20

// newStreamDecoder returns a decoder of an artifact's stored bytes read
// from r, as a stream whose window is at most maxWindow.
func newStreamDecoder(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(maxWindow))
}

// zstdReason says why decompressing failed, naming the limit when a bound
// was met.
func zstdReason(err error, ref Ref) string {
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return fmt.Sprintf("zstd: %v: its frame asks for a window or size beyond helm's limit of %d bytes (%d declared); helm writes no such frame", err, int64(maxWindow), ref.Size)
	}
	return "zstd: " + err.Error()
}

// tooLarge is the reason an artifact that decompresses to more than its
// declared size is refused.
func tooLarge(ref Ref) string {
	return fmt.Sprintf("it decompresses to more than the %d bytes its event declares (the limit)", ref.Size)
}

// maxPrealloc is the buffer allocated up front for a large artifact
// expanded whole (expandLarge), which grows to its declared size.
const maxPrealloc = 64 << 20

// expand decompresses an artifact's stored bytes and checks them against
// its address; damaged builds the error naming the place. It holds no
// more than the ref.Size bytes its event declares: a byte more is
// refused as soon as it is decompressed.
func expand(ref Ref, stored []byte, damaged func(reason string) error) ([]byte, error) {
	if ref.Size < 0 {
		return nil, damaged(fmt.Sprintf("its event declares %d bytes", ref.Size))
	}
	if ref.Size > maxWhole {
		return expandLarge(ref, stored, damaged)
	}
	// The decoder writes no more than the buffer holds: one byte more
	// than declared shows that there are too many.
	data, err := zdec().DecodeAll(stored, make([]byte, 0, ref.Size+1))
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, damaged(tooLarge(ref))
	}
	if err != nil {
		return nil, damaged(zstdReason(err, ref))
	}
	if int64(len(data)) > ref.Size {
		return nil, damaged(tooLarge(ref))
	}
	if got := Hash(data); got != ref.Hash {
		return nil, damaged("BLAKE3 of the content is " + got)
	}
	return data, nil
}

// expandLarge is expand for an artifact declared larger than maxWhole:
// streamed into a buffer that grows as the bytes come, to ref.Size at
// most.
func expandLarge(ref Ref, stored []byte, damaged func(reason string) error) ([]byte, error) {
	dec, err := newStreamDecoder(bytes.NewReader(stored))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	buf := bytes.NewBuffer(make([]byte, 0, maxPrealloc))
	if _, err := io.Copy(buf, io.LimitReader(dec, ref.Size+1)); err != nil {
		return nil, damaged(zstdReason(err, ref))
	}
	if int64(buf.Len()) > ref.Size {
		return nil, damaged(tooLarge(ref))
	}
	data := buf.Bytes()
	if got := Hash(data); got != ref.Hash {
		return nil, damaged("BLAKE3 of the content is " + got)
	}
	return data, nil
}

// Expand decompresses an artifact's stored bytes, as another store keeps
// them (package store), and checks them against the address ref names.
// where names the place they were read from (a file, an object), for
// the *DamageError that reports bytes that do not answer it.
func Expand(ref Ref, stored []byte, where string) ([]byte, error) {
	return expand(ref, stored, func(reason string) error {
		return &DamageError{Hash: ref.Hash, File: where, Reason: reason}
	})
}

// IsBlob reports whether a log record is an artifact's blob record, not an
// event.
func IsBlob(record []byte) bool { return len(record) > 0 && record[0] == blobFormat }

// BlobRecord returns the blob record holding e, to be appended to the
// event log in the same batch as the event that names it.
func BlobRecord(e *Encoded) []byte {
	e.Compress()
	return append([]byte{blobFormat}, e.Compressed...)
}

// ReadBlob returns the bytes of the artifact ref names from record, the
// log record numbered ref.Blob (nil if the log has no such record), after
// checking them against the address. dir is the log's directory, for
// errors.
func ReadBlob(ref Ref, record []byte, dir string) ([]byte, error) {
	damaged := func(reason string) error {
		return &DamageError{Hash: ref.Hash, File: dir, Record: ref.Blob, Reason: reason}
	}
	switch {
	case record == nil:
		return nil, damaged("the log has no such record")
	case !IsBlob(record):
		return nil, damaged("the record is not an artifact blob")
	case int64(len(record)-1) != ref.StoredSize:
		return nil, damaged(fmt.Sprintf("blob of %d bytes, the event says %d", len(record)-1, ref.StoredSize))
	}
	return expand(ref, record[1:], damaged)
}
