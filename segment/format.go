package segment

// On-disk format.
//
// A log is a directory of segment files named by the sequence number of
// their first record, zero-padded to 20 digits so that lexical order is
// numeric order: 00000000000000000001.seg, 00000000000000004097.seg, ...
// beside them, WATERMARK (see below) and LOCK (the writers' flock; empty).
//
// Every segment starts with a file header. Format 2 (written today):
//
//	 0       4       8       12      16      20      24      28      32
//	 +-------+-------+-------+-------+-------+-------+-------+-------+
//	 |  magic "HELMSEG\n"    |version| flags |   first seq   | seed  | 0     |
//	 +-------+-------+-------+-------+-------+-------+-------+-------+
//	 |          log id: SHA-256 of the log's identity (32 bytes)     |
//	 +-------+-------+-------+-------+-------+-------+-------+-------+
//	 |   0   | hcrc  |                        hcrc = CRC32C(bytes 0..68)
//	 +-------+-------+   72 bytes
//
// Format 1 (read, never written) is the first 32 bytes alone, with
// hcrc = CRC32C(bytes 0..28) in bytes 28..32 and no log id.
//
// The header is followed by frames, each starting on an 8-byte boundary:
//
//	 0       4       8               16      20      24
//	 +-------+-------+-------+-------+-------+-------+---------------------+-----+
//	 | hcrc  |  len  |      seq      |  idx  |  sum  | data (len bytes)    | pad |
//	 +-------+-------+-------+-------+-------+-------+---------------------+-----+
//	 hcrc = CRC32C(bytes 4..24)            pad = zeros up to the next multiple of 8
//	 idx  = position of the frame in its commit unit; bit 31 set on the unit's last frame
//	 sum  = CRC32C(data) continued from the previous frame's sum (the segment
//	        header's seed for the first frame): a hash chain
//
// All integers are little-endian.
//
// The chain's genesis is the log's identity: the first segment's seed is
// CRC32C(log id) (format 1: 0), and every later segment's seed is the
// previous segment's last sum. Every format-2 header carries the log id, so
// a segment copied from another log is refused by its header, and one
// whose header was edited to match breaks the chain. The first segment
// must start at seq 1; a missing middle segment leaves a gap in the names
// that the chain walk finds.
//
// Reclaimed records (format 3). A record's bytes can be reclaimed
// (Log.Reclaim: the evidence of a jettisoned artifact) without touching the
// chain. Its frame is rewritten as a stub: idx bit 30 set, and 8 data bytes
// in place of the record's,
//
//	 0       4       8
//	 +-------+-------+
//	 |  len  |  crc  |   len = the record's length, crc = CRC32C(record)
//	 +-------+-------+
//
// and the same seq, idx, last bit and sum as the frame it replaces. The sum
// still proves the chain: CRC32C continued from prev over the record equals
// CRC32C(prev continued over len zero bytes) ^ CRC32C(len zero bytes) ^ crc,
// since CRC32C is affine in its input (the zlib crc32_combine identity), so
// a reader checks a stub against the chain with the len and crc it keeps,
// and every later frame's sum is unchanged. A segment holding stubs is
// rewritten whole under a temporary name and renamed over the old one (a
// crash leaves the old file or the new, both checking out to the same
// chain), with version 3 in its header so that a build that does not know
// stubs refuses it as newer instead of calling it damaged. Only sealed
// format-2 segments are rewritten; format-1 segments are left as they are.
//
// The BLAKE3 chain (format 4). Every record is linked by package chain:
// link(n) = chain.Next(link(n-1), seq, len, BLAKE3(record)), from
// chain.Genesis(Options.Identity). Formats 1 to 3 store only the CRC32C
// chain above, which anyone can recompute; format 4 stores the BLAKE3
// links too, beside it (frames are unchanged, and keep detecting
// accidents as before):
//
//   - the header is 104 bytes: bytes 0..64 as format 2, then the link
//     before the segment's first record (64..96), 4 zero bytes, and hcrc =
//     CRC32C(bytes 0..100) at 100. The first segment's link is the
//     genesis; every later one's is the previous segment's last link.
//   - a stub (see "Reclaimed records") holds 40 data bytes: len, crc and
//     the record's BLAKE3 digest, so the chain continues over it. A
//     format-4 segment rewritten with stubs stays format 4. A stub may
//     also be appended as one (Log.AppendRecords: a copy of a record
//     reclaimed elsewhere, whose bytes never reach this log): it is
//     written in its unit as any frame is, with crc 0 (no CRC of those
//     bytes is known), and checks out as any stub; only format-4 segments
//     take one. A format-3
//     stub keeps only len and crc: the chain continues over it with a
//     weak digest, BLAKE3("helm weak stub 1\x00" ‖ le32 len ‖ le32 crc)
//     (weakDigest) — weak because the record's bytes are gone and only a
//     CRC ever named them.
//   - a WATERMARK slot of a format-4 log is 72 bytes, magic "HELMWM4\n":
//     last, segment, sum as before, 4 zero bytes, the link at last
//     (32..64), wcrc = CRC32C(bytes 0..64) at 64, 4 zero bytes. Slots of
//     the older layout (magic "HELMWMK\n") are still read.
//
// Open reads the last segment from the link its header carries, so it
// knows the head (Log.Head) without reading the log, and checks the
// watermark's link where it passes its seq: an edit at or below the
// watermark that did not also recompute the stored links is damage.
// Verify recomputes the chain from the genesis over every segment and
// checks every header's link and the watermark's. A Mark carries the link
// at its seq (Mark.Hash), so ScanAfter and OpenAfter continue the chain
// from it. Readers (Scan, Follow) do not compute links. A scan that
// does shares the records' digests with a second goroutine (ahead.go).
//
// A log whose last segment is format 1 to 3 goes on in format 2 (no
// silent change of format on write); its head is computed by reading it
// from the first record, once. Log.Rechain moves it on: it seals the last
// segment and creates a format-4 one holding the rechain's unit (written
// whole, fsynced, renamed: a crash leaves the old log or the rechained
// one). The chain's definition does not change at a rechain: the head
// after it commits to the whole history.
//
// The last segment is preallocated with zeros after its data (prealloc.go):
// a zero frame header at a unit boundary ends the log. Sealed segments end
// exactly after their last frame.
//
// A commit unit is everything one Commit group wrote with one write and one
// fdatasync. Its records become visible only when its last frame (idx bit 31)
// is present and every frame of it checks out, so a unit torn by a crash is
// invisible and cut as a whole: batches are atomic.
//
// The header checksum covers the length, so a garbage length is never
// trusted (etcd #14098). The sum covers the data and, through the chain, every
// earlier frame of the log: segments carry the previous segment's last sum as
// their seed, so an edited, reordered, swapped or dropped frame or segment
// breaks the chain and is reported by Verify and by every scan.
//
// The watermark.
//
// A checksum cannot tell a torn write from damage to a unit that was
// acknowledged: a bit flip in a frame whose bytes end in zeros across a
// sector boundary looks exactly like a write whose last sectors never
// landed, and a segment file deleted or rolled back to an older copy
// leaves a log that checks out, only shorter. So the log also records how
// far it has been acknowledged, in WATERMARK:
//
//	 0        8        16       24   28   32
//	 +--------+--------+--------+----+----+
//	 | magic  |  last  | segment| sum|wcrc|   a slot: 32 bytes
//	 +--------+--------+--------+----+----+   magic "HELMWMK\n", wcrc = CRC32C(bytes 0..28)
//
// The file holds two slots, at offsets 0 and 512 (different sectors).
// After every commit unit, once its fdatasync has returned and still under
// the writer lock, the writer overwrites one slot (alternating) with the
// unit's last seq, the first seq of its segment and the chain sum after it.
// The slot is written, not synced: it costs a pwrite, no fsync. The
// reasoning:
//
//   - It is written only after the fdatasync of everything up to it
//     returned. So whenever a slot reached the disk, every unit up to its
//     seq was durable: a watermark on disk is a lower bound on what was
//     acknowledged, never more.
//   - So at open, a unit at or below the watermark that fails its checks is
//     damage, never a torn write: it is a *CorruptionError, and nothing is
//     cut. Only a unit above the watermark may be a torn tail (judged as
//     before: the file ends inside it, or its bytes end in zeroed sectors).
//   - A log whose complete units end below the watermark was truncated, or
//     lost segments, or had one rolled back: a *CorruptionError. The chain
//     sum in the slot must match the log's at that seq, so a rolled-back
//     segment that still reaches the seq (rewritten differently) fails too.
//   - A slot torn by a crash fails its wcrc and is ignored; the other slot
//     holds the watermark of an earlier unit, still a valid lower bound.
//     Each slot was written whole at some point, so any valid slot is.
//   - What a lost slot write costs: if power fails after a unit's fdatasync
//     but before its slot reaches the disk, that unit sits above the
//     watermark and is judged by the torn-write rules alone — the window
//     the watermark cannot close without an fsync per commit.
//
// The writer creates WATERMARK (written whole under a temporary name,
// fsynced, renamed, directory fsynced) before it creates the first format-2
// segment of a log, so a log holding a format-2 segment without a WATERMARK
// lost it: a *CorruptionError. A log written only by format 1 has none; the
// first write to it creates one and moves on to a format-2 segment (the
// upgrade).

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/helmlog/helm/chain"
)

