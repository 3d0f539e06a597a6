// Package artifact stores the evidence behind a voyage's bearings: a
// sighting's JSON, zstd-compressed and addressed by the BLAKE3 hash of the
// uncompressed bytes, stored once per voyage. It defines the two places
// those bytes live — a blob record inside the voyage's event log, and the
// pack file beside it — and checks an artifact against its address every
// time it is read.
//
// It knows bytes, not events or voyages: the facade decides which
// artifacts to store, appends the blob records to the log, and records in
// its events where each artifact went (a Ref). The pack file is written
// through segment.FS, the same durability seam as the log, so tests inject
// short writes, failed fsyncs and a full disk into it.
package artifact

// # The stored form of an artifact
//
// A sighting's JSON is zstd-compressed and stored under its address, the
// BLAKE3-256 hash of the uncompressed JSON in lower-case hex. A small one
// (compressed to at most InlineMax bytes, which is most: a 2 KiB source
// file compresses to under 1 KiB) is a blob record in the event log,
// appended in the same batch as the event that names it: one write, one
// fdatasync for the whole observation. Opening a voyage reads past blob
// records without decoding them.
//
//	blob record (the payload of one log record; the log frames and checksums it):
//
//	+--------+-----------------------------+
//	| format | zstd frame                  |
//	| 0x02   | (the compressed JSON)       |
//	| 1 byte | StoredSize bytes            |
//	+--------+-----------------------------+
//
// The format byte 0x02 begins neither kind of event record (0x01 for the
// binary form, '{' or white space for JSON), so a reader tells blobs from
// events by the first byte alone.
//
// A large one goes to the pack file beside the event log, which opening a
// voyage never reads; its frame is fdatasync'd before the event that
// refers to it is appended (a second fdatasync, small next to compressing
// a large sighting):
//
//	pack file:
//
//	 0                               8
//	 +-------------------------------+
//	 | magic "HELMPK01"              |   file header, 8 bytes
//	 +-------------------------------+
//	 | frame | frame | ...               frames follow each other, unaligned
//
//	frame (at the Offset its event records):
//
//	 0       4       8                                       40
//	 +-------+-------+---------------------------------------+--------------------+
//	 | size  | crc   | hash: BLAKE3-256 of the uncompressed  | zstd frame         |
//	 | u32   | u32   | JSON (32 bytes)                       | (size bytes)       |
//	 +-------+-------+---------------------------------------+--------------------+
//	 size = StoredSize, the compressed length        all integers little-endian
//	 crc  = CRC32C(size bytes, hash, zstd frame): bytes 0..4 and 8..40+size
//
// The crc is a cheap check that catches damage before decompression; the
// hash in the frame makes a pack readable without its events. Either way,
// blob or frame, the BLAKE3 hash of the decompressed bytes must equal the
// address: the artifact verifies itself when it is read.
//
// A crash after a pack frame but before its event leaves unreferenced
// bytes at the end of the pack: harmless, and the next frame is written
// after them. A frame whose write or fdatasync fails (a full disk) is
// truncated away before the error is returned, so the pack never ends in
// a partial frame that a later frame would be written after.
//
// Nothing here changes without a new magic (pack) or format byte (blob):
// voyages written by every released helm must keep opening.

const (
	// blobFormat is the first byte of a blob record. 0x01 is the binary
	// event format and JSON events begin with '{' or white space, so 0x02
	// is the next free byte.
	blobFormat = 0x02

	// InlineMax is the largest compressed artifact stored as a blob record
	// in the event log; a larger one goes to the pack. 32 KiB keeps a blob
	// record well inside one segment and one commit's write, while most
	// sightings (source files, command output, pull request summaries)
	// compress to less, so they cost no second file and no second
	// fdatasync.
	InlineMax = 32 << 10

	// packMagic opens every pack file: "HELMPK" names the file, "01" its
	// format version. A pack with another magic was written by another
	// program or a newer helm, and is refused rather than guessed at.
	packMagic = "HELMPK01"

	// frameHead is a pack frame's header: size (4), crc (4) and the
	// 32-byte BLAKE3 hash.
	frameHead = 4 + 4 + hashLen

	// hashLen is the length of a BLAKE3-256 digest.
	hashLen = 32

	// maxFrame bounds a frame's compressed size, as its u32 size field
	// does.
	maxFrame = 1<<32 - 1

	// PackName is the pack file's name in the voyage's directory.
	PackName = "artifacts.pack"
)
