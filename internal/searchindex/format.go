// Package searchindex is helm's content index: which words appear in
// which voyage's entries and sightings, so that a search answers from a few
// small reads instead of opening every voyage.
//
// The index is derived data, never evidence: it says where to look, and
// package search re-checks every hit against the voyage's log before
// showing it. A voyage the index cannot vouch for (its log moved past what
// the index covers, or the index is malformed) is searched by scanning its
// log. So the index may lag, be lost, be damaged or be forged: a search is
// slower then, never wrong in what it shows.
//
// On disk (a home's search/ directory, 0700, files 0600):
//
//	MANIFEST      the segments in force, oldest first; replaced whole by
//	              an atomic rename (written, synced, renamed, dir synced)
//	NNNNNNNN.seg  immutable segments, each written and synced before the
//	              MANIFEST that names it
//	LOCK          the writers' lock (flock); readers take none
//
// A segment covers some voyages, each up to a sequence number: it holds
// the documents (a voyage's entries as one document, each stowed artifact
// as one) of those voyages as they were at that seq. The newest segment
// that covers a voyage owns it: older segments' documents of that voyage
// are ignored, so re-indexing a voyage after a jettison forgets what was
// jettisoned without rewriting older segments. Merging segments (LSM
// style) drops the superseded documents.
//
// A segment file:
//
//	magic "helmsix1" (8 bytes)
//	voyages   n × (uvarint len, id, uvarint seq)
//	docs      u32 offsets[n] (from the end of the offsets) then n × doc:
//	          uvarint voyage index, kind byte, uvarint len, artifact hash,
//	          uvarint len, mark key
//	dict      u32 offsets[n] then n × term, sorted by term:
//	          uvarint len, term, uvarint postings offset, uvarint postings
//	          length, uvarint count, u32 CRC-32C of the postings bytes
//	postings  per term: count × uvarint delta of ascending doc numbers
//	footer    4 × (u64 offset, u64 length) of the sections, u32 counts of
//	          voyages, docs and terms, u32 CRC-32C of voyages, docs and
//	          dict, u32 CRC-32C of the footer so far, magic again
//
// Opening a segment checks the footer and the voyages, docs and dict
// sections (their CRCs); a term's postings are checked when read. A CRC
// stops accidents, not an adversary (who can recompute it): against a
// forged segment, search's re-check of each hit is what holds.
package searchindex

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Names in an index directory.
const (
	// Dir is the index's directory under a home.
	Dir = "search"
	// ManifestName names the segments in force.
	ManifestName = "MANIFEST"
	lockName     = "LOCK"
	segSuffix    = ".seg"
)

const (
	magic = "helmsix1"
	// footerLen: 4 sections × 16, 3 counts × 4, 3 CRCs × 4, footer CRC 4,
	// magic 8.
	footerLen = 4*16 + 3*4 + 3*4 + 4 + 8
	// MaxTermLen is the longest term indexed, in bytes: a longer run of
	// letters (a hash, base64) is no word anyone searches for, and
	// bounding it bounds the dictionary.
	MaxTermLen = 48
	// maxSegment bounds a segment file (and any section in it) so that a
	// forged length cannot make a reader allocate without bound.
	maxSegment = 1 << 40
)

// ErrMalformed says an index file does not decode: a reader treats the
// whole index as unable to vouch for anything (every voyage is scanned),
// and the next reindex rewrites it.
var ErrMalformed = errors.New("search index malformed")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Kind says what a document is.
type Kind byte

// The kinds of document.
const (
	// KindEntries is a voyage's logbook entries, its intent and its
	// reasons, as one document.
	KindEntries Kind = 1
	// KindArtifact is one stowed artifact: a sighting's text.
	KindArtifact Kind = 2
)

// Doc is one indexed document: a voyage's entries, or one of its
// artifacts (its hash, and the key of the mark it was a sighting of).
type Doc struct {
	Voyage   string
	Kind     Kind
	Artifact string
	Mark     string
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader walks a byte slice; the first failure sticks and every later
// read returns zero values.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str() string { return string(r.bytes(r.uvarint())) }

func (r *reader) byte1() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
