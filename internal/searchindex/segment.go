package searchindex

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Covered is a voyage a segment covers, and the seq it covers it up to.
type Covered struct {
	ID  string
	Seq uint64
}

// Builder gathers the documents of a new segment in memory.
type Builder struct {
	voyages []Covered
	vidx    map[string]int
	docs    []docRec
	terms   map[string][]uint32
	// Bytes counts the text given to Text.
	Bytes int64
}

type docRec struct {
	voyage   int
	kind     Kind
	artifact string
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{vidx: map[string]int{}, terms: map[string][]uint32{}}
}

// Cover declares that the segment covers voyage id up to seq: whatever
// documents of it are added are all it holds as of seq. A voyage covered
// with no documents is one known to hold nothing to find.
func (b *Builder) Cover(id string, seq uint64) {
	if i, ok := b.vidx[id]; ok {
		b.voyages[i].Seq = seq
		return
	}
	b.vidx[id] = len(b.voyages)
	b.voyages = append(b.voyages, Covered{ID: id, Seq: seq})
}

// Doc adds a document of a voyage covered (Cover first) and returns its
// number, for Text.
func (b *Builder) Doc(voyage string, kind Kind, artifact string) int {
	v, ok := b.vidx[voyage]
	if !ok {
		b.Cover(voyage, 0)
		v = b.vidx[voyage]
	}
	b.docs = append(b.docs, docRec{voyage: v, kind: kind, artifact: artifact})
	return len(b.docs) - 1
}

// Text indexes the terms of s as held by document doc.
func (b *Builder) Text(doc int, s string) {
	b.Bytes += int64(len(s))
	d := uint32(doc)
	Terms(s, func(t []byte) {
		p, ok := b.terms[string(t)]
		if !ok {
			b.terms[string(t)] = []uint32{d}
			return
		}
		if p[len(p)-1] != d {
			b.terms[string(t)] = append(p, d)
		}
	})
}

// Len returns how many documents the builder holds.
func (b *Builder) Len() int { return len(b.docs) }