const (
	// fileMagic identifies a helm segment file. The trailing newline makes a
	// file that went through a text-mode transfer fail loudly.
	fileMagic = "HELMSEG\n"

	// formatVersion is bumped on any incompatible change; a reader refuses a
	// newer version instead of misreading it. Versions 1 (no log id, genesis
	// 0), 2 and 3 are still read, and a log whose last segment is format 2
	// or 3 goes on in format 2 (legacyVersion) until Rechain moves it on.
	formatVersion = 4

	// legacyVersion is the format a writer appends to a log whose last
	// segment an older format wrote: no silent change of format on write.
	legacyVersion = 2

	// reclaimedVersion is the version of a segment rewritten with stubs
	// (see "Reclaimed records"): format 2 plus stub frames. Readers read it;
	// writers never create it, they rewrite sealed segments to it.
	reclaimedVersion = 3

	// fileHeaderSize is the size of a format-4 header: 104 keeps the first
	// frame 8-aligned and holds a 32-byte log id and a 32-byte chain link.
	fileHeaderSize = 104

	// fileHeaderSizeV2 is the size of a format-2 (and 3) header.
	fileHeaderSizeV2 = 72

	// fileHeaderSizeV1 is the size of a format-1 header.
	fileHeaderSizeV1 = 32

	// watermarkName is the file that records how far the log was
	// acknowledged; watermarkSlot is the distance between its two slots (a
	// sector, so a torn slot write cannot touch the other).
	watermarkName    = "WATERMARK"
	watermarkMagic   = "HELMWMK\n"
	watermarkSlot    = 512
	watermarkSize    = 2 * watermarkSlot
	watermarkLen     = 72 // a format-4 slot; watermarkLenV2 for an older one
	watermarkLenV2   = 32
	watermarkMagicV4 = "HELMWM4\n"

	// frameHeaderSize holds hcrc, len, seq, idx and sum; 24 keeps frames
	// 8-aligned, which lets recovery probe only aligned offsets for frames.
	frameHeaderSize = 24

	// frameAlign is the frame alignment. 8 bounds padding to 7 bytes while
	// cutting the number of offsets recovery must probe by 8x.
	frameAlign = 8

	// lastInUnit marks the final frame of a commit unit in idx.
	lastInUnit = 1 << 31

	// stubFrame marks, in idx, a frame whose record was reclaimed: its
	// data is the record's length and CRC32C (format 3).
	stubFrame = 1 << 30

	// stubSize is the data length of a format-3 stub frame: len and CRC.
	stubSize = 8

	// stubSizeV4 is the data length of a format-4 stub frame: len, CRC and
	// the record's BLAKE3 digest.
	stubSizeV4 = 8 + chain.Size

	// maxFormatRecord is the largest record the format accepts (1 GiB). The
	// len field could say 4 GiB, but a reader must hold a whole record in
	// memory; 1 GiB bounds what a corrupt-but-checksummed header can demand.
	maxFormatRecord = 1 << 30

	// DefaultSegmentSize is the rotation threshold when Options.SegmentSize
	// is zero: large enough that rotation (two fsyncs) is rare, small enough
	// that Open's tail scan of the last segment stays in the tens of ms.
	DefaultSegmentSize = 64 << 20

	// DefaultMaxRecordSize is the record limit when Options.MaxRecordSize is
	// zero. It equals DefaultSegmentSize so a maximal record fits one
	// default segment; larger records are refused with ErrTooLarge unless
	// MaxRecordSize is raised (up to 1 GiB).
	DefaultMaxRecordSize = 64 << 20

	// sectorSize is the write atomicity unit assumed by torn-write
	// detection: a crash loses whole sectors, which read back as zeros.
	sectorSize = 512

	segmentExt = ".seg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentName returns the file name of the segment whose first record is seq.
func segmentName(first uint64) string {
	return fmt.Sprintf("%020d%s", first, segmentExt)
}

// parseSegmentName returns the first seq of a segment file name.
func parseSegmentName(name string) (uint64, bool) {
	if len(name) != 20+len(segmentExt) || !strings.HasSuffix(name, segmentExt) {
		return 0, false
	}
	n, err := strconv.ParseUint(name[:20], 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// LogID is a log's identity as its segment headers carry it: the SHA-256
// of Options.Identity, or all zeros for a log opened without one.
type LogID [32]byte

// idOf returns the LogID of an identity.
func idOf(identity string) LogID {
	if identity == "" {
		return LogID{}
	}
	return sha256.Sum256([]byte(identity))
}

// genesis is the chain seed of a log's first segment: CRC32C of the log id
// (format 2), or 0 (format 1).
func genesis(version uint32, id LogID) uint32 {
	if version < 2 {
		return 0
	}
	return crc32.Checksum(id[:], castagnoli)
}

type fileHeader struct {
	version uint32
	first   uint64
	seed    uint32
	id      LogID      // zero for format 1
	link    chain.Hash // format 4: the BLAKE3 link before the first record
}

// size is the header's size on disk: where the first frame starts.
func (h fileHeader) size() int64 {
	switch {
	case h.version < 2:
		return fileHeaderSizeV1
	case h.version < 4:
		return fileHeaderSizeV2
	}
	return fileHeaderSize
}

func encodeFileHeader(h fileHeader) []byte {
	if h.version == 0 {
		h.version = formatVersion
	}
	b := make([]byte, h.size())
	copy(b, fileMagic)
	binary.LittleEndian.PutUint32(b[8:], h.version)
	binary.LittleEndian.PutUint32(b[12:], 0)
	binary.LittleEndian.PutUint64(b[16:], h.first)
	binary.LittleEndian.PutUint32(b[24:], h.seed)
	copy(b[32:64], h.id[:])
	if h.version >= 4 {
		copy(b[64:96], h.link[:])
		binary.LittleEndian.PutUint32(b[100:], crc32.Checksum(b[:100], castagnoli))
		return b
	}
	binary.LittleEndian.PutUint32(b[68:], crc32.Checksum(b[:68], castagnoli))
	return b
}

// decodeFileHeader returns a reason string when b is not a valid header.
// b holds at least the first fileHeaderSize bytes of the file, or all of
// it when shorter.
func decodeFileHeader(b []byte) (fileHeader, string) {
	if len(b) < fileHeaderSizeV1 {
		return fileHeader{}, fmt.Sprintf("file header truncated (%d bytes)", len(b))
	}
	if string(b[:8]) != fileMagic {
		return fileHeader{}, fmt.Sprintf("not a helm segment file (magic %q)", b[:8])
	}
	h := fileHeader{version: binary.LittleEndian.Uint32(b[8:])}
	sumAt := func(n int) bool {
		return len(b) >= n+4 && crc32.Checksum(b[:n], castagnoli) == binary.LittleEndian.Uint32(b[n:])
	}
	switch h.version {
	case 1:
		if !sumAt(28) {
			return fileHeader{}, "file header checksum mismatch"
		}
	case 2, reclaimedVersion, formatVersion:
		size := int(h.size())
		if len(b) < size {
			return fileHeader{}, fmt.Sprintf("file header truncated (%d of %d bytes)", len(b), size)
		}
		if !sumAt(size - 4) {
			return fileHeader{}, "file header checksum mismatch"
		}
		copy(h.id[:], b[32:64])
		if h.version >= 4 {
			if binary.LittleEndian.Uint32(b[96:]) != 0 {
				return fileHeader{}, "file header reserved bytes are not zero"
			}
			copy(h.link[:], b[64:96])
		}
	default:
		// A header whose checksum holds under any layout was written so:
		// a newer format. Otherwise the version field itself is damaged.
		if sumAt(28) || sumAt(68) || sumAt(100) {
			return fileHeader{}, fmt.Sprintf("segment format version %d, this build reads versions 1 to %d (written by a newer version: upgrade to read it)", h.version, formatVersion)
		}
		return fileHeader{}, "file header checksum mismatch"
	}
	if f := binary.LittleEndian.Uint32(b[12:]); f != 0 {
		return fileHeader{}, fmt.Sprintf("unknown file header flags %#x", f)
	}
	h.first, h.seed = binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint32(b[24:])
	if h.first == 0 {
		return fileHeader{}, "file header first seq is 0"
	}
	return h, ""
}

// watermark is what one WATERMARK slot holds: the last seq of an
// acknowledged unit, the first seq of the segment holding it, and the
// chain sum after it; a format-4 slot (linked) also the BLAKE3 link after
// it. The zero watermark says nothing was acknowledged.
type watermark struct {
	last    uint64
	segment uint64
	sum     uint32
	link    chain.Hash
	linked  bool // a format-4 slot: link is the chain's link at last
}

func encodeWatermark(w watermark) []byte {
	return putWatermark(make([]byte, watermarkLen), w)
}

// putWatermark encodes w into b (at least watermarkLen bytes) and returns
// the encoding, a prefix of b: the writer reuses one buffer per Log.
func putWatermark(b []byte, w watermark) []byte {
	if !w.linked {
		b := b[:watermarkLenV2]
		clear(b)
		copy(b, watermarkMagic)
		binary.LittleEndian.PutUint64(b[8:], w.last)
		binary.LittleEndian.PutUint64(b[16:], w.segment)
		binary.LittleEndian.PutUint32(b[24:], w.sum)
		binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
		return b
	}
	b = b[:watermarkLen]
	clear(b)
	copy(b, watermarkMagicV4)
	binary.LittleEndian.PutUint64(b[8:], w.last)
	binary.LittleEndian.PutUint64(b[16:], w.segment)
	binary.LittleEndian.PutUint32(b[24:], w.sum)
	copy(b[32:64], w.link[:])
	binary.LittleEndian.PutUint32(b[64:], crc32.Checksum(b[:64], castagnoli))
	return b
}

// decodeWatermark decodes one slot, of either layout (told by its magic);
// ok is false for a slot that is empty, torn or damaged.
func decodeWatermark(b []byte) (watermark, bool) {
	if len(b) < watermarkLenV2 {
		return watermark{}, false
	}
	var w watermark
	switch string(b[:8]) {
	case watermarkMagic:
		if crc32.Checksum(b[:28], castagnoli) != binary.LittleEndian.Uint32(b[28:]) {
			return watermark{}, false
		}
	case watermarkMagicV4:
		if len(b) < watermarkLen || crc32.Checksum(b[:64], castagnoli) != binary.LittleEndian.Uint32(b[64:]) ||
			binary.LittleEndian.Uint32(b[28:]) != 0 || binary.LittleEndian.Uint32(b[68:]) != 0 {
			return watermark{}, false
		}
		copy(w.link[:], b[32:64])
		w.linked = true
	default:
		return watermark{}, false
	}
	w.last = binary.LittleEndian.Uint64(b[8:])
	w.segment = binary.LittleEndian.Uint64(b[16:])
	w.sum = binary.LittleEndian.Uint32(b[24:])
	return w, true
}

// weakDigest is what stands for the BLAKE3 digest of a record reclaimed
// in a format-3 segment, whose stub keeps only its length and CRC32C (see
// "Reclaimed records"): a digest of those. It is weak: the record's bytes
// are gone and only a CRC ever named them, so anyone can forge a record
// with the same stub.
func weakDigest(n uint32, crc uint32) chain.Hash {
	var b [len(weakTag) + 8]byte
	copy(b[:], weakTag)
	binary.LittleEndian.PutUint32(b[len(weakTag):], n)
	binary.LittleEndian.PutUint32(b[len(weakTag)+4:], crc)
	return chain.Digest(b[:])
}

const weakTag = "helm weak stub 1\x00"

// frameSize is the on-disk size of a frame carrying n data bytes.
func frameSize(n int) int {
	return (frameHeaderSize + n + frameAlign - 1) &^ (frameAlign - 1)
}

// appendFrame appends one encoded frame to dst and returns it with the new
// chain sum.
func appendFrame(dst []byte, seq uint64, idx uint32, last bool, prevSum uint32, data []byte) ([]byte, uint32) {
	sum := crc32.Update(prevSum, castagnoli, data)
	if last {
		idx |= lastInUnit
	}
	start := len(dst)
	n := frameSize(len(data))
	dst = append(dst, make([]byte, n)...)
	h := dst[start:]
	binary.LittleEndian.PutUint32(h[4:], uint32(len(data)))
	binary.LittleEndian.PutUint64(h[8:], seq)
	binary.LittleEndian.PutUint32(h[16:], idx)
	binary.LittleEndian.PutUint32(h[20:], sum)
	binary.LittleEndian.PutUint32(h[0:], crc32.Checksum(h[4:frameHeaderSize], castagnoli))
	copy(h[frameHeaderSize:], data)
	return dst, sum
}

// appendStub appends the stub of frame f (see "Reclaimed records"): same
// seq, idx, last bit and sum, with the record's length and CRC32C as data,
// and its BLAKE3 digest when digest is set (format 4).
func appendStub(dst []byte, f frame, recLen int, recCRC uint32, digest *chain.Hash) []byte {
	idx := f.idx | stubFrame
	if f.last {
		idx |= lastInUnit
	}
	n := stubSize
	if digest != nil {
		n = stubSizeV4
	}
	start := len(dst)
	dst = append(dst, make([]byte, frameSize(n))...)
	h := dst[start:]
	if digest != nil {
		copy(h[frameHeaderSize+8:], digest[:])
	}
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	binary.LittleEndian.PutUint64(h[8:], f.seq)
	binary.LittleEndian.PutUint32(h[16:], idx)
	binary.LittleEndian.PutUint32(h[20:], f.sum)
	binary.LittleEndian.PutUint32(h[0:], crc32.Checksum(h[4:frameHeaderSize], castagnoli))
	binary.LittleEndian.PutUint32(h[frameHeaderSize:], uint32(recLen))
	binary.LittleEndian.PutUint32(h[frameHeaderSize+4:], recCRC)
	return dst
}

// appendNewStub appends the stub of a record of n bytes whose BLAKE3
// digest is digest, appended without its bytes (Log.AppendRecords), as
// the frame seq of its unit at idx, chained from prevSum; it returns dst
// and the chain's sum after it. Its CRC32C of the record is 0: no CRC of
// bytes that never reached the log is known.
func appendNewStub(dst []byte, seq uint64, idx uint32, last bool, prevSum uint32, n int, digest chain.Hash) ([]byte, uint32) {
	sum := chainOver(prevSum, n, 0)
	return appendStub(dst, frame{seq: seq, idx: idx, last: last, sum: sum}, n, 0, &digest), sum
}

// ChainGenesis returns the hash chain's sum before the first record of the
// log whose identity is identity, as this format computes it: so that
// another store of the same records (package store) keeps the same chain.
func ChainGenesis(identity string) uint32 { return genesis(legacyVersion, idOf(identity)) }

// ChainNext returns the hash chain's sum after a record, continued from
// the sum before it (ChainGenesis for the first).
func ChainNext(prev uint32, record []byte) uint32 { return crc32.Update(prev, castagnoli, record) }

// chainOver returns the chain sum after a record of n bytes whose CRC32C
// is crc, continued from prev, without the record's bytes: CRC32C is
// affine, so prev continued over the record equals prev continued over n
// zeros, xor the CRC32C of n zeros, xor crc.
func chainOver(prev uint32, n int, crc uint32) uint32 {
	var zeros [4096]byte
	shifted, zcrc := prev, uint32(0)
	for n > 0 {
		k := min(n, len(zeros))
		shifted = crc32.Update(shifted, castagnoli, zeros[:k])
		zcrc = crc32.Update(zcrc, castagnoli, zeros[:k])
		n -= k
	}
	return shifted ^ zcrc ^ crc
}

// frame is a decoded frame; data aliases the decoded buffer.
type frame struct {
	seq  uint64
	idx  uint32 // without the lastInUnit and stubFrame bits
	last bool
	stub bool // the record was reclaimed: data is nil
	sum  uint32
	data []byte
	// A stub's record: its length and BLAKE3 digest (a weakDigest for a
	// format-3 stub).
	recLen int
	digest chain.Hash
}

// link returns the chain link after f, continued from prev.
func (f *frame) link(prev chain.Hash) chain.Hash {
	if f.stub {
		return chain.Next(prev, f.seq, f.recLen, f.digest)
	}
	return chain.Link(prev, f.seq, f.data)
}

// unitStart is the seq of the first record of the frame's commit unit.
func (f frame) unitStart() uint64 { return f.seq - uint64(f.idx) }

// decodeStatus says why a frame did not decode.
type decodeStatus uint8

const (
	frameOK     decodeStatus = iota
	frameShort               // the buffer ends inside the frame
	frameZero                // the header is all zeros (unwritten space)
	frameHeader              // header checksum or field check failed
	frameBody                // data checksum (chain) or padding check failed
)

func (s decodeStatus) String() string {
	switch s {
	case frameOK:
		return "ok"
	case frameShort:
		return "incomplete frame"
	case frameZero:
		return "zero-filled frame header"
	case frameHeader:
		return "frame header checksum mismatch"
	case frameBody:
		return "record checksum mismatch (data or hash chain)"
	}
	return "unknown"
}

// decodeHeader checks only the frame header. It never trusts len before
// hcrc has been verified.
func decodeHeader(b []byte) (frame, int, decodeStatus) {
	if len(b) < frameHeaderSize {
		if allZero(b) {
			return frame{}, 0, frameZero
		}
		return frame{}, 0, frameShort
	}
	h := b[:frameHeaderSize]
	if crc32.Checksum(h[4:], castagnoli) != binary.LittleEndian.Uint32(h) {
		if allZero(h) {
			return frame{}, 0, frameZero
		}
		return frame{}, 0, frameHeader
	}
	n := binary.LittleEndian.Uint32(h[4:])
	idx := binary.LittleEndian.Uint32(h[16:])
	f := frame{
		seq:  binary.LittleEndian.Uint64(h[8:]),
		idx:  idx &^ (lastInUnit | stubFrame),
		last: idx&lastInUnit != 0,
		stub: idx&stubFrame != 0,
		sum:  binary.LittleEndian.Uint32(h[20:]),
	}
	if n > maxFormatRecord || f.seq == 0 || uint64(f.idx) >= f.seq || (f.stub && n != stubSize && n != stubSizeV4) {
		return frame{}, 0, frameHeader
	}
	return f, frameSize(int(n)), frameOK
}

// decodeFrame decodes the frame at the start of b, whose chain continues
// from prevSum. On success it returns the frame and its encoded size.
func decodeFrame(b []byte, prevSum uint32) (frame, int, decodeStatus) {
	f, size, st := decodeHeader(b)
	if st != frameOK {
		return f, 0, st
	}
	if len(b) < size {
		return f, 0, frameShort
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	data := b[frameHeaderSize : frameHeaderSize+n : frameHeaderSize+n]
	var sum uint32
	if f.stub {
		recLen, recCRC := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[4:])
		if recLen > maxFormatRecord {
			return f, 0, frameBody
		}
		sum = chainOver(prevSum, int(recLen), recCRC)
		f.recLen = int(recLen)
		if n == stubSizeV4 {
			copy(f.digest[:], data[8:])
		} else {
			f.digest = weakDigest(recLen, recCRC)
		}
	} else {
		f.data = data
		sum = crc32.Update(prevSum, castagnoli, data)
	}
	if sum != f.sum || !allZero(b[frameHeaderSize+n:size]) {
		return f, 0, frameBody
	}
	return f, size, frameOK
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