// Encode writes the segment to w.
func (b *Builder) Encode(w io.Writer) (int64, error) {
	var out []byte
	out = append(out, magic...)
	sec := [4][2]uint64{}

	start := len(out)
	for _, v := range b.voyages {
		out = appendString(out, v.ID)
		out = binary.AppendUvarint(out, v.Seq)
	}
	sec[0] = [2]uint64{uint64(start), uint64(len(out) - start)}
	vcrc := checksum(out[start:])

	// Postings first into their own buffer: the dict needs their offsets.
	terms := make([]string, 0, len(b.terms))
	for t := range b.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var post []byte
	var dict [][]byte
	for _, t := range terms {
		p := b.terms[t]
		off := len(post)
		prev := uint32(0)
		for _, d := range p {
			post = binary.AppendUvarint(post, uint64(d-prev))
			prev = d
		}
		var e []byte
		e = appendString(e, t)
		e = binary.AppendUvarint(e, uint64(off))
		e = binary.AppendUvarint(e, uint64(len(post)-off))
		e = binary.AppendUvarint(e, uint64(len(p)))
		e = binary.LittleEndian.AppendUint32(e, checksum(post[off:]))
		dict = append(dict, binary.LittleEndian.AppendUint32(e, checksum(e)))
	}
	docs := make([][]byte, len(b.docs))
	for i, d := range b.docs {
		var e []byte
		e = binary.AppendUvarint(e, uint64(d.voyage))
		e = append(e, byte(d.kind))
		e = appendString(e, d.artifact)
		docs[i] = binary.LittleEndian.AppendUint32(e, checksum(e))
	}
	var err error
	if out, sec[1], err = appendTable(out, docs); err != nil {
		return 0, err
	}
	if out, sec[2], err = appendTable(out, dict); err != nil {
		return 0, err
	}
	sec[3] = [2]uint64{uint64(len(out)), uint64(len(post))}
	out = append(out, post...)

	f := len(out)
	for _, s := range sec {
		out = binary.LittleEndian.AppendUint64(out, s[0])
		out = binary.LittleEndian.AppendUint64(out, s[1])
	}
	for _, n := range []int{len(b.voyages), len(b.docs), len(terms)} {
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	out = binary.LittleEndian.AppendUint32(out, vcrc)
	out = binary.LittleEndian.AppendUint32(out, 0) // reserved
	out = binary.LittleEndian.AppendUint32(out, 0) // reserved
	out = binary.LittleEndian.AppendUint32(out, checksum(out[f:]))
	out = append(out, magic...)
	n, err := w.Write(out)
	return int64(n), err
}

// appendTable appends entries as a table: n+1 u32 offsets (relative to
// the end of the offsets), then the entries.
func appendTable(out []byte, entries [][]byte) ([]byte, [2]uint64, error) {
	start := len(out)
	off := 0
	for _, e := range entries {
		out = binary.LittleEndian.AppendUint32(out, uint32(off))
		off += len(e)
		if off > math.MaxUint32 {
			return nil, [2]uint64{}, fmt.Errorf("search index: a segment's table outgrows 4 GiB: index fewer voyages at once")
		}
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(off))
	for _, e := range entries {
		out = append(out, e...)
	}
	return out, [2]uint64{uint64(start), uint64(len(out) - start)}, nil
}

// Segment is an opened segment: its footer and voyages read and checked,
// its documents, dictionary and postings read on demand.
type Segment struct {
	r       io.ReaderAt
	voyages []Covered
	sec     [4][2]uint64
	nDocs   uint64
	nTerms  uint64
}

// Decode opens the segment r holds (size bytes): it reads and checks the
// footer and the voyages section. An error matches ErrMalformed when the
// bytes are not a segment.
func Decode(r io.ReaderAt, size int64) (*Segment, error) {
	if size < int64(len(magic)+footerLen) || size > maxSegment {
		return nil, fmt.Errorf("%w: %d bytes is no segment's size", ErrMalformed, size)
	}
	head := make([]byte, len(magic))
	foot := make([]byte, footerLen)
	if _, err := r.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if _, err := r.ReadAt(foot, size-footerLen); err != nil {
		return nil, err
	}
	if string(head) != magic || string(foot[footerLen-8:]) != magic {
		return nil, fmt.Errorf("%w: no segment's magic", ErrMalformed)
	}
	body := foot[:footerLen-12]
	if checksum(body) != binary.LittleEndian.Uint32(foot[footerLen-12:]) {
		return nil, fmt.Errorf("%w: footer checksum", ErrMalformed)
	}
	s := &Segment{r: r}
	end := uint64(len(magic))
	for i := range s.sec {
		off, n := binary.LittleEndian.Uint64(body[i*16:]), binary.LittleEndian.Uint64(body[i*16+8:])
		if off != end || n > uint64(size) || off+n > uint64(size-footerLen) {
			return nil, fmt.Errorf("%w: section %d at %d+%d", ErrMalformed, i, off, n)
		}
		s.sec[i] = [2]uint64{off, n}
		end = off + n
	}
	if end != uint64(size-footerLen) {
		return nil, fmt.Errorf("%w: sections end at %d, footer at %d", ErrMalformed, end, size-footerLen)
	}
	nv := uint64(binary.LittleEndian.Uint32(body[64:]))
	s.nDocs = uint64(binary.LittleEndian.Uint32(body[68:]))
	s.nTerms = uint64(binary.LittleEndian.Uint32(body[72:]))
	vcrc := binary.LittleEndian.Uint32(body[76:])
	if (s.nDocs+1)*4 > s.sec[1][1] || (s.nTerms+1)*4 > s.sec[2][1] || nv*2 > s.sec[0][1] {
		return nil, fmt.Errorf("%w: counts outgrow their sections", ErrMalformed)
	}
	vb := make([]byte, s.sec[0][1])
	if _, err := r.ReadAt(vb, int64(s.sec[0][0])); err != nil {
		return nil, err
	}
	if checksum(vb) != vcrc {
		return nil, fmt.Errorf("%w: voyages checksum", ErrMalformed)
	}
	rd := reader{b: vb}
	s.voyages = make([]Covered, 0, nv)
	for range nv {
		s.voyages = append(s.voyages, Covered{ID: rd.str(), Seq: rd.uvarint()})
	}
	if rd.bad || len(rd.b) != 0 {
		return nil, fmt.Errorf("%w: voyages section", ErrMalformed)
	}
	return s, nil
}

// Voyages returns the voyages the segment covers.
func (s *Segment) Voyages() []Covered { return s.voyages }

// entry reads entry i of table t (1 docs, 2 dict), checking its CRC.
func (s *Segment) entry(t int, i, n uint64) ([]byte, error) {
	if i >= n {
		return nil, fmt.Errorf("%w: entry %d of %d", ErrMalformed, i, n)
	}
	var offs [8]byte
	base := s.sec[t][0]
	if _, err := s.r.ReadAt(offs[:], int64(base+i*4)); err != nil {
		return nil, err
	}
	from, to := uint64(binary.LittleEndian.Uint32(offs[:])), uint64(binary.LittleEndian.Uint32(offs[4:]))
	data := (n + 1) * 4
	if from > to || to-from < 4 || to-from > 1<<16 || data+to > s.sec[t][1] {
		return nil, fmt.Errorf("%w: entry %d spans %d..%d", ErrMalformed, i, from, to)
	}
	e := make([]byte, to-from)
	if _, err := s.r.ReadAt(e, int64(base+data+from)); err != nil {
		return nil, err
	}
	body := e[:len(e)-4]
	if checksum(body) != binary.LittleEndian.Uint32(e[len(e)-4:]) {
		return nil, fmt.Errorf("%w: entry %d checksum", ErrMalformed, i)
	}
	return body, nil
}

// Doc returns document i and the index (in Voyages) of its voyage.
func (s *Segment) Doc(i uint32) (Doc, error) {
	e, err := s.entry(1, uint64(i), s.nDocs)
	if err != nil {
		return Doc{}, err
	}
	rd := reader{b: e}
	v := rd.uvarint()
	k := Kind(rd.byte1())
	a := rd.str()
	if rd.bad || len(rd.b) != 0 || v >= uint64(len(s.voyages)) || (k != KindEntries && k != KindArtifact) {
		return Doc{}, fmt.Errorf("%w: document %d", ErrMalformed, i)
	}
	return Doc{Voyage: s.voyages[v].ID, Kind: k, Artifact: a}, nil
}

type dictEntry struct {
	term            string
	off, len, count uint64
	crc             uint32
}

func (s *Segment) dictAt(i uint64) (dictEntry, error) {
	e, err := s.entry(2, i, s.nTerms)
	if err != nil {
		return dictEntry{}, err
	}
	rd := reader{b: e}
	d := dictEntry{term: rd.str(), off: rd.uvarint(), len: rd.uvarint(), count: rd.uvarint(), crc: rd.u32()}
	if rd.bad || len(rd.b) != 0 || d.off > s.sec[3][1] || d.len > s.sec[3][1]-d.off || d.count > d.len || d.count > s.nDocs {
		return dictEntry{}, fmt.Errorf("%w: term %d", ErrMalformed, i)
	}
	return d, nil
}

// Postings returns, ascending, the documents holding term (none when it
// holds no such term).
func (s *Segment) Postings(term string) ([]uint32, error) {
	lo, hi := uint64(0), s.nTerms
	var found *dictEntry
	for lo < hi && found == nil {
		mid := lo + (hi-lo)/2
		d, err := s.dictAt(mid)
		if err != nil {
			return nil, err
		}
		switch c := strings.Compare(d.term, term); {
		case c == 0:
			found = &d
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	if found == nil {
		return nil, nil
	}
	b := make([]byte, found.len)
	if _, err := s.r.ReadAt(b, int64(s.sec[3][0]+found.off)); err != nil {
		return nil, err
	}
	if checksum(b) != found.crc {
		return nil, fmt.Errorf("%w: postings of %q", ErrMalformed, term)
	}
	out := make([]uint32, 0, found.count)
	rd := reader{b: b}
	prev := uint64(0)
	for range found.count {
		prev += rd.uvarint()
		if rd.bad || prev >= s.nDocs || (len(out) > 0 && prev <= uint64(out[len(out)-1])) {
			return nil, fmt.Errorf("%w: postings of %q", ErrMalformed, term)
		}
		out = append(out, uint32(prev))
	}
	if len(rd.b) != 0 {
		return nil, fmt.Errorf("%w: postings of %q", ErrMalformed, term)
	}
	return out, nil
}

// NumDocs returns how many documents the segment holds.
func (s *Segment) NumDocs() int { return int(s.nDocs) }

// All calls fn with every document and its terms, for a merge: the
// documents in order, each with the terms that hold it.
func (s *Segment) terms(fn func(term string, docs []uint32) error) error {
	for i := range s.nTerms {
		d, err := s.dictAt(i)
		if err != nil {
			return err
		}
		p, err := s.Postings(d.term)
		if err != nil {
			return err
		}
		if err := fn(d.term, p); err != nil {
			return err
		}
	}
	return nil
}
